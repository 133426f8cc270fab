package index

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/vault-rag/vault-rag/internal/vault"
)

// Embedder is what the indexer needs of an embedding model.
type Embedder interface {
	Name() string
	Dim() int
	// EmbedPassages returns one L2-normalised vector per text, in order.
	EmbedPassages(ctx context.Context, texts []string) ([][]float32, error)
	// CountTokens counts the tokens of a text without special tokens.
	CountTokens(text string) int
}

// TokenEmbedder is an Embedder that hands out token ids and embeds them, so
// the indexer tokenizes each text once: to decide where to split a section,
// and the same ids go to the model.
type TokenEmbedder interface {
	Embedder
	// Tokens returns a text's token ids without special tokens.
	Tokens(text string) []int32
	// EmbedTokens embeds passages given as token ids, as EmbedPassages would
	// embed their texts.
	EmbedTokens(ctx context.Context, ids [][]int32) ([][]float32, error)
	// Window is the longest sequence embedded (longer ones are cut).
	Window() int
}

// BatchLimiter is an Embedder that says how much one model run takes: at
// most rows texts, and at most tokens in rows × the longest text (with two
// special tokens each). The indexer hands it batches within those bounds,
// sorted by length over every text to embed, so each call is one run with
// little padding.
type BatchLimiter interface {
	BatchLimits() (rows, tokens int)
}

// Default batch bounds for an embedder that does not say.
const (
	defaultBatchRows   = 64
	defaultBatchTokens = 16384
)

// BuildOptions say what to index, where, and how.
type BuildOptions struct {
	VaultPath   string
	DBPath      string
	Incremental bool // re-embed only notes whose content changed; falls back to a full build when it must
	Scan        vault.ScanOptions
	// Progress, when set, is called as notes are read and after each batch
	// of chunks is embedded.
	Progress func(Progress)
	// NoCache embeds every chunk and keeps nothing in the embedding cache
	// (CachePath) beside the index: a benchmark of the model's throughput.
	NoCache bool
	// EmbedderWhy says why the embedder was chosen; the index records it
	// (DB.Meta("embedder_why")) when set, for `vault-rag status`.
	EmbedderWhy string
	// Force replaces an index built from another vault; without it such an
	// index is refused with a *VaultMismatchError, so a second vault never
	// silently takes over the first one's index.
	Force bool
	// WaitForBuild waits for another build of the same index (in this
	// process or another) to end, until ctx is done; without it, Build
	// returns a *BuildRunningError (errors.Is ErrBuildRunning) at once.
	WaitForBuild bool
	// MaxChunks is how many chunks of one note are indexed (0:
	// vault.DefaultMaxChunks); a note that would make more keeps its first
	// MaxChunks, with a warning in the report, and the rest is never
	// tokenized or embedded.
	MaxChunks int

	// script and scriptShare are the vault's dominant script and its share
	// of the letters, counted by Build and recorded by finish.
	script      string
	scriptShare float64
	// languages counts the vault's notes by language, counted by Build and
	// recorded by finish (DB.Languages).
	languages vault.Languages
}

// Progress is where a build is.
type Progress struct {
	// Phase is "reading" (notes parsed, chunked and written; Done and Total
	// count notes) or "embedding" (Done and Total count the chunks that need
	// the model, Tokens and TotalTokens their tokens: the work, for an ETA).
	Phase       string `json:"phase"`
	Done        int    `json:"done"`
	Total       int    `json:"total"`
	Tokens      int    `json:"tokens,omitempty"`
	TotalTokens int    `json:"total_tokens,omitempty"`
	// Reused counts chunks whose vector was already stored (embedding phase).
	Reused int `json:"reused,omitempty"`
}

// Counts is what a build did, in numbers: the part of a Report the server's
// /health repeats and the load test reads back.
type Counts struct {
	Mode      string `json:"mode"`               // "full" or "incremental"
	Fallback  string `json:"fallback,omitempty"` // why an incremental build ran as a full one
	Notes     int    `json:"notes"`
	Chunks    int    `json:"chunks"`
	Added     int    `json:"added"`
	Changed   int    `json:"changed"`
	Removed   int    `json:"removed"`
	Unchanged int    `json:"unchanged"`
	Embedded  int    `json:"embedded"` // chunks run through the model
	Reused    int    `json:"reused"`   // chunks whose stored embedding was kept
	Truncated int    `json:"truncated"`
	// KeywordOnly counts the index's chunks that have no vector by design:
	// those of notes too long to embed (vault.DefaultMaxChunks).
	KeywordOnly int `json:"keyword_only,omitempty"`
	// Script is the vault's dominant writing system ("Latin", "Han", …)
	// and ScriptShare its share of the letters (vault.ScriptCounts: the
	// first KiB of every note), recorded in the index (DB.Script).
	Script      string  `json:"script,omitempty"`
	ScriptShare float64 `json:"script_share,omitempty"`
}

