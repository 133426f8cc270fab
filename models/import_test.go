package models

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// jarSpec is the tiny model with a Maven source whose jar names its files
// otherwise, as the langchain4j jars do.
func jarSpec() Spec {
	return tinySpec(Source{Kind: "maven", Label: "test jar", Artifact: "g:a:1",
		Entries: map[string]string{"model.onnx": "tiny.onnx", "tokenizer.json": "tiny-tokenizer.json"}})
}

func writeTree(t *testing.T, dir string, files map[string][]byte) string {
	t.Helper()
	for name, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func writeZip(t *testing.T, p string, files map[string][]byte) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range sortedKeys(files) {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(files[name])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func writeTarGz(t *testing.T, p string, files map[string][]byte) string {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, name := range sortedKeys(files) {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(files[name])), Typeflag: tar.TypeReg})
		tw.Write(files[name])
	}
	tw.Close()
	gz.Close()
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func sortedKeys(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// listTree lists every path under root (relative, slash-separated).
func listTree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && p != root {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func TestImportInstalls(t *testing.T) {
	s := jarSpec()
	jarFiles := map[string][]byte{"META-INF/MANIFEST.MF": []byte("Manifest-Version: 1.0\n"),
		"tiny.onnx": tinyFiles["model.onnx"], "tiny-tokenizer.json": tinyFiles["tokenizer.json"], "README": []byte("a readme")}
	tests := []struct {
		name  string
		paths func(t *testing.T, src string) []string
	}{
		{"a folder of the manifest's names", func(t *testing.T, src string) []string {
			return []string{writeTree(t, src, map[string][]byte{"model.onnx": tinyFiles["model.onnx"], "tokenizer.json": tinyFiles["tokenizer.json"], "notes.txt": []byte("x")})}
		}},
		{"a folder of another layout (Hugging Face's onnx/ subfolder)", func(t *testing.T, src string) []string {
			return []string{writeTree(t, src, map[string][]byte{"onnx/model.onnx": tinyFiles["model.onnx"], "tokenizer.json": tinyFiles["tokenizer.json"]})}
		}},
		{"the files themselves, renamed", func(t *testing.T, src string) []string {
			writeTree(t, src, map[string][]byte{"download (1)": tinyFiles["model.onnx"], "tok": tinyFiles["tokenizer.json"]})
			return []string{filepath.Join(src, "download (1)"), filepath.Join(src, "tok")}
		}},
		{"the Maven jar", func(t *testing.T, src string) []string {
			return []string{writeZip(t, filepath.Join(src, "a-1.jar"), jarFiles)}
		}},
		{"a folder holding the jar", func(t *testing.T, src string) []string {
			writeZip(t, filepath.Join(src, "m2", "a-1.jar"), jarFiles)
			return []string{src}
		}},
		{"a .tar.gz", func(t *testing.T, src string) []string {
			return []string{writeTarGz(t, filepath.Join(src, "model.tar.gz"), map[string][]byte{"x/model.onnx": tinyFiles["model.onnx"], "x/tokenizer.json": tinyFiles["tokenizer.json"]})}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dataDir, src := t.TempDir(), t.TempDir()
			st, err := Import(dataDir, s, tc.paths(t, src))
			if err != nil {
				t.Fatalf("Import: %v", err)
			}
			if !st.Installed || !strings.HasPrefix(st.Source, "imported from ") {
				t.Fatalf("status %+v, want installed and imported", st)
			}
			if c := Check(dataDir, s); !c.Installed {
				t.Fatalf("Check after import: %+v", c)
			}
			// Exactly what Fetch leaves: the files and installed.json, nothing else.
			if got, want := listTree(t, dataDir), []string{"models", "models/" + s.Name, "models/" + s.Name + "/installed.json", "models/" + s.Name + "/model.onnx", "models/" + s.Name + "/tokenizer.json"}; !reflect.DeepEqual(got, want) {
				t.Errorf("data folder holds %v, want %v", got, want)
			}
			for name, b := range tinyFiles {
				got, _ := os.ReadFile(filepath.Join(ModelDir(dataDir, s.Name), name))
				if !bytes.Equal(got, b) {
					t.Errorf("%s installed with other bytes", name)
				}
			}
			var sp stamp
			raw, _ := os.ReadFile(filepath.Join(ModelDir(dataDir, s.Name), stampName))
			if err := json.Unmarshal(raw, &sp); err != nil || sp.SHA256["model.onnx"] != s.Files[0].SHA256 || sp.Verified.IsZero() {
				t.Errorf("installed.json = %s (%v), want the sha256 of each file and a time", raw, err)
			}
		})
	}
}

func TestImportRefuses(t *testing.T) {
	s := jarSpec()
	wrong := []byte("pretend this is an ONNX graph\x00\x01\x03") // same size, another byte
	truncated := tinyFiles["model.onnx"][:10]
	tests := []struct {
		name  string
		files map[string][]byte
		want  []string // every one must be in the error's one line
		isErr error
	}{
		{"wrong digest", map[string][]byte{"model.onnx": wrong, "tokenizer.json": tinyFiles["tokenizer.json"]},
			[]string{"model.onnx", sum(wrong), s.Files[0].SHA256}, ErrMismatch},
		{"truncated", map[string][]byte{"model.onnx": truncated, "tokenizer.json": tinyFiles["tokenizer.json"]},
			[]string{"model.onnx", sum(truncated), s.Files[0].SHA256, "10 bytes"}, ErrMismatch},
		{"wrong digest inside a jar's entry name", map[string][]byte{"tiny.onnx": tinyFiles["model.onnx"], "tiny-tokenizer.json": []byte(`{"other": "tokenizer"}`)},
			[]string{"tokenizer.json", sum([]byte(`{"other": "tokenizer"}`)), s.Files[1].SHA256}, ErrMismatch},
		{"a file missing", map[string][]byte{"model.onnx": tinyFiles["model.onnx"]},
			[]string{"no file for tokenizer.json", "tiny-tokenizer.json", s.Files[1].SHA256}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, installedBefore := range []bool{false, true} {
				dataDir, src := t.TempDir(), t.TempDir()
				if installedBefore {
					install(t, dataDir, s, tinyFiles, goodStamp())
				}
				before := listTree(t, dataDir)
				_, err := Import(dataDir, s, []string{writeTree(t, src, tc.files)})
				if err == nil {
					t.Fatal("Import accepted it")
				}
				if tc.isErr != nil && !errors.Is(err, tc.isErr) {
					t.Errorf("error %v does not wrap %v", err, tc.isErr)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error is not one line: %q", err)
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				// Nothing half-installed: the data folder is as it was (the
				// models/ folder itself may now exist).
				after := listTree(t, dataDir)
				if !installedBefore {
					before = []string{"models"}
				}
				if !reflect.DeepEqual(after, before) {
					t.Errorf("installed before %v: data folder went from %v to %v", installedBefore, before, after)
				}
				if Check(dataDir, s).Installed != installedBefore {
					t.Errorf("installed before %v: Check now says %+v", installedBefore, Check(dataDir, s))
				}
			}
		})
	}
	t.Run("a path that does not exist", func(t *testing.T) {
		dataDir := t.TempDir()
		if _, err := Import(dataDir, s, []string{filepath.Join(dataDir, "nope")}); err == nil {
			t.Error("Import accepted a missing path")
		}
		if got := listTree(t, dataDir); !reflect.DeepEqual(got, []string{"models"}) {
			t.Errorf("data folder holds %v after a failed import", got)
		}
	})
}

func TestImportReplacesABrokenInstall(t *testing.T) {
	s := jarSpec()
	dataDir, src := t.TempDir(), t.TempDir()
	install(t, dataDir, s, map[string][]byte{"model.onnx": []byte("half"), "model.onnx.part": []byte("x")}, nil)
	if _, err := Import(dataDir, s, []string{writeTree(t, src, tinyFiles)}); err != nil {
		t.Fatal(err)
	}
	if got, want := listTree(t, ModelDir(dataDir, s.Name)), []string{"installed.json", "model.onnx", "tokenizer.json"}; !reflect.DeepEqual(got, want) {
		t.Errorf("model folder holds %v, want %v", got, want)
	}
}
