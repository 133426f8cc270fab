package stages

import (
	"fmt"
	"slices"
	"strings"
)

// The texts of a request a retrieval stage can read (its `text` setting).
// The caller of vault_search is a language model: besides the user's
// question it may send the words a note that answers would contain
// (keywords) and a passage written as that note (answer). It has never seen
// the notes; what it writes comes from its general knowledge.
const (
	SourceQuery    = "query"    // the user's question, always present
	SourceKeywords = "keywords" // the client's keyword query, optional
	SourceAnswer   = "answer"   // the client's hypothetical answer, optional
)

var sources = []string{SourceQuery, SourceKeywords, SourceAnswer}

// Embedding modes of a vector stage's text (its `embed_as` setting): as a
// query, with the model's query instruction, or as a passage, the way notes
// were embedded (a hypothetical answer is passage-shaped: HyDE).
const (
	EmbedAsQuery   = "query"
	EmbedAsPassage = "passage"
)

// validateText checks a stage's text sources, defaulting to the query alone.
func validateText(text *[]string) error {
	if len(*text) == 0 {
		*text = []string{SourceQuery}
		return nil
	}
	seen := map[string]bool{}
	for _, s := range *text {
		if !slices.Contains(sources, s) {
			return fmt.Errorf("text %q is not one of %s", s, strings.Join(sources, ", "))
		}
		if seen[s] {
			return fmt.Errorf("text %q is named twice", s)
		}
		seen[s] = true
	}
	return nil
}

func validateEmbedAs(mode *string) error {
	switch *mode {
	case "":
		*mode = EmbedAsQuery
	case EmbedAsQuery, EmbedAsPassage:
	default:
		return fmt.Errorf("embed_as %q is neither %s nor %s", *mode, EmbedAsQuery, EmbedAsPassage)
	}
	return nil
}

// readsExpansions says whether a stage's text names any of the client's
// texts.
func readsExpansions(text []string) bool {
	return slices.ContainsFunc(text, func(s string) bool { return s != SourceQuery })
}

// Source is one of the request's texts by name, "" when the client did not
// send it.
func (q Query) Source(name string) string {
	switch name {
	case SourceQuery:
		return q.Text
	case SourceKeywords:
		return q.Keywords
	case SourceAnswer:
		return q.Answer
	}
	return ""
}

// Compose joins the named texts the client sent, in the order named, one per
// line; "" when it sent none of them.
func (q Query) Compose(names []string) string {
	var parts []string
	for _, n := range names {
		if s := q.Source(n); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n")
}

// Expanded says whether the client sent any text beyond the query.
func (q Query) Expanded() bool { return q.Keywords != "" || q.Answer != "" }

// noText is a retrieval stage's info line when the client sent none of the
// texts it reads.
func noText(text []string) string {
	return fmt.Sprintf("no %s sent: nothing to search", strings.Join(text, " or "))
}

// ExpansionReader is a stage whose settings make it read the client's texts
// (keywords, answer): the eval harness runs the configurations holding one
// with the datasets' client expansions too.
type ExpansionReader interface {
	Stage
	ReadsExpansions() bool
}
