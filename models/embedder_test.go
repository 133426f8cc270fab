package models

import (
	"context"
	"strings"
	"testing"
)

// These tests run the real bge-small-en-v1.5 (`make setup` installs it).

func TestEmbedderRanksRelatedHigher(t *testing.T) {
	e := realEmbedder(t)
	ctx := context.Background()
	tests := []struct {
		query, related, unrelated string
	}{
		{
			"how do I bake bread",
			"Sourdough loaf: mix flour, water, salt and starter, let the dough rise overnight, then bake it in a hot oven.",
			"Database compaction merges SSTables and drops deleted rows to reclaim disk space.",
		},
		{
			"why are database writes slow",
			"Write amplification from compaction makes the storage engine slower on inserts.",
			"The hiking trail climbs through a pine forest to a mountain lake.",
		},
		{
			"symptoms of a common cold",
			"A runny nose, a sore throat and sneezing usually mean you caught a cold.",
			"Kubernetes schedules pods onto nodes that have enough free memory.",
		},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			q, err := e.EmbedQuery(ctx, tc.query)
			if err != nil {
				t.Fatal(err)
			}
			ps, err := e.EmbedPassages(ctx, []string{tc.related, tc.unrelated})
			if err != nil {
				t.Fatal(err)
			}
			rel, unrel := Cosine(q, ps[0]), Cosine(q, ps[1])
			t.Logf("cos(related) = %.4f, cos(unrelated) = %.4f", rel, unrel)
			if rel <= unrel {
				t.Errorf("related passage %.4f <= unrelated %.4f", rel, unrel)
			}
		})
	}
}

func TestEmbedderVectors(t *testing.T) {
	e := realEmbedder(t)
	ctx := context.Background()
	if e.Name() != DefaultEmbedder || e.Dim() != 384 {
		t.Fatalf("Name, Dim = %q, %d; want %q, 384", e.Name(), e.Dim(), DefaultEmbedder)
	}
	texts := []string{"", "a", "Vault notes about retrieval.", "Crème brûlée, 日本語のノート, emoji 🙂", wordsText("w", 40)}
	vs, err := e.EmbedPassages(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(vs), len(texts))
	}
	for i, v := range vs {
		if len(v) != 384 {
			t.Errorf("text %d: %d dims, want 384", i, len(v))
		}
		if n := norm(v); n < 1-1e-5 || n > 1+1e-5 {
			t.Errorf("text %d: norm %v, want 1", i, n)
		}
	}
	q, err := e.EmbedQuery(ctx, texts[2])
	if err != nil {
		t.Fatal(err)
	}
	if n := norm(q); len(q) != 384 || n < 1-1e-5 || n > 1+1e-5 {
		t.Errorf("query vector: %d dims, norm %v", len(q), n)
	}
	// The query instruction is prepended: a query is not embedded as a passage.
	if c := Cosine(q, vs[2]); c > 0.999 {
		t.Errorf("query and passage vectors of the same text are identical (cos %v): no query prefix?", c)
	}
	if got, err := e.EmbedPassages(ctx, nil); err != nil || len(got) != 0 {
		t.Errorf("EmbedPassages(nil) = %d vectors, %v; want none", len(got), err)
	}
}