// Report says what a build did.
type Report struct {
	Counts
	Skipped  []vault.Skipped `json:"skipped"`
	Warnings []vault.Skipped `json:"warnings"` // notes indexed despite a problem
	Duration time.Duration   `json:"duration_ns"`
	// SkippedByKind counts what the build passed over by kind: Skipped's
	// files and folders and the hidden ones the scan does not list
	// (vault.Listing.SkippedByKind).
	SkippedByKind map[string]int `json:"skipped_by_kind"`
}

// Build indexes the vault into opts.DBPath. A full build writes a new file
// beside the old one and then copies it into the live file in one
// transaction (or renames it into place when there is none, swap.go), so a
// reader never sees a half-built index and a crash leaves the old one; an
// incremental build changes the existing file in one transaction. One build
// of an index runs at a time, across processes (lock.go). Where there is no complete index yet
// (a vault's first build, or one whose embedding was interrupted), the full
// build puts the keyword index of every note in place before it embeds
// anything, and then adds the vectors to the live file in committed batches
// (staged.go): the index answers keyword searches within seconds and vector
// searches over what is embedded so far. The vault is only read.
func Build(ctx context.Context, emb Embedder, opts BuildOptions) (Report, error) {
	start := time.Now()
	if err := os.MkdirAll(filepath.Dir(opts.DBPath), 0o755); err != nil {
		return Report{}, fmt.Errorf("create index folder: %w", err)
	}
	mode := "full"
	if opts.Incremental {
		mode = "incremental"
	}
	lock, err := lockBuild(ctx, opts.DBPath, mode, opts.WaitForBuild)
	if err != nil {
		return Report{}, err
	}
	defer lock.release()
	opts.Progress = lock.tracking(opts.Progress)
	// Return the cache's free pages, under the lock, before this build (one
	// killed earlier left them) and after it, whether it failed or not (its
	// prune frees them). A failed or cancelled compaction costs disk space
	// only, until the next build.
	compact := func() { _, _, _ = compactCache(ctx, CachePath(opts.DBPath)) }
	compact()
	defer compact()
	// A build killed while committing left a hot journal: roll it back now,
	// before anything reads the index read-only (which cannot).
	recoverHotJournal(ctx, opts.DBPath)
	if !opts.Force {
		if err := checkVault(opts.DBPath, BuiltFrom(ctx, opts.DBPath), opts.VaultPath); err != nil {
			return Report{}, err
		}
	}
	listing, err := vault.List(ctx, opts.VaultPath, opts.Scan)
	if err != nil {
		return Report{}, err
	}
	files := listing.Files
	opts.script, opts.scriptShare = vault.FilesScript(files)
	opts.languages = vault.FilesLanguages(files)
	var rep Report
	if opts.Incremental {
		rep, err = buildIncremental(ctx, emb, opts, files)
		var full *needsFullError
		if errors.As(err, &full) {
			rep, err = buildFull(ctx, emb, opts, files)
			rep.Fallback = full.reason
		}
	} else {
		rep, err = buildFull(ctx, emb, opts, files)
	}
	if err != nil {
		return rep, err
	}
	rep.Script, rep.ScriptShare = opts.script, opts.scriptShare
	rep.SkippedByKind = listing.SkippedByKind
	for _, s := range rep.Skipped { // the build's own: empty files
		k := s.Kind
		if k == "" {
			k = s.Reason
		}
		rep.SkippedByKind[k]++
	}
	rep.Skipped = append(listing.Skipped, rep.Skipped...)
	rep.Warnings = append(listing.Warnings, rep.Warnings...) // settings the scan could not use
	sort.Slice(rep.Skipped, func(i, j int) bool { return rep.Skipped[i].Path < rep.Skipped[j].Path })
	rep.Duration = time.Since(start)
	if err := recordBuild(ctx, opts.DBPath, rep); err != nil {
		return rep, err
	}
	return rep, nil
}

// needsFullError says why an incremental build cannot run and a full one
// must: the reason goes into Report.Fallback.
type needsFullError struct{ reason string }

func (e *needsFullError) Error() string { return "full build needed: " + e.reason }

func needsFull(format string, args ...any) error {
	return &needsFullError{reason: fmt.Sprintf(format, args...)}
}

func embedHash(model, text string) string {
	h := sha256.New()
	h.Write([]byte(model))
	h.Write([]byte{0})
	h.Write([]byte(text))
	return hex.EncodeToString(h.Sum(nil))
}

func countTruncated(cs []vault.Chunk) int {
	n := 0
	for _, c := range cs {
		if c.Truncated {
			n++
		}
	}
	return n
}

