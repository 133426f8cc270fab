package models

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

func TestManifest(t *testing.T) {
	m, err := LoadManifest()
	if err != nil {
		t.Fatalf("LoadManifest: %v", err)
	}
	if len(m.Models) < 2 {
		t.Fatalf("%d models, want at least an embedder and a cross-encoder", len(m.Models))
	}
	names := map[string]bool{}
	for _, s := range m.Models {
		t.Run(s.Name, func(t *testing.T) {
			if s.Name == "" || names[s.Name] {
				t.Errorf("name %q empty or repeated", s.Name)
			}
			names[s.Name] = true
			switch s.Role {
			case "embedder":
				if s.Dim <= 0 {
					t.Errorf("embedder dim %d", s.Dim)
				}
			case "cross-encoder":
			case RoleCostStandIn:
			default:
				t.Errorf("role %q, want embedder, cross-encoder or %s", s.Role, RoleCostStandIn)
			}
			if (s.Role == RoleCostStandIn) != (s.StandInFor != "") {
				t.Errorf("role %q, stand_in_for %q: a cost stand-in, and only one, names what it stands in for", s.Role, s.StandInFor)
			}
			if s.MaxTokens <= 0 || s.Output == "" || s.Description == "" {
				t.Errorf("max_tokens %d, output %q, description %q: want all set", s.MaxTokens, s.Output, s.Description)
			}
			poolings := pairPoolings
			if s.Role == RoleEmbedder {
				poolings = embedderPoolings
			}
			if _, err := s.poolingAmong(poolings); err != nil {
				t.Errorf("a %s: %v", s.Role, err)
			}
			if len(s.Files) == 0 {
				t.Fatal("no files")
			}
			files := map[string]bool{}
			for _, f := range s.Files {
				if f.Name == "" || files[f.Name] {
					t.Errorf("file name %q empty or repeated", f.Name)
				}
				files[f.Name] = true
				if f.Size <= 0 {
					t.Errorf("%s: size %d", f.Name, f.Size)
				}
				if !hex64.MatchString(f.SHA256) {
					t.Errorf("%s: sha256 %q is not 64 lower-case hex digits", f.Name, f.SHA256)
				}
			}
			for _, want := range []string{"model.onnx", "tokenizer.json"} {
				if !files[want] {
					t.Errorf("no %s among the files", want)
				}
			}
			if len(s.Sources) == 0 {
				t.Fatal("no sources")
			}
			for _, src := range s.Sources {
				if src.Label == "" {
					t.Errorf("a %s source without a label", src.Kind)
				}
				for name := range files {
					switch src.Kind {
					case "http":
						if u := src.URLs[name]; !strings.HasPrefix(u, "https://") {
							t.Errorf("%s: URL for %s is %q, want https", src.Label, name, u)
						}
					case "maven":
						if src.Entries[name] == "" || strings.Count(src.Artifact, ":") != 2 {
							t.Errorf("%s: artifact %q, entry for %s %q", src.Label, src.Artifact, name, src.Entries[name])
						}
					default:
						t.Errorf("%s: unknown source kind %q", src.Label, src.Kind)
					}
				}
			}
		})
	}
}

func TestManifestLookup(t *testing.T) {
	m, err := LoadManifest()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		role Role // "" means Lookup fails
		dim  int
	}{
		{DefaultEmbedder, "embedder", 384},
		{DefaultCrossEncoder, "cross-encoder", 0},
		{"all-MiniLM-L6-v2-standin", RoleCostStandIn, 0},
		{"all-MiniLM-L6-v2-q-standin", RoleCostStandIn, 0},
		{"no-such-model", "", 0},
		{"", "", 0},
		{strings.ToUpper(DefaultEmbedder), "", 0}, // names are exact
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := m.Lookup(tc.name)
			if tc.role == "" {
				if err == nil {
					t.Fatalf("Lookup(%q) = %+v, want an error", tc.name, s)
				}
				// The error lists what is known, so a typo is easy to fix.
				for _, known := range []string{DefaultEmbedder, DefaultCrossEncoder} {
					if !strings.Contains(err.Error(), known) {
						t.Errorf("error %q does not list %s", err, known)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Name != tc.name || s.Role != tc.role || s.Dim != tc.dim {
				t.Errorf("Lookup(%q) = %s %s dim %d, want %s dim %d", tc.name, s.Name, s.Role, s.Dim, tc.role, tc.dim)
			}
		})
	}
}

