package wordpiece_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// benchTexts are the notes of the blue-book vault (English prose and code).
func benchTexts(b *testing.B) []string {
	dir := filepath.Join(datasetsDir(b), "blue-book", "vault")
	var texts []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		raw, err := os.ReadFile(p)
		texts = append(texts, string(raw))
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return texts
}

// benchEncode reports tokens/s of encode over the texts, run on -cpu
// goroutines.
func benchEncode(b *testing.B, texts []string, encode func(string) int) {
	var tokens, next atomic.Int64
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1)
			tokens.Add(int64(encode(texts[int(i)%len(texts)])))
		}
	})
	b.ReportMetric(float64(tokens.Load())/time.Since(start).Seconds(), "tokens/s")
}

func BenchmarkEncode(b *testing.B) {
	tok := load(b, "bge-small-en-v1.5")
	texts := benchTexts(b)
	benchEncode(b, texts, func(s string) int { return len(tok.Encode(s)) })
}
