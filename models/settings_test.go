package models

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestSettingsFrom(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want Settings
	}{
		{"named", map[string]string{"VAULT_RAG_DATA": "/d", "ONNXRUNTIME_LIB": "/l/ort.so", "VAULT_RAG_THREADS": "3", "HF_ENDPOINT": "https://m.example", "VAULT_RAG_MAVEN_REPO": "https://nexus.example/maven2"},
			Settings{DataDir: "/d", Runtime: Runtime{Lib: "/l/ort.so", Threads: 3}, Fetch: FetchOptions{Hub: "https://m.example", MavenRepo: "https://nexus.example/maven2"}}},
		{"library from the data folder", map[string]string{"VAULT_RAG_DATA": "/d"},
			Settings{DataDir: "/d", Runtime: Runtime{Lib: filepath.Join("/d", "lib", RuntimeLibraryName(runtime.GOOS))}}},
		{"threads not a count", map[string]string{"VAULT_RAG_DATA": "/d", "ONNXRUNTIME_LIB": "x", "VAULT_RAG_THREADS": "-2"},
			Settings{DataDir: "/d", Runtime: Runtime{Lib: "x"}}},
		{"threads not a number", map[string]string{"VAULT_RAG_DATA": "/d", "ONNXRUNTIME_LIB": "x", "VAULT_RAG_THREADS": "many"},
			Settings{DataDir: "/d", Runtime: Runtime{Lib: "x"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := SettingsFrom(func(k string) string { return tc.env[k] })
			if got.DataDir != tc.want.DataDir || got.Runtime != tc.want.Runtime || got.Fetch.Hub != tc.want.Fetch.Hub || got.Fetch.MavenRepo != tc.want.Fetch.MavenRepo || got.Fetch.Proxy != nil {
				t.Errorf("SettingsFrom(%v) = %+v, want %+v", tc.env, got, tc.want)
			}
		})
	}
	if got := SettingsFrom(func(string) string { return "" }).DataDir; got != FindDataDir() {
		t.Errorf("no VAULT_RAG_DATA: data folder %q, want FindDataDir's %q", got, FindDataDir())
	}
}

// FindDataDir takes ./data only when it is a data folder (lib/ or models/
// in it), not any folder of that name: a release archive run from a user's
// folder that has one would otherwise look for ONNX Runtime there, not
// beside its binary.
func TestIsDataDir(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		sub  string // made under the folder
		want bool
	}{{"", false}, {"photos", false}, {"lib", true}, {"models", true}} {
		d := filepath.Join(dir, "case-"+tc.sub)
		if err := os.MkdirAll(filepath.Join(d, tc.sub), 0o755); err != nil {
			t.Fatal(err)
		}
		if got := isDataDir(d); got != tc.want {
			t.Errorf("isDataDir(a folder holding %q) = %v, want %v", tc.sub, got, tc.want)
		}
	}
	if isDataDir(filepath.Join(dir, "absent")) {
		t.Error("a folder that does not exist is a data folder")
	}
}

func TestIntraOpThreads(t *testing.T) {
	for _, tc := range []struct{ threads, want int }{{0, runtime.NumCPU()}, {-1, runtime.NumCPU()}, {1, 1}, {6, 6}} {
		if got := (Runtime{Threads: tc.threads}).IntraOpThreads(); got != tc.want {
			t.Errorf("Runtime{Threads: %d}.IntraOpThreads() = %d, want %d", tc.threads, got, tc.want)
		}
	}
}
