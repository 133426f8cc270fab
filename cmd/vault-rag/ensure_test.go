package main

import (
	"archive/zip"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vault-rag/vault-rag/internal/modeltest"
	"github.com/vault-rag/vault-rag/internal/vaulttest"
	"github.com/vault-rag/vault-rag/models"
)

// chineseNotes are a vault written in Chinese: its first index chooses
// bge-small-zh-v1.5-q, which setup does not fetch.
var chineseNotes = map[string]string{
	"导入.md": "# 从印象笔记导入\n\n你可以从印象笔记导入笔记和附件。导入之后，笔记保存在库的文件夹里。\n",
	"同步.md": "# 同步\n\n同步服务让你在多台设备之间保持笔记一致，并保留版本历史。\n",
}

// mavenRepo writes a Maven repository on disk (the layout Maven Central
// has) holding the jar of spec's maven source, made from the files the
// checkout has installed: a stand-in for Maven Central that needs no
// network.
func mavenRepo(t *testing.T, spec models.Spec) (repo, label string) {
	t.Helper()
	var src models.Source
	for _, s := range spec.Sources {
		if s.Kind == "maven" {
			src = s
		}
	}
	parts := strings.Split(src.Artifact, ":")
	if len(parts) != 3 {
		t.Fatalf("%s has no maven source", spec.Name)
	}
	repo = t.TempDir()
	jar := filepath.Join(repo, filepath.FromSlash(strings.ReplaceAll(parts[0], ".", "/")), parts[1], parts[2], parts[1]+"-"+parts[2]+".jar")
	if err := os.MkdirAll(filepath.Dir(jar), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(jar)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for file, entry := range src.Entries {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: entry, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		in, err := os.Open(filepath.Join(models.ModelDir(filepath.Join(repoRoot, "data"), spec.Name), file))
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.Copy(w, in)
		in.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return repo, src.Label
}

// bareData is a data folder with the checkout's libraries and no model.
func bareData(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(repoRoot, "data", "lib"), filepath.Join(dir, "lib")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// offline runs the binary with data as its data folder, jars from repo,
// Hugging Face's URLs sent to an empty folder and no mvn on the path: no
// request can leave the machine.
func offline(ctx context.Context, t *testing.T, data, repo, vault, db string, args ...string) *exec.Cmd {
	t.Helper()
	c := command(t, t.TempDir(), vault, db, args...)
	cmd := exec.CommandContext(ctx, c.Path, c.Args[1:]...)
	cmd.Dir = c.Dir
	cmd.Env = append(c.Env, "VAULT_RAG_DATA="+data, "VAULT_RAG_MAVEN_REPO=file://"+repo,
		"HF_ENDPOINT=file://"+t.TempDir(), "PATH="+t.TempDir())
	return cmd
}

// The first index of a vault whose embedder is not installed fetches it,
// through the code `models fetch` runs, saying so in one line on stderr
// first; the next reindex finds it installed and says nothing of it.
func TestReindexFetchesItsEmbedder(t *testing.T) {
	const name = "bge-small-zh-v1.5-q"
	spec, repo, label, data, vault := chineseVaultOffline(t, name)
	db := filepath.Join(t.TempDir(), "vault.db")
	ctx := context.Background()

	r := runCmd(t, offline(ctx, t, data, repo, vault, db, "reindex"))
	announce := "reindex: fetching " + name + " (24 MB) into " + models.ModelDir(data, name) + "; once\n"
	installed := "reindex: " + name + " installed from " + label + " via file://" + repo + "\n"
	if r.code != 0 || !strings.Contains(r.stderr, announce+installed) || !strings.Contains(r.stdout, "indexed 2 notes") {
		t.Fatalf("reindex of a Chinese vault: want %q then %q on stderr and the index built, got %s", announce, installed, r)
	}
	if st := models.Check(data, spec); !st.Installed {
		t.Fatalf("%s not installed after the reindex: %s", name, st.Problem)
	}
	if strings.Contains(r.stdout, "fetching") {
		t.Errorf("the fetch was announced on stdout:\n%s", r.stdout)
	}
	r = runCmd(t, offline(ctx, t, data, repo, vault, db, "reindex", "--incremental"))
	if r.code != 0 || strings.Contains(r.stderr, "fetching") {
		t.Errorf("a second reindex: want no fetch, got %s", r)
	}
}

// chineseVaultOffline is what the fetch-on-first-use tests start from: the
// model's spec, a file:// Maven repository serving its jar (and the source's
// label), a data folder without it, and a vault of Chinese notes.
func chineseVaultOffline(t *testing.T, name string) (spec models.Spec, repo, label, data, vault string) {
	t.Helper()
	binary(t)
	spec = mustSpec(t, name)
	if st := models.Check(filepath.Join(repoRoot, "data"), spec); !st.Installed {
		modeltest.Missing(t, "%s is not installed in the checkout (%s; run `make lab-models`)", name, st.Problem)
	}
	repo, label = mavenRepo(t, spec)
	data = bareData(t)
	vault = t.TempDir()
	vaulttest.WriteTree(t, vault, chineseNotes, time.Now())
	return spec, repo, label, data, vault
}

// serve fetches the embedder before it serves; over stdio the line goes to
// stderr, and stdout carries nothing but the protocol.
func TestServeFetchesItsEmbedder(t *testing.T) {
	const name = "bge-small-zh-v1.5-q"
	spec, repo, _, data, vault := chineseVaultOffline(t, name)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := offline(ctx, t, data, repo, vault, filepath.Join(t.TempDir(), "vault.db"), "serve", "--transport", "stdio", "--watch=false")
	cmd.Stdin = strings.NewReader("") // the client hangs up at once
	r := runCmd(t, cmd)
	if !strings.Contains(r.stderr, "serve: fetching "+name+" (24 MB)") || r.stdout != "" {
		t.Errorf("serve --transport stdio: want the fetch announced on stderr and nothing on stdout, got %s", r)
	}
	if st := models.Check(data, spec); !st.Installed {
		t.Errorf("%s not installed after serve: %s", name, st.Problem)
	}
}

// A fetch that fails stops the command with one error saying what to run,
// and builds nothing.
func TestReindexFetchFails(t *testing.T) {
	binary(t)
	data := bareData(t)
	vault := t.TempDir()
	vaulttest.WriteTree(t, vault, chineseNotes, time.Now())
	db := filepath.Join(t.TempDir(), "vault.db")
	r := runCmd(t, offline(context.Background(), t, data, t.TempDir(), vault, db, "reindex"))
	for _, want := range []string{
		"reindex: fetching bge-small-zh-v1.5-q (24 MB)",
		"vault-rag reindex: the embedder bge-small-zh-v1.5-q is not installed and could not be fetched",
		"mvn, the fallback, is not installed",
		"run `vault-rag models fetch bge-small-zh-v1.5-q`",
		"docs/offline.md",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("a failed fetch: stderr does not say %q", want)
		}
	}
	if r.code != 1 || r.stdout != "" {
		t.Errorf("a failed fetch: want exit 1 and nothing on stdout, got %s", r)
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("an index was built without its embedder")
	}
}
