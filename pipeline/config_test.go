package pipeline_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/pipeline"
	"github.com/vault-rag/vault-rag/stages"
)

// TestParseErrors checks that every refusal names the file, the line and the
// key: the message starts "bad.yaml:LINE: " and holds the key.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		line string // the exact "file:line:" prefix
		key  string // must appear in the message
		at   string // the ConfigError's Key: the key at that line ("" for none)
	}{
		{
			name: "unknown top-level key",
			src:  "name: x\ndescription: d\nstagez:\n  - keyword: {}\n",
			line: "bad.yaml:3:", key: `"stagez"`, at: "stagez",
		},
		{
			name: "unknown stage",
			src:  "name: x\nstages:\n  - keyword: {}\n  - keywrd: {limit: 4}\n",
			line: "bad.yaml:4:", key: `"keywrd"`, at: "keywrd",
		},
		{
			name: "unknown vector search",
			src:  "stages:\n  - vector:\n      limit: 4\n      search: fast\n",
			line: "bad.yaml:4:", key: `search "fast"`, at: "search",
		},
		{
			name: "oversample with the exact search",
			src:  "stages:\n  - hyde:\n      search: exact\n      oversample: 4\n",
			line: "bad.yaml:4:", key: "oversample", at: "oversample",
		},
		{
			name: "unknown stage key",
			src:  "stages:\n  - keyword:\n      limit: 4\n      limt: 5\n",
			line: "bad.yaml:4:", key: `"limt"`, at: "limt",
		},
		{
			name: "unknown stage key, flow style",
			src:  "stages:\n  - keyword: {}\n  - rrf: {k: 60, limit: 30, K: 1}\n",
			line: "bad.yaml:3:", key: `"K"`, at: "K",
		},
		{
			name: "wrong type: a word for a number",
			src:  "stages:\n  - keyword:\n      limit: forty\n",
			line: "bad.yaml:3:", key: "limit", at: "limit",
		},
		{
			name: "wrong type: a list for a number",
			src:  "stages:\n  - keyword: {}\n  - rrf:\n      limit: 30\n      k: [60]\n",
			line: "bad.yaml:5:", key: "k:", at: "k",
		},
		{
			name: "wrong type: a bad ladder rung",
			src:  "stages:\n  - vector:\n      limit: 5\n      ladder:\n        - 10\n        - x\n",
			line: "bad.yaml:6:", key: "ladder", at: "ladder",
		},
		{
			name: "wrong type: settings not a mapping",
			src:  "stages:\n  - keyword: 40\n",
			line: "bad.yaml:2:", key: "keyword", at: "keyword",
		},
		{
			name: "wrong type: name not a string",
			src:  "name: [a, b]\nstages:\n  - keyword: {}\n",
			line: "bad.yaml:1:", key: "name", at: "name",
		},
		{
			name: "wrong type: stages not a list",
			src:  "name: x\nstages: {keyword: {}}\n",
			line: "bad.yaml:2:", key: "stages", at: "stages",
		},
		{
			name: "invalid value: passage page",
			src:  "stages:\n  - keyword: {}\n  - rerank:\n      candidates: 10\n      passage: page\n",
			line: "bad.yaml:5:", key: "passage", at: "passage",
		},
		{
			name: "invalid value: scorer llm",
			src:  "stages:\n  - keyword: {}\n  - rerank: {scorer: llm}\n",
			line: "bad.yaml:3:", key: "scorer", at: "scorer",
		},
		{
			name: "invalid value: negative k",
			src:  "stages:\n  - keyword: {}\n  - rrf: {k: -1}\n",
			line: "bad.yaml:3:", key: "k -1", at: "k",
		},
		{
			name: "invalid value: negative limit",
			src:  "stages:\n  - keyword: {limit: -3}\n",
			line: "bad.yaml:2:", key: "limit", at: "limit",
		},
		{
			name: "invalid value: too many candidates",
			src:  "stages:\n  - keyword: {}\n  - rerank:\n      passage: note\n      candidates: 500\n",
			line: "bad.yaml:5:", key: "candidates", at: "candidates",
		},
		{
			name: "invalid value: negative recency weight",
			src:  "stages:\n  - keyword: {}\n  - recency:\n      half_life_days: 30\n      weight: -1\n",
			line: "bad.yaml:5:", key: "weight", at: "weight",
		},
		{
			name: "invalid value: a falling ladder",
			src:  "stages:\n  - vector:\n      limit: 5\n      ladder: [20, 10]\n",
			line: "bad.yaml:4:", key: "ladder", at: "ladder",
		},
		{
			name: "duplicate top-level key",
			src:  "name: a\nname: b\nstages:\n  - keyword: {}\n",
			line: "bad.yaml:2:", key: `"name"`, at: "name",
		},
		{
			name: "duplicate stage key",
			src:  "stages:\n  - keyword:\n      limit: 4\n      limit: 5\n",
			line: "bad.yaml:4:", key: `"limit"`, at: "limit",
		},
		{
			name: "empty stages",
			src:  "name: x\nstages: []\n",
			line: "bad.yaml:2:", key: "stages", at: "stages",
		},
		{
			name: "null stages",
			src:  "name: x\nstages:\n",
			line: "bad.yaml:2:", key: "stages", at: "stages",
		},
		{
			name: "no stages",
			src:  "name: x\ndescription: nothing to run\n",
			line: "bad.yaml:1:", key: "stages", at: "stages",
		},
		{
			name: "rrf before any retrieval stage",
			src:  "name: x\nstages:\n  - rrf: {}\n  - keyword: {}\n",
			line: "bad.yaml:3:", key: "rrf", at: "stages",
		},
		{
			name: "recency before any retrieval stage",
			src:  "stages:\n  - recency: {weight: 0.1}\n  - vector: {}\n",
			line: "bad.yaml:2:", key: "recency", at: "stages",
		},
		{
			name: "rerank before any retrieval stage",
			src:  "stages:\n  - rerank: {scorer: bi-encoder}\n  - keyword: {}\n",
			line: "bad.yaml:2:", key: "rerank", at: "stages",
		},
		{
			name: "two stages in one item",
			src:  "stages:\n  - keyword: {}\n    vector: {}\n",
			line: "bad.yaml:2:", key: "one stage name", at: "",
		},
		{
			name: "not a mapping",
			src:  "- keyword: {}\n",
			line: "bad.yaml:1:", key: "stages", at: "",
		},
		{
			name: "invalid value: a negative weight, at its key",
			src:  "stages:\n  - keyword: {}\n  - rrf:\n      k: 60\n      weights: {keyword: -1}\n",
			line: "bad.yaml:5:", key: "weight -1 for keyword", at: "weights",
		},
		{
			name: "a weight for a list no stage produces",
			src:  "stages:\n  - keyword: {}\n  - vector: {}\n  - rrf:\n      weights:\n        keyword: 1\n        vectr: 2\n",
			line: "bad.yaml:7:", key: `stage rrf: weights: no stage before it produces a list "vectr" (the lists before it: keyword, vector)`, at: "vectr",
		},
		{
			name: "a weight for a list produced only later",
			src:  "stages:\n  - keyword: {}\n  - rrf: {weights: {hyde: 2}}\n  - hyde: {}\n  - rrf: {}\n",
			line: "bad.yaml:3:", key: `list "hyde"`, at: "hyde",
		},
		{
			name: "a code weight for a list no stage produces",
			src:  "stages:\n  - keyword: {}\n  - convex: {weights: {keyword: 1}, code_weights: {vector: 1}}\n",
			line: "bad.yaml:3:", key: `code_weights: no stage before it produces a list "vector"`, at: "vector",
		},
		{
			name: "a weight for a renamed list's stage name",
			src:  "stages:\n  - keyword: {list: kw}\n  - rrf: {weights: {keyword: 2}}\n",
			line: "bad.yaml:3:", key: `list "keyword" (the lists before it: kw)`, at: "keyword",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := pipeline.Parse("bad.yaml", []byte(tc.src))
			if err == nil {
				t.Fatalf("accepted:\n%s\nas %+v", tc.src, cfg)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, tc.line+" ") {
				t.Errorf("error %q does not start %q", msg, tc.line)
			}
			if !strings.Contains(msg, tc.key) {
				t.Errorf("error %q does not name %s", msg, tc.key)
			}
			var ce *pipeline.ConfigError
			if !errors.As(err, &ce) || ce.File != "bad.yaml" || ce.Key != tc.at || fmt.Sprintf("%s:%d:", ce.File, ce.Line) != tc.line {
				t.Errorf("error %#v, want a *pipeline.ConfigError at %s about key %q", err, tc.line, tc.at)
			}
		})
	}
}

