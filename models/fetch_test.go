package models

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// tinyFiles are the bytes of a made-up two-file model.
var tinyFiles = map[string][]byte{
	"model.onnx":     []byte("pretend this is an ONNX graph\x00\x01\x02"),
	"tokenizer.json": []byte(`{"pretend": "tokenizer"}`),
}

func tinySpec(sources ...Source) Spec {
	return Spec{
		Name: "tiny-test-model", Role: "embedder", Dim: 8, MaxTokens: 16, Output: "last_hidden_state",
		Files: []File{
			{Name: "model.onnx", Size: int64(len(tinyFiles["model.onnx"])), SHA256: sum(tinyFiles["model.onnx"])},
			{Name: "tokenizer.json", Size: int64(len(tinyFiles["tokenizer.json"])), SHA256: sum(tinyFiles["tokenizer.json"])},
		},
		Sources: sources,
	}
}

// install writes files and, when st is not nil, a stamp into the model's folder.
func install(t *testing.T, dataDir string, s Spec, files map[string][]byte, st *stamp) {
	t.Helper()
	dir := ModelDir(dataDir, s.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if st != nil {
		raw, _ := json.Marshal(st)
		if err := os.WriteFile(filepath.Join(dir, stampName), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func goodStamp() *stamp {
	return &stamp{Source: "test", SHA256: map[string]string{
		"model.onnx": sum(tinyFiles["model.onnx"]), "tokenizer.json": sum(tinyFiles["tokenizer.json"])}}
}

func TestCheck(t *testing.T) {
	s := tinySpec()
	longer := map[string][]byte{"model.onnx": append([]byte("x"), tinyFiles["model.onnx"]...), "tokenizer.json": tinyFiles["tokenizer.json"]}
	oneFile := map[string][]byte{"model.onnx": tinyFiles["model.onnx"]}
	wrongSum := goodStamp()
	wrongSum.SHA256["tokenizer.json"] = strings.Repeat("0", 64)
	tests := []struct {
		name      string
		setup     func(t *testing.T, dataDir string)
		installed bool
		problem   string
	}{
		{"no folder", func(t *testing.T, d string) {}, false, "not fetched"},
		{"files without installed.json", func(t *testing.T, d string) { install(t, d, s, tinyFiles, nil) }, false, "not fetched"},
		{"unreadable installed.json", func(t *testing.T, d string) {
			install(t, d, s, tinyFiles, nil)
			os.WriteFile(filepath.Join(ModelDir(d, s.Name), stampName), []byte("{not json"), 0o644)
		}, false, "not fetched"},
		{"stamp, but a file of the wrong size", func(t *testing.T, d string) { install(t, d, s, longer, goodStamp()) }, false, "model.onnx differs"},
		{"stamp, but a file missing", func(t *testing.T, d string) { install(t, d, s, oneFile, goodStamp()) }, false, "missing tokenizer.json"},
		{"stamp with another sha256", func(t *testing.T, d string) { install(t, d, s, tinyFiles, wrongSum) }, false, "tokenizer.json differs"},
		{"installed", func(t *testing.T, d string) { install(t, d, s, tinyFiles, goodStamp()) }, true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dataDir := t.TempDir()
			tc.setup(t, dataDir)
			st := Check(dataDir, s)
			if st.Installed != tc.installed || !strings.Contains(st.Problem, tc.problem) || (tc.installed && st.Problem != "") {
				t.Errorf("Check = installed %v, problem %q; want %v, %q", st.Installed, st.Problem, tc.installed, tc.problem)
			}
			if st.Name != s.Name || st.Role != s.Role || st.Dir != ModelDir(dataDir, s.Name) {
				t.Errorf("Check = %+v, want name, role and dir filled in", st)
			}
			if tc.installed && (st.Source != "test" || st.SHA256["model.onnx"] != s.Files[0].SHA256) {
				t.Errorf("Check = %+v, want the stamp's source and hashes", st)
			}
		})
	}
}

// fileServer serves routes (URL path → bytes) and counts requests.
type fileServer struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func newFileServer(t *testing.T, routes map[string][]byte) *fileServer {
	fs := &fileServer{hits: map[string]int{}}
	fs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fs.mu.Lock()
		fs.hits[r.URL.Path]++
		fs.mu.Unlock()
		b, ok := routes[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(fs.Close)
	return fs
}

func (fs *fileServer) total() int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n := 0
	for _, h := range fs.hits {
		n += h
	}
	return n
}

func (fs *fileServer) source(label, prefix string) Source {
	return Source{Kind: "http", Label: label, URLs: map[string]string{
		"model.onnx":     fs.URL + "/" + prefix + "/model.onnx",
		"tokenizer.json": fs.URL + "/" + prefix + "/tokenizer.json",
	}}
}

func TestFetch(t *testing.T) {
	corrupt := append([]byte(nil), tinyFiles["model.onnx"]...)
	corrupt[3] ^= 0xFF // same size, other bytes
	srv := newFileServer(t, map[string][]byte{
		"/good/model.onnx":     tinyFiles["model.onnx"],
		"/good/tokenizer.json": tinyFiles["tokenizer.json"],
		"/bad/model.onnx":      corrupt,
		"/bad/tokenizer.json":  tinyFiles["tokenizer.json"],
		"/half/model.onnx":     tinyFiles["model.onnx"],
		"/half/tokenizer.json": []byte(`{"other": "tokenizer"}`),
	})
	good := srv.source("good mirror", "good")
	bad := srv.source("bad mirror", "bad")
	half := srv.source("half mirror", "half")
	gone := srv.source("gone mirror", "gone") // 404s
	noURL := Source{Kind: "http", Label: "no-url mirror", URLs: map[string]string{"model.onnx": srv.URL + "/good/model.onnx"}}
	weird := Source{Kind: "carrier-pigeon", Label: "pigeon"}
	badMaven := Source{Kind: "maven", Label: "bad maven", Artifact: "not-an-artifact"}

	tests := []struct {
		name    string
		sources []Source
		ok      bool
		from    string   // label of the source that installed it
		logs    []string // one substring per log line
	}{
		{"first source", []Source{good, bad}, true, "good mirror", []string{"installed from good mirror"}},
		{"wrong bytes rejected, next source tried", []Source{bad, good}, true, "good mirror",
			[]string{"bad mirror unavailable: model.onnx has sha256", "installed from good mirror"}},
		{"second file wrong, next source tried", []Source{half, good}, true, "good mirror",
			[]string{"half mirror unavailable: tokenizer.json has sha256", "installed from good mirror"}},
		{"404, next source tried", []Source{gone, good}, true, "good mirror",
			[]string{"gone mirror unavailable: GET", "installed from good mirror"}},
		{"every source fails", []Source{bad, gone, noURL, weird, badMaven}, false, "",
			[]string{"bad mirror unavailable", "gone mirror unavailable: GET", "no-url mirror unavailable: no URL", `pigeon unavailable: unknown source kind "carrier-pigeon"`, "bad maven unavailable: artifact"}},
		{"no sources", nil, false, "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dataDir := t.TempDir()
			s := tinySpec(tc.sources...)
			var logs []string
			st, err := Fetch(context.Background(), dataDir, s, FetchOptions{}, func(l string) { logs = append(logs, l) })
			dir := ModelDir(dataDir, s.Name)
			if len(logs) != len(tc.logs) {
				t.Errorf("log = %q, want %d lines like %q", logs, len(tc.logs), tc.logs)
			} else {
				for i, want := range tc.logs {
					if !strings.Contains(logs[i], want) {
						t.Errorf("log[%d] = %q, want it to contain %q", i, logs[i], want)
					}
				}
			}
			parts, _ := filepath.Glob(filepath.Join(dir, "*.part"))
			if len(parts) != 0 {
				t.Errorf("partial downloads left: %v", parts)
			}
			if !tc.ok {
				if err == nil || !errors.Is(err, ErrNotInstalled) {
					t.Fatalf("Fetch = %v, want an error wrapping ErrNotInstalled", err)
				}
				for _, src := range tc.sources {
					if !strings.Contains(err.Error(), src.Label) {
						t.Errorf("error %q does not name source %q", err, src.Label)
					}
				}
				if st.Installed {
					t.Error("status says installed")
				}
				if _, err := os.Stat(filepath.Join(dir, stampName)); err == nil {
					t.Error("installed.json written for a failed fetch")
				}
				return
			}
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			if !st.Installed || st.Source != tc.from || st.Problem != "" {
				t.Errorf("status = %+v, want installed from %q", st, tc.from)
			}
			for name, want := range tinyFiles {
				got, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil || string(got) != string(want) {
					t.Errorf("%s = %q, %v; want the pinned bytes", name, got, err)
				}
			}
			var sp stamp
			raw, err := os.ReadFile(filepath.Join(dir, stampName))
			if err != nil || json.Unmarshal(raw, &sp) != nil {
				t.Fatalf("installed.json: %v %s", err, raw)
			}
			if sp.Source != tc.from || sp.SHA256["model.onnx"] != s.Files[0].SHA256 || sp.SHA256["tokenizer.json"] != s.Files[1].SHA256 ||
				time.Since(sp.Verified) > time.Hour || sp.Verified.After(time.Now().Add(time.Minute)) {
				t.Errorf("installed.json = %+v", sp)
			}
			if !Check(dataDir, s).Installed {
				t.Error("Check after Fetch says not installed")
			}
		})
	}
}

func TestFetchIdempotent(t *testing.T) {
	srv := newFileServer(t, map[string][]byte{
		"/good/model.onnx":     tinyFiles["model.onnx"],
		"/good/tokenizer.json": tinyFiles["tokenizer.json"],
	})
	s := tinySpec(srv.source("good", "good"))
	dataDir := t.TempDir()
	nolog := func(string) {}
	if _, err := Fetch(context.Background(), dataDir, s, FetchOptions{}, nolog); err != nil {
		t.Fatal(err)
	}
	if n := srv.total(); n != 2 {
		t.Fatalf("first fetch made %d requests, want 2", n)
	}
	st, err := Fetch(context.Background(), dataDir, s, FetchOptions{}, nolog)
	if err != nil || !st.Installed {
		t.Fatalf("second fetch = %+v, %v", st, err)
	}
	if n := srv.total(); n != 2 {
		t.Errorf("an installed model was downloaded again (%d requests)", n)
	}

	// A damaged install (a file of the wrong size) is fetched again.
	if err := os.WriteFile(filepath.Join(ModelDir(dataDir, s.Name), "model.onnx"), []byte("short"), 0o644); err != nil {
		t.Fatal(err)
	}
	if Check(dataDir, s).Installed {
		t.Fatal("Check accepts a file of the wrong size")
	}
	st, err = Fetch(context.Background(), dataDir, s, FetchOptions{}, nolog)
	if err != nil || !st.Installed {
		t.Fatalf("repair fetch = %+v, %v", st, err)
	}
	if n := srv.total(); n != 4 {
		t.Errorf("repair made %d requests in all, want 4", n)
	}
}

func TestFetchCanceled(t *testing.T) {
	srv := newFileServer(t, map[string][]byte{"/good/model.onnx": tinyFiles["model.onnx"], "/good/tokenizer.json": tinyFiles["tokenizer.json"]})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dataDir := t.TempDir()
	s := tinySpec(srv.source("good", "good"))
	_, err := Fetch(ctx, dataDir, s, FetchOptions{}, func(string) {})
	if !errors.Is(err, ErrNotInstalled) {
		t.Errorf("Fetch with a canceled context = %v, want ErrNotInstalled", err)
	}
	if Check(dataDir, s).Installed {
		t.Error("installed despite the canceled context")
	}
}
