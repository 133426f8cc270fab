package models

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

func TestHubMirrorURL(t *testing.T) {
	const u = "https://huggingface.co/BAAI/bge-small-en-v1.5/resolve/5c38ec7c405ec4b44b94cc5a9bb96e735b38267a/tokenizer.json"
	for _, tc := range []struct{ endpoint, in, want string }{
		{"", u, u},
		{"https://huggingface.co", u, u},
		{"https://hf-mirror.example", u, "https://hf-mirror.example/BAAI/bge-small-en-v1.5/resolve/5c38ec7c405ec4b44b94cc5a9bb96e735b38267a/tokenizer.json"},
		{"http://10.0.0.5:8080/hf/", u, "http://10.0.0.5:8080/hf/BAAI/bge-small-en-v1.5/resolve/5c38ec7c405ec4b44b94cc5a9bb96e735b38267a/tokenizer.json"},
		{"https://hf-mirror.example", "https://example.org/huggingface.co/x", "https://example.org/huggingface.co/x"},
		{"https://hf-mirror.example", "https://huggingface.com/x", "https://huggingface.com/x"},
	} {
		if got := (FetchOptions{Hub: tc.endpoint}).hubURL(tc.in); got != tc.want {
			t.Errorf("hub %q: hubURL(%q) = %q, want %q", tc.endpoint, tc.in, got, tc.want)
		}
	}
}

// TestFetchFromMirror fetches a model whose manifest names Hugging Face from a
// mirror (FetchOptions.Hub, HF_ENDPOINT in the binary), and says so.
func TestFetchFromMirror(t *testing.T) {
	rev := strings.Repeat("ab", 20)
	srv := newFileServer(t, map[string][]byte{
		"/org/tiny/resolve/" + rev + "/model.onnx":     tinyFiles["model.onnx"],
		"/org/tiny/resolve/" + rev + "/tokenizer.json": tinyFiles["tokenizer.json"],
	})
	hub := Source{Kind: "http", Label: "Hugging Face org/tiny@" + rev[:8], URLs: map[string]string{
		"model.onnx":     "https://huggingface.co/org/tiny/resolve/" + rev + "/model.onnx",
		"tokenizer.json": "https://huggingface.co/org/tiny/resolve/" + rev + "/tokenizer.json",
	}}
	var logs []string
	st, err := Fetch(context.Background(), t.TempDir(), tinySpec(hub), FetchOptions{Hub: srv.URL}, func(l string) { logs = append(logs, l) })
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	want := hub.Label + " via " + srv.URL
	if !st.Installed || st.Source != want {
		t.Errorf("status %+v, want installed from %q", st, want)
	}
	if len(logs) != 1 || !strings.Contains(logs[0], want) {
		t.Errorf("log %q, want one line naming %q", logs, want)
	}
}

// TestFetchThroughProxy fetches through the proxy FetchOptions.Proxy picks
// (the host in the URLs does not exist), and says so without credentials.
func TestFetchThroughProxy(t *testing.T) {
	proxy := newFileServer(t, map[string][]byte{
		"/org/tiny/model.onnx":     tinyFiles["model.onnx"],
		"/org/tiny/tokenizer.json": tinyFiles["tokenizer.json"],
	})
	via, err := url.Parse(proxy.URL)
	if err != nil {
		t.Fatal(err)
	}
	via.User = url.UserPassword("user", "secret")
	src := Source{Kind: "http", Label: "somewhere", URLs: map[string]string{
		"model.onnx":     "http://models.invalid/org/tiny/model.onnx",
		"tokenizer.json": "http://models.invalid/org/tiny/tokenizer.json",
	}}
	st, err := Fetch(context.Background(), t.TempDir(), tinySpec(src), FetchOptions{Proxy: http.ProxyURL(via)}, nil)
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	if want := "somewhere through proxy " + proxy.URL; !st.Installed || st.Source != want {
		t.Errorf("status %+v, want installed from %q", st, want)
	}
}

// TestManifestPinsRevisions: every Hugging Face URL names a commit, not a
// branch that can move under the sha256. The exceptions are listed with why.
func TestManifestPinsRevisions(t *testing.T) {
	unpinned := map[string]string{
		// No commit hash for Xenova/bge-small-en-v1.5 could be found from
		// here; the sha256 still decides, and Maven Central ships the same bytes.
		"bge-small-en-v1.5-q": "revision of Xenova/bge-small-en-v1.5 unknown",
		// Likewise for Xenova/bge-small-zh-v1.5 (2026-12-01): Maven Central's
		// langchain4j jars ship Xenova's files, sha256 as pinned.
		"bge-small-zh-v1.5":   "revision of Xenova/bge-small-zh-v1.5 unknown",
		"bge-small-zh-v1.5-q": "revision of Xenova/bge-small-zh-v1.5 unknown",
	}
	pinned := regexp.MustCompile(`^https://huggingface\.co/[^/]+/[^/]+/resolve/[0-9a-f]{40}/`)
	m, err := LoadManifest()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range m.Models {
		for _, src := range s.Sources {
			for file, u := range src.URLs {
				if !strings.HasPrefix(u, "https://huggingface.co/") {
					continue
				}
				n++
				if !pinned.MatchString(u) && unpinned[s.Name] == "" {
					t.Errorf("%s %s: %s is not pinned to a commit", s.Name, file, u)
				}
			}
		}
	}
	if n == 0 {
		t.Error("no Hugging Face URL in the manifest: the test checks nothing")
	}
}

// A fetch that no source completes leaves nothing under models/: no empty
// folder, no staging folder, no partial file.
func TestFetchFailureLeavesNothing(t *testing.T) {
	srv := newFileServer(t, map[string][]byte{"/half/model.onnx": tinyFiles["model.onnx"]}) // tokenizer.json 404s
	dataDir := t.TempDir()
	if _, err := Fetch(context.Background(), dataDir, tinySpec(srv.source("half mirror", "half")), FetchOptions{}, nil); err == nil {
		t.Fatal("Fetch succeeded without tokenizer.json")
	}
	if got := listTree(t, dataDir); len(got) != 1 || got[0] != "models" {
		t.Errorf("data folder holds %v after a failed fetch, want only models/", got)
	}
}
