package server

import (
	"context"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/vault"
	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/stages"
)

// DefaultNoveltyThreshold is the cosine similarity (bge-small-en-v1.5,
// passage against best chunk) at or above which vault_delta calls an item
// covered. The figure was measured on a private corpus — one person's notes
// and the facts later proposed for them — not on the demo vault or any public
// data set, so it is a starting point: measure your own vault and pass
// `threshold` when it differs.
const DefaultNoveltyThreshold = 0.745

// Limits of vault_delta.
const (
	MaxDeltaItems      = 100
	MaxDeltaItemBytes  = 8 << 10
	MaxDeltaTitleBytes = 1 << 10
)

// foreignShare is the share of an item's letters, in scripts the index's
// embedder was not trained on, above which it is unscored: an English model
// maps Cyrillic or Chinese text by script, not meaning (two unrelated
// Russian sentences score as near as two paraphrases), so a similarity for
// it would be noise either way.
const foreignShare = 0.2

// Delta statuses.
const (
	StatusCovered  = "covered"
	StatusNew      = "new"
	StatusLanguage = "unscored: language"
)

// DeltaResult is vault_delta's answer.
type DeltaResult struct {
	Threshold float64        `json:"threshold"`
	Model     string         `json:"model"`
	Items     []DeltaItem    `json:"items"`
	Counts    map[string]int `json:"counts"`
}

// DeltaItem is the verdict on one candidate, with the nearest chunk of the
// vault as evidence (absent for unscored items and an empty index).
type DeltaItem struct {
	Index      int      `json:"index"`
	Title      string   `json:"title,omitempty"`
	Status     string   `json:"status"`
	Similarity *float64 `json:"similarity,omitempty"`
	Path       string   `json:"path,omitempty"`
	NoteTitle  string   `json:"note_title,omitempty"`
	Heading    string   `json:"heading,omitempty"`
	Snippet    string   `json:"snippet,omitempty"`
	Reason     string   `json:"reason,omitempty"`
}

type candidate struct {
	title, text string
}

// deltaItems reads and checks the items parameter, naming the item and key
// at fault.
func deltaItems(a args) ([]candidate, error) {
	if !a.present("items") {
		return nil, fmt.Errorf("parameter %q is required", "items")
	}
	raw, ok := a.m["items"].([]any)
	if !ok {
		return nil, fmt.Errorf("parameter %q must be an array of {text, title?}, not %s", "items", jsonType(a.m["items"]))
	}
	if len(raw) == 0 || len(raw) > MaxDeltaItems {
		return nil, fmt.Errorf("parameter %q has %d items; give 1..%d", "items", len(raw), MaxDeltaItems)
	}
	out := make([]candidate, len(raw))
	for i, v := range raw {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("items[%d] must be an object {text, title?}, not %s", i, jsonType(v))
		}
		for k := range obj {
			if k != "text" && k != "title" {
				return nil, fmt.Errorf("items[%d]: unknown key %s (an item takes text, title)", i, vault.QuoteInput(k))
			}
		}
		text, ok := obj["text"].(string)
		if !ok {
			return nil, fmt.Errorf("items[%d].text must be a string, not %s", i, jsonType(obj["text"]))
		}
		if strings.TrimSpace(text) == "" {
			return nil, fmt.Errorf("items[%d].text is empty", i)
		}
		if len(text) > MaxDeltaItemBytes {
			return nil, fmt.Errorf("items[%d].text is %d bytes; the limit is %d", i, len(text), MaxDeltaItemBytes)
		}
		var title string
		if t, present := obj["title"]; present && t != nil {
			if title, ok = t.(string); !ok {
				return nil, fmt.Errorf("items[%d].title must be a string, not %s", i, jsonType(t))
			}
			if len(title) > MaxDeltaTitleBytes {
				return nil, fmt.Errorf("items[%d].title is %d bytes; the limit is %d", i, len(title), MaxDeltaTitleBytes)
			}
		}
		if !utf8.ValidString(text) || !utf8.ValidString(title) {
			return nil, fmt.Errorf("items[%d] is not valid UTF-8", i)
		}
		out[i] = candidate{title: strings.TrimSpace(title), text: strings.TrimSpace(text)}
	}
	return out, nil
}

// foreignScript says, for text mostly (more than foreignShare of its
// letters, all of them counted) in scripts the model does not read, which
// of them has the most letters; "" otherwise.
func foreignScript(text string, spec models.Spec) string {
	share, top := vault.CountScripts(text).Outside(spec.Covers)
	if share <= foreignShare {
		return ""
	}
	return top
}

// passage is what a candidate is embedded as: like a chunk, title then text.
func (c candidate) passage() string {
	if c.title == "" {
		return c.text
	}
	return c.title + "\n" + c.text
}