// TestParseWeightsNameProducedLists: a weight may name any list a stage
// before it produces, by the name it produces it under.
func TestParseWeightsNameProducedLists(t *testing.T) {
	for _, src := range []string{
		"stages:\n  - keyword: {list: kw}\n  - vector: {}\n  - rrf: {weights: {kw: 2, vector: 1}}\n",
		"stages:\n  - keyword: {}\n  - hyde: {}\n  - convex: {weights: {hyde: 2}, code_weights: {keyword: 3}}\n",
		// feedback adds the keyword list when no stage made one
		"stages:\n  - vector: {}\n  - feedback: {rm3: true}\n  - rrf: {weights: {keyword: 2}}\n",
		"stages:\n  - keyword: {}\n  - rrf: {}\n  - feedback: {rocchio: true}\n  - rrf: {weights: {vector: 2}}\n",
	} {
		if _, err := pipeline.Parse("ok.yaml", []byte(src)); err != nil {
			t.Errorf("%q: %v", src, err)
		}
	}
}

// TestParseSettingErrorKey: Validate's refusal reaches the caller as a
// *stages.SettingError naming the key, inside the *pipeline.ConfigError.
func TestParseSettingErrorKey(t *testing.T) {
	_, err := pipeline.Parse("bad.yaml", []byte("stages:\n  - keyword:\n      limit: 4\n      title_weight: -1\n"))
	var se *stages.SettingError
	if !errors.As(err, &se) || se.Key != "title_weight" || se.Error() != "title_weight -1 is outside 0..100" {
		t.Errorf("error %#v, want a *stages.SettingError for title_weight", err)
	}
	if want := "bad.yaml:4: stage keyword: title_weight -1 is outside 0..100"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

// TestParseMinMatch: the keyword stage's min_match and common_share are
// shares, refused outside 0..1 at their own line.
func TestParseMinMatch(t *testing.T) {
	if _, err := pipeline.Parse("ok.yaml", []byte("stages:\n  - keyword: {min_match: 0.5, common_share: 0.05}\n")); err != nil {
		t.Errorf("min_match 0.5, common_share 0.05: %v", err)
	}
	for key, want := range map[string]string{
		"min_match: 1.5":     "bad.yaml:3: stage keyword: min_match 1.5 is outside 0..1",
		"common_share: -0.1": "bad.yaml:3: stage keyword: common_share -0.1 is outside 0..1",
	} {
		_, err := pipeline.Parse("bad.yaml", []byte("stages:\n  - keyword:\n      "+key+"\n"))
		if err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %q", key, err, want)
		}
	}
}

