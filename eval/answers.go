package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Answers are a dataset's passage-level judgements: for each query id, the
// sentences that answer it in each of its top-graded notes, copied verbatim
// from the notes by annotators who never saw a retriever's output. They
// live in root/eval/answers/<dataset>.json.
type Answers map[string]map[string][]string

// AnswersPath is where a dataset's passage judgements are kept.
func AnswersPath(root, dataset string) string {
	return filepath.Join(root, "eval", "answers", dataset+".json")
}

// LoadAnswers reads a dataset's passage judgements; a dataset without the
// file has none (nil, nil). Every query id must be one of the dataset's.
func LoadAnswers(path string, ds *Dataset) (Answers, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var file struct {
		Queries []struct {
			ID    string              `json:"id"`
			Notes map[string][]string `json:"notes"`
		} `json:"queries"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ids := map[string]bool{}
	for _, q := range ds.Queries {
		ids[q.ID] = true
	}
	out := Answers{}
	for _, q := range file.Queries {
		if !ids[q.ID] {
			return nil, fmt.Errorf("%s: query %q is not one of %s's", path, q.ID, ds.Name)
		}
		out[q.ID] = q.Notes
	}
	return out, nil
}

// foldSpace is text as answers are compared: lower case, runs of white
// space one space.
func foldSpace(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// HoldsAnswer reports whether a note's shown text holds one of the answer
// sentences judged for it, compared without case and with white space
// folded: answer@1 asks it of the first note's passages.
func (a Answers) HoldsAnswer(id, path, shown string) bool {
	text := foldSpace(shown)
	for _, s := range a[id][path] {
		if s = foldSpace(s); s != "" && strings.Contains(text, s) {
			return true
		}
	}
	return false
}