func deltaDef() mcp.Tool {
	return mcp.NewTool(ToolDelta,
		mcp.WithDescription("For each candidate item (say, facts from a conversation): does the vault already cover it? With the nearest note, heading and cosine as evidence. "+
			`Items in a script the embedding model does not know come back "unscored: language".`),
		mcp.WithArray("items", mcp.Required(), mcp.MinItems(1), mcp.MaxItems(MaxDeltaItems),
			mcp.Items(map[string]any{
				"type": "object",
				"properties": map[string]any{
					"text":  map[string]any{"type": "string", "minLength": 1, "maxLength": MaxDeltaItemBytes, "description": "The item."},
					"title": map[string]any{"type": "string", "maxLength": MaxDeltaTitleBytes, "description": "Optional."},
				},
				"required":             []string{"text"},
				"additionalProperties": false,
			}),
			mcp.Description("The candidates.")),
		mcp.WithNumber("threshold", mcp.Min(0), mcp.Max(1), mcp.Description(fmt.Sprintf("Cosine at which an item is covered (default %.3f).", DefaultNoveltyThreshold))),
		mcp.WithSchemaAdditionalProperties(false),
		readOnly("Check what the vault already covers"),
	)
}

func (s *Server) delta(ctx context.Context, a args) (DeltaResult, error) {
	items, err := deltaItems(a)
	if err != nil {
		return DeltaResult{}, err
	}
	threshold, err := a.float("threshold", 0, 1, DefaultNoveltyThreshold)
	if err != nil {
		return DeltaResult{}, err
	}
	h, release, err := s.acquire(ctx)
	if err != nil {
		return DeltaResult{}, err
	}
	defer release()
	emb, err := s.opts.Registry.Embedder(ctx, h.db.Embedder())
	if err != nil {
		return DeltaResult{}, fmt.Errorf("embedder for the index: %w", err)
	}
	spec, err := s.opts.Registry.Manifest().Lookup(emb.Name())
	if err != nil {
		return DeltaResult{}, err
	}
	out := DeltaResult{Threshold: threshold, Model: emb.Name(), Items: make([]DeltaItem, len(items)),
		Counts: map[string]int{StatusCovered: 0, StatusNew: 0, StatusLanguage: 0}}
	var texts []string
	var at []int
	for i, c := range items {
		out.Items[i] = DeltaItem{Index: i, Title: c.title}
		if sc := foreignScript(c.passage(), spec); sc != "" {
			out.Items[i].Status = StatusLanguage
			out.Items[i].Reason = fmt.Sprintf("mostly %s text: the embedder %s, trained on %s text, would score its script, not its meaning", sc, spec.Name, strings.Join(spec.Scripts, " and "))
			continue
		}
		texts = append(texts, c.passage())
		at = append(at, i)
	}
	if len(texts) > 0 {
		vecs, err := emb.EmbedPassages(ctx, texts)
		if err != nil {
			return DeltaResult{}, fmt.Errorf("embed the items: %w", err)
		}
		best := make([]index.Hit, len(vecs))
		found := make([]bool, len(vecs))
		var chunkIDs, noteIDs []int64
		for j, v := range vecs {
			res, err := h.db.Vector(ctx, index.VectorQuery{Vector: v, Mode: index.VectorExact, K: 1})
			if err != nil {
				return DeltaResult{}, err
			}
			hits := res.Hits
			if len(hits) > 0 {
				best[j], found[j] = hits[0], true
				chunkIDs = append(chunkIDs, hits[0].ChunkID)
				noteIDs = append(noteIDs, hits[0].NoteID)
			}
		}
		chunks, err := h.db.Chunks(ctx, chunkIDs)
		if err != nil {
			return DeltaResult{}, err
		}
		notes, err := h.db.Notes(ctx, noteIDs)
		if err != nil {
			return DeltaResult{}, err
		}
		for j, i := range at {
			it := &out.Items[i]
			if !found[j] {
				it.Status, it.Reason = StatusNew, "the index holds no notes"
				continue
			}
			sim := math.Round(best[j].Score*1e4) / 1e4
			it.Similarity = &sim
			c, n := chunks[best[j].ChunkID], notes[best[j].NoteID]
			it.Path, it.NoteTitle, it.Heading = n.Path, n.Title, c.Heading
			it.Snippet = stages.Snippet(c.Body, stages.Terms(items[i].text), 160)
			if sim >= threshold { // decided on the figure shown, so the two never disagree
				it.Status = StatusCovered
			} else {
				it.Status = StatusNew
			}
		}
	}
	for _, it := range out.Items {
		out.Counts[it.Status]++
	}
	return out, nil
}