// finish resolves wikilinks to note ids and records what the index is.
// partial says some chunks have no vector yet (a staged build goes on
// embedding them): their binary codes wait for the last one, since the
// centre they are taken against is the mean of every vector.
func finish(ctx context.Context, tx *sql.Tx, emb Embedder, opts BuildOptions, partial bool) error {
	if err := resolveLinks(ctx, tx); err != nil {
		return fmt.Errorf("resolve links: %w", err)
	}
	if !partial {
		if err := syncCodes(ctx, tx, emb.Dim()); err != nil {
			return fmt.Errorf("quantize vectors: %w", err)
		}
	}
	fp, err := fingerprint(ctx, tx)
	if err != nil {
		return err
	}
	cov, err := countCoverage(ctx, tx)
	if err != nil {
		return err
	}
	absVault, err := canonicalVault(opts.VaultPath)
	if err != nil {
		return fmt.Errorf("record the vault: %w", err)
	}
	meta := map[string]string{
		"schema_version": SchemaVersion,
		"embedder":       emb.Name(),
		"dim":            fmt.Sprint(emb.Dim()),
		"built_at":       time.Now().UTC().Format(time.RFC3339),
		"vault":          absVault,
		"fingerprint":    fp,
		"script":         opts.script,
		"script_share":   strconv.FormatFloat(opts.scriptShare, 'f', 4, 64),
		metaChunks:       strconv.Itoa(cov.Chunks),
		metaEmbedded:     strconv.Itoa(cov.Embedded),
		metaComplete:     boolMeta(!partial),
	}
	if opts.EmbedderWhy != "" {
		meta["embedder_why"] = opts.EmbedderWhy
	}
	langs, err := json.Marshal(opts.languages)
	if err != nil {
		return fmt.Errorf("record the languages: %w", err)
	}
	meta[metaLanguages] = string(langs)
	for k, v := range meta {
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, k, v); err != nil {
			return fmt.Errorf("write index metadata: %w", err)
		}
	}
	return nil
}

func readMeta(ctx context.Context, db queryer) (map[string]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT key, value FROM meta`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		m[k] = v
	}
	return m, rows.Err()
}

// resolveLinks sets every link's target_id. A link names a note by its path
// without .md, or by its file name alone, in any case; the path wins, then the
// first note in path order with that file name. Targets are lower-cased in Go,
// as the keys were: SQLite's lower() folds ASCII only, so [[Über]] would never
// meet the key "über".
func resolveLinks(ctx context.Context, tx *sql.Tx) error {
	type link struct {
		rowid  int64
		target string
	}
	rows, err := tx.QueryContext(ctx, `SELECT rowid, target FROM links`)
	if err != nil {
		return err
	}
	var links []link
	for rows.Next() {
		var l link
		if err := rows.Scan(&l.rowid, &l.target); err != nil {
			rows.Close()
			return err
		}
		links = append(links, l)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	find, err := tx.PrepareContext(ctx, `SELECT coalesce(
		(SELECT id FROM notes WHERE key = ?1),
		(SELECT id FROM notes WHERE base = ?1 ORDER BY path LIMIT 1))`)
	if err != nil {
		return err
	}
	defer find.Close()
	set, err := tx.PrepareContext(ctx, `UPDATE links SET target_id = ? WHERE rowid = ?`)
	if err != nil {
		return err
	}
	defer set.Close()
	resolved := map[string]sql.NullInt64{}
	for _, l := range links {
		key := strings.ToLower(l.target)
		id, ok := resolved[key]
		if !ok {
			if err := find.QueryRowContext(ctx, key).Scan(&id); err != nil {
				return err
			}
			resolved[key] = id
		}
		if _, err := set.ExecContext(ctx, id, l.rowid); err != nil {
			return err
		}
	}
	return nil
}

// fingerprint hashes every note's path and content hash, in path order: two
// indexes of the same vault content have the same fingerprint.
func fingerprint(ctx context.Context, tx *sql.Tx) (string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT path, hash FROM notes ORDER BY path`)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	h := sha256.New()
	for rows.Next() {
		var p, hash string
		if err := rows.Scan(&p, &hash); err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%s\n", p, hash)
	}
	return hex.EncodeToString(h.Sum(nil)), rows.Err()
}

func syncFile(p string) error {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// VaultStamp hashes what an index of these files would be built from: every
// file's path and content, the embedder and the schema. Two equal stamps build
// equal indexes, so a cached index with the same stamp can be reused as is.
func VaultStamp(files []vault.File, embedder string) string {
	h := sha256.New()
	fmt.Fprintf(h, "schema %s\nembedder %s\n", SchemaVersion, embedder)
	for _, f := range files {
		fmt.Fprintf(h, "%s\x00%s\n", f.Path, f.Hash)
	}
	return hex.EncodeToString(h.Sum(nil))
}
