// Package choice checks a setting that takes one of a few words (a rerank
// passage, a model's pooling): the decoder of its named string type and the
// code that validates a value set in Go refuse it alike, naming the words
// allowed.
package choice

import (
	"fmt"
	"slices"
	"strings"
)

// Check is nil when v is one of allowed, else an error in the setting's
// words: `passage "page" is not one of snippet, chunk, note, window`.
func Check[T ~string](setting string, v T, allowed []T) error {
	if slices.Contains(allowed, v) {
		return nil
	}
	return fmt.Errorf("%s %q is not one of %s", setting, v, join(allowed))
}

// join lists the words, comma-separated.
func join[T ~string](words []T) string {
	s := make([]string, len(words))
	for i, w := range words {
		s[i] = string(w)
	}
	return strings.Join(s, ", ")
}