// TestParseChoiceSettings: a setting that takes one of a few words is
// refused while decoding, at its line and in the words Validate uses for a
// value set in Go; a list or a mapping gets a string setting's message.
func TestParseChoiceSettings(t *testing.T) {
	for _, tc := range []struct {
		settings, want, key string
	}{
		{"candidates: 10\n      passage: page", `bad.yaml:5: stage rerank: passage "page" is not one of snippet, chunk, note, window`, "passage"},
		{"scorer: llm", `bad.yaml:4: stage rerank: scorer "llm" is not one of cross-encoder, bi-encoder`, "scorer"},
		{"passage: Chunk", `bad.yaml:4: stage rerank: passage "Chunk" is not one of snippet, chunk, note, window`, "passage"},
		{"scorer: [bi-encoder]", "bad.yaml:4: stage rerank: scorer: cannot unmarshal !!seq into string", ""},
	} {
		_, err := pipeline.Parse("bad.yaml", []byte("stages:\n  - keyword: {}\n  - rerank:\n      "+tc.settings+"\n"))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: error %v, want %q", tc.settings, err, tc.want)
		}
		var se *stages.SettingError
		if got := errors.As(err, &se); got != (tc.key != "") || got && se.Key != tc.key {
			t.Errorf("%s: error %#v, want a *stages.SettingError for %q", tc.settings, err, tc.key)
		}
	}
	cfg, err := pipeline.Parse("ok.yaml", []byte("stages:\n  - keyword: {}\n  - rerank: {passage: '', scorer: ~}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r := cfg.Stages[1].(*stages.Rerank); r.Passage != stages.PassageSnippet || r.Scorer != stages.ScorerCrossEncoder {
		t.Errorf("empty passage and scorer: %+v, want the defaults", r)
	}
}

