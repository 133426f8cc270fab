// Command drift prints, for one embedder, the cosine score of every query
// against every passage, with nine decimals, so that two runs on different
// instruction sets can be compared. scripts/measure-drift.sh runs it natively
// and under valgrind (which hides AVX-512 from ONNX Runtime, so its kernel
// dispatcher takes the AVX2 path) and reports the largest difference: the
// figure the frozen fixture's and the eval gate's tolerance is set from.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/vault-rag/vault-rag/models"
)

func main() {
	vault := flag.String("vault", "vault", "folder of notes whose paragraphs are the passages")
	max := flag.Int("passages", 60, "passages to embed (the first N paragraphs in path order)")
	name := flag.String("model", "", "embedder (default: the default embedder)")
	flag.Parse()
	if err := run(*vault, *max, *name, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "drift:", err)
		os.Exit(1)
	}
}

func run(vault string, max int, name string, queries []string) error {
	if len(queries) == 0 {
		return fmt.Errorf("give queries as arguments")
	}
	var paths []string
	err := filepath.WalkDir(vault, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		return err
	}
	sort.Strings(paths)
	var passages []string
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, para := range strings.Split(string(raw), "\n\n") {
			if para = strings.TrimSpace(para); len(para) > 40 && len(passages) < max {
				passages = append(passages, para)
			}
		}
	}
	settings := models.SettingsFrom(os.Getenv)
	reg, err := models.NewRegistry(settings.DataDir, settings.Runtime)
	if err != nil {
		return err
	}
	defer reg.Close()
	ctx := context.Background()
	emb, err := reg.Embedder(ctx, name)
	if err != nil {
		return err
	}
	pv, err := emb.EmbedPassages(ctx, passages)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	for qi, q := range queries {
		qv, err := emb.EmbedQuery(ctx, q)
		if err != nil {
			return err
		}
		for pi, v := range pv {
			fmt.Fprintf(w, "%d %d %.9f\n", qi, pi, models.Cosine(qv, v))
		}
	}
	return nil
}