// Batching pads rows to the longest; with the fp32 model the attention mask
// makes that invisible. The int8 model quantizes its activations with a
// scale taken over the whole batch (dynamic quantization), so batched its
// vectors would move with their batch-mates (cosine to alone down to 0.994
// measured): its manifest entry makes it embed each text alone, and batched
// then equals alone exactly for both.
func TestEmbedderBatchEqualsAlone(t *testing.T) {
	realEmbedder(t)
	ctx := context.Background()
	// Lengths out of order (the batcher sorts them and must put results back),
	// rows padded to ~130 tokens; padding up to the whole window costs seconds
	// per row on a small machine and shows nothing more.
	texts := []string{
		"bread",
		"How long should sourdough proof before baking?",
		"",
		wordsText("long", 60),
		"Crème brûlée, 日本語のノート.",
		"A medium sized paragraph about databases, compaction, write amplification and the cost of indexes on inserts.",
	}
	for _, tc := range []struct {
		model   string
		maxDiff float64 // largest component difference (fp32)
		minCos  float64 // smallest cosine to the vector alone (int8)
	}{
		{"bge-small-en-v1.5", 1e-4, 0.9999},
		{"bge-small-en-v1.5-q", 1e-4, 0.9999},
	} {
		e, err := shared.reg.Embedder(ctx, tc.model)
		if err != nil {
			t.Fatalf("load %s: %v", tc.model, err)
		}
		batch, err := e.EmbedPassages(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		worst, worstCos := 0.0, 1.0
		for i, s := range texts {
			alone, err := e.EmbedPassages(ctx, []string{s})
			if err != nil {
				t.Fatal(err)
			}
			d, c := maxDiff(batch[i], alone[0]), Cosine(batch[i], alone[0])
			worst, worstCos = max(worst, d), min(worstCos, c)
			if tc.maxDiff > 0 && d > tc.maxDiff {
				t.Errorf("%s, text %d (%d tokens): batched differs from alone by %g", tc.model, i, e.CountTokens(s), d)
			}
			if c < tc.minCos {
				t.Errorf("%s, text %d (%d tokens): batched has cosine %.5f to alone", tc.model, i, e.CountTokens(s), c)
			}
		}
		t.Logf("%s: largest difference batched vs alone %g, smallest cosine %.6f", tc.model, worst, worstCos)
		// Token ids in, the same vectors out as text in, batched alike.
		var ids [][]int32
		for _, s := range texts {
			ids = append(ids, e.Tokens(s))
		}
		byIDs, err := e.EmbedTokens(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		for i := range texts {
			if d := maxDiff(byIDs[i], batch[i]); d != 0 {
				t.Errorf("%s, text %d: EmbedTokens differs from EmbedPassages by %g", tc.model, i, d)
			}
		}
	}
	batch, err := realEmbedder(t).EmbedPassages(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	// Different texts give different vectors, so the comparisons above mean something.
	if Cosine(batch[0], batch[1]) > 0.99 {
		t.Error("unrelated texts embed the same")
	}
}

func TestEmbedderLongText(t *testing.T) {
	e := realEmbedder(t)
	ctx := context.Background()
	long := wordsText("token", 2000)
	if n := e.CountTokens(long); n <= 512 {
		t.Fatalf("test text has %d tokens, want more than 512", n)
	}
	vs, err := e.EmbedPassages(ctx, []string{long, long + " and a tail the window never sees"})
	if err != nil {
		t.Fatalf("embedding %d tokens: %v", e.CountTokens(long), err)
	}
	if n := norm(vs[0]); n < 1-1e-5 || n > 1+1e-5 {
		t.Errorf("norm %v", n)
	}
	// Only the first 510 tokens count: what follows does not change the vector.
	if d := maxDiff(vs[0], vs[1]); d > 1e-5 {
		t.Errorf("text beyond the window changed the vector by %g", d)
	}
}

func TestEmbedderCountTokens(t *testing.T) {
	e := realEmbedder(t)
	tests := []struct {
		text string
		want int // -1: only checked against the sum rule
	}{
		{"", 0},
		{"hello", 1},
		{"hello world", 2},
		{"Hello, World!", 4},
		{"HELLO   world\n\n", 2},
		{wordsText("x", 1000), -1},
	}
	for _, tc := range tests {
		n := e.CountTokens(tc.text)
		if tc.want >= 0 && n != tc.want {
			t.Errorf("CountTokens(%q) = %d, want %d", tc.text, n, tc.want)
		}
		if tc.want < 0 && n < 1000 {
			t.Errorf("CountTokens(1000 words) = %d, want at least 1000 (no truncation)", n)
		}
	}
	// The chunker counts word by word: counts of white-space separated parts add up.
	pairs := [][2]string{
		{"retrieval", "augmented generation"},
		{"sourdough", "unbelievably"},
		{"Crème brûlée", "日本語"},
		{"foo-bar_baz.md", "[[wikilink|alias]]"},
	}
	for _, p := range pairs {
		if a, b, ab := e.CountTokens(p[0]), e.CountTokens(p[1]), e.CountTokens(p[0]+" "+p[1]); ab != a+b {
			t.Errorf("CountTokens(%q)=%d + CountTokens(%q)=%d != CountTokens(both)=%d", p[0], a, p[1], b, ab)
		}
	}
	if n := e.CountTokens(strings.Repeat("electroencephalography ", 10)); n <= 10 {
		t.Errorf("a word split into word pieces counts %d for 10 words, want more than 10", n)
	}
}