func TestParseSyntaxErrorNamesFile(t *testing.T) {
	_, err := pipeline.Parse("bad.yaml", []byte("name: x\nstages: [\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "bad.yaml:") {
		t.Errorf("syntax error %v, want it to name the file", err)
	}
}

func TestParseAccepts(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []stages.Stage
	}{
		{
			name: "no settings: defaults",
			src:  "stages:\n  - keyword:\n  - vector: {}\n  - rrf:\n",
			want: []stages.Stage{
				&stages.Keyword{Limit: 40, Stopwords: "none", TitleWeight: 1, Score: "chunk", Text: []string{"query"}, List: "keyword", ClientTerms: "all"},
				&stages.Vector{Limit: 40, Ladder: []int{160, 640, 2560, index.MaxKNN}, Search: "binary", Oversample: index.DefaultOversample, Text: []string{"query"}, EmbedAs: "query", List: "vector"},
				&stages.RRF{K: 60, Limit: 30},
			},
		},
		{
			name: "block and flow settings",
			src:  "name: n\nstages:\n  - vector:\n      limit: 10\n      ladder: [10, 20]\n  - rerank: {scorer: bi-encoder, passage: note, candidates: 7}\n  - recency: {weight: 0.005, half_life_days: 90}\n",
			want: []stages.Stage{
				&stages.Vector{Limit: 10, Ladder: []int{10, 20}, Search: "binary", Oversample: index.DefaultOversample, Text: []string{"query"}, EmbedAs: "query", List: "vector"},
				&stages.Rerank{Candidates: 7, Passage: "note", Scorer: "bi-encoder"},
				&stages.Recency{Weight: 0.005, HalfLifeDays: 90},
			},
		},
		{
			name: "exact and binary vector searches",
			src:  "stages:\n  - vector: {search: exact}\n  - hyde: {search: binary, oversample: 20}\n",
			want: []stages.Stage{
				&stages.Vector{Limit: 40, Ladder: []int{160, 640, 2560, index.MaxKNN}, Search: "exact", Text: []string{"query"}, EmbedAs: "query", List: "vector"},
				&stages.Hyde{Limit: 40, Ladder: []int{160, 640, 2560, index.MaxKNN}, Search: "binary", Oversample: 20},
			},
		},
		{
			name: "keyword analysis, weighted fusion, convex and feedback",
			src: "stages:\n  - keyword: {stopwords: english, title_weight: 2.5, score: note}\n  - vector: {limit: 10, ladder: [40]}\n" +
				"  - rrf: {weights: {vector: 1.5}, depth: 20}\n  - feedback: {rm3: true, rocchio: true}\n" +
				"  - convex: {norm: zscore, weights: {keyword: 0.6}, code_weights: {keyword: 0.9}}\n",
			want: []stages.Stage{
				&stages.Keyword{Limit: 40, Stopwords: "english", TitleWeight: 2.5, Score: "note", Text: []string{"query"}, List: "keyword", ClientTerms: "all"},
				&stages.Vector{Limit: 10, Ladder: []int{40}, Search: "binary", Oversample: index.DefaultOversample, Text: []string{"query"}, EmbedAs: "query", List: "vector"},
				&stages.RRF{K: 60, Limit: 30, Weights: map[string]float64{"vector": 1.5}, Depth: 20},
				&stages.Feedback{Docs: 5, RM3: true, Terms: 10, OrigRepeat: 2, Rocchio: true, Beta: 0.3, Limit: 40, Stopwords: "none", TitleWeight: 1},
				&stages.Convex{Norm: "zscore", Weights: map[string]float64{"keyword": 0.6}, CodeWeights: map[string]float64{"keyword": 0.9}, Limit: 30},
			},
		},
		{
			// 64 × 100 passes the KNN cap: the default ladder stops at it
			// instead of failing its own "must rise" check.
			name: "a vector limit over 64 with the default ladder",
			src:  "stages:\n  - vector: {limit: 100}\n  - hyde: {limit: 500}\n",
			want: []stages.Stage{
				&stages.Vector{Limit: 100, Ladder: []int{400, 1600, index.MaxKNN}, Search: "binary", Oversample: index.DefaultOversample, Text: []string{"query"}, EmbedAs: "query", List: "vector"},
				&stages.Hyde{Limit: 500, Ladder: []int{2000, index.MaxKNN}, Search: "binary", Oversample: index.DefaultOversample},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := pipeline.Parse("ok.yaml", []byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg.Stages, tc.want) {
				t.Errorf("stages:\n%#v\nwant\n%#v", cfg.Stages, tc.want)
			}
			if cfg.File != "ok.yaml" {
				t.Errorf("file %q", cfg.File)
			}
		})
	}
	cfg, err := pipeline.Parse("dir/some-name.yaml", []byte("stages:\n  - keyword: {}\n"))
	if err != nil || cfg.Name != "some-name" {
		t.Errorf("a configuration without a name takes its file's: %v %v", cfg, err)
	}
}