func TestISAFrom(t *testing.T) {
	for _, tc := range []struct{ arch, cpuinfo, want string }{
		{"amd64", "processor\t: 0\nflags\t\t: fpu sse2 avx2 fma avx avx512f avx512_vnni amx_int8 f16c sse4_2\nbugs\t: x\nflags\t: avx\n", "amd64: amx_int8 avx avx2 avx512_vnni avx512f f16c fma"},
		{"amd64", "flags\t: fpu sse2 avx avx2 fma f16c\n", "amd64: avx avx2 f16c fma"},
		{"arm64", "Features\t: fp asimd asimddp sve i8mm bf16 crc32\n", "arm64: asimd asimddp bf16 i8mm sve"},
		{"amd64", "", "amd64: unknown"},
	} {
		if got := isaFrom(tc.arch, tc.cpuinfo); got != tc.want {
			t.Errorf("isaFrom(%q) = %q, want %q", tc.cpuinfo, got, tc.want)
		}
	}
}

// TestEmbedderForScript: a Chinese vault gets the Chinese int8 model, any
// other script the English default; the warning names a script the model
// was not trained on, and only that.
func TestEmbedderForScript(t *testing.T) {
	m, err := LoadManifest()
	if err != nil {
		t.Fatal(err)
	}
	for script, want := range map[string]string{"Latin": DefaultEmbedder, "Han": "bge-small-zh-v1.5-q", "Cyrillic": DefaultEmbedder, "": DefaultEmbedder} {
		if got := m.EmbedderFor(script); got != want {
			t.Errorf("EmbedderFor(%q) = %s, want %s", script, got, want)
		}
	}
	for _, name := range []string{"bge-small-zh-v1.5", "bge-small-zh-v1.5-q"} {
		s, err := m.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if s.Dim != 512 || s.QueryPrefix == "" || !s.Covers("Han") {
			t.Errorf("%s: dim %d, query prefix %q, covers Han %v", name, s.Dim, s.QueryPrefix, s.Covers("Han"))
		}
		if got := m.GateModel(name); got != "bge-small-zh-v1.5" {
			t.Errorf("GateModel(%s) = %s, want the fp32 original", name, got)
		}
	}
	en, _ := m.Lookup(DefaultEmbedder)
	if w := en.ScriptWarning("Cyrillic", 0.81); !strings.Contains(w, "81% of this vault's letters are Cyrillic") || !strings.Contains(w, "keyword search works") {
		t.Errorf("warning for a Cyrillic vault: %q", w)
	}
	if w := en.ScriptWarning("Latin", 0.99); w != "" {
		t.Errorf("warning for a Latin vault: %q", w)
	}
	if w := en.ScriptWarning("", 0); w != "" {
		t.Errorf("warning for an empty vault: %q", w)
	}
}

// A manifest entry's role, output and pooling are refused unless they are
// words vault-rag reads, naming those; JSON reads and writes them as the
// same strings.
func TestSpecWords(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`{"role": "reranker"}`, `role "reranker" is not one of embedder, cross-encoder, cost-stand-in`},
		{`{"role": ""}`, `role "" is not one of embedder, cross-encoder, cost-stand-in`},
		{`{"output": "pooler_output"}`, `output "pooler_output" is not one of last_hidden_state, logits`},
		{`{"pooling": "max"}`, `pooling "max" is not one of cls, mean, logit, cls0`},
	} {
		var s Spec
		if err := json.Unmarshal([]byte(tc.src), &s); err == nil || err.Error() != tc.want {
			t.Errorf("%s: error %v, want %q", tc.src, err, tc.want)
		}
	}
	var raw struct{ Models []map[string]any }
	if err := json.Unmarshal(manifestJSON, &raw); err != nil {
		t.Fatal(err)
	}
	m, err := LoadManifest()
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range m.Models {
		out, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var back map[string]any
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"role", "output", "pooling"} {
			if back[key] != raw.Models[i][key] {
				t.Errorf("%s: %s written as %v, read as %v", s.Name, key, back[key], raw.Models[i][key])
			}
		}
	}
}
