package models

import (
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

func TestIntraOpThreads(t *testing.T) {
	for _, tc := range []struct{ threads, want int }{{0, runtime.NumCPU()}, {-1, runtime.NumCPU()}, {1, 1}, {6, 6}} {
		if got := (Runtime{Threads: tc.threads}).IntraOpThreads(); got != tc.want {
			t.Errorf("Runtime{Threads: %d}.IntraOpThreads() = %d, want %d", tc.threads, got, tc.want)
		}
	}
}