// TestRepositoryConfigsParse loads every file in configs/, experiments/ and
// experiments/lab/ (measured once, not in every eval run).
func TestRepositoryConfigsParse(t *testing.T) {
	for _, dir := range []string{"configs", "experiments", "experiments/lab"} {
		files, err := filepath.Glob(filepath.Join(repoRoot, dir, "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("no configurations in %s", dir)
		}
		cfgs, err := pipeline.LoadDir(filepath.Join(repoRoot, dir))
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if len(cfgs) != len(files) {
			t.Fatalf("%s: loaded %d of %d files", dir, len(cfgs), len(files))
		}
		for i, cfg := range cfgs {
			base := strings.TrimSuffix(filepath.Base(files[i]), ".yaml")
			if cfg.Name != base {
				t.Errorf("%s: named %q; the file name is how it is found", files[i], cfg.Name)
			}
			if len(cfg.Stages) == 0 || cfg.Description == "" {
				t.Errorf("%s: %d stages, description %q", files[i], len(cfg.Stages), cfg.Description)
			}
			found, err := pipeline.Find(repoRoot, base)
			if err != nil || found.File != cfg.File && dir == "configs" {
				t.Errorf("Find(%q) = %v, %v", base, found, err)
			}
		}
	}
	if _, err := pipeline.Find(repoRoot, "no-such-configuration"); err == nil {
		t.Error("Find of a missing configuration succeeded")
	}
	raw, err := os.ReadFile(filepath.Join(repoRoot, "configs", "shipping.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pipeline.Parse("shipping.yaml", raw); err != nil {
		t.Errorf("shipping.yaml: %v", err)
	}
}
