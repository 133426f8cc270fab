package models

import (
	"context"
	"fmt"
)

// Ensure returns the status of an installed model, fetching it first when it
// is missing, as `vault-rag models fetch NAME` does (Fetch, the same sources
// in the same order, the same sha256 checks). It is for a command that has
// chosen a model it cannot run without, such as the embedder a first index
// picks for its vault's script: setup fetches only the default embedder, and
// any other is brought on the first day a vault needs it.
//
// An installed model costs a stat and returns without a word. Otherwise log
// receives one line before the download starts, saying what and how much,
// and one when the model is installed, naming the source that delivered
// it; the sources that failed before it are not the user's concern then. A
// fetch that fails returns an error wrapping ErrNotInstalled that names
// every source's failure and says what to run instead.
func Ensure(ctx context.Context, dataDir string, s Spec, o FetchOptions, log func(string)) (Status, error) {
	if st := Check(dataDir, s); st.Installed {
		return st, nil
	}
	if log == nil {
		log = func(string) {}
	}
	log(fmt.Sprintf("fetching %s (%s) into %s; once", s.Name, MB(s.Size()), ModelDir(dataDir, s.Name)))
	st, err := Fetch(ctx, dataDir, s, o, nil)
	if err != nil {
		return st, fmt.Errorf("%w; run `vault-rag models fetch %s` where the network reaches Maven Central, or bring its files and run `vault-rag models import %s PATH` (docs/offline.md)", err, s.Name, s.Name)
	}
	log(fmt.Sprintf("%s installed from %s", s.Name, st.Source))
	return st, nil
}

// Size is the bytes of a model's files as installed: what a fetch of it
// brings (a jar's compression makes the download itself somewhat smaller).
func (s Spec) Size() int64 {
	var n int64
	for _, f := range s.Files {
		n += f.Size
	}
	return n
}

// MB formats a size in whole decimal megabytes ("24 MB"), as a line that
// announces a download states it.
func MB(n int64) string {
	if n > 0 && n < 500_000 {
		return "<1 MB"
	}
	return fmt.Sprintf("%d MB", (n+500_000)/1_000_000)
}
