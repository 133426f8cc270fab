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

func TestUserDataDir(t *testing.T) {
	for _, tc := range []struct {
		goos string
		env  map[string]string
		want string // "" : an error
	}{
		{"darwin", map[string]string{"HOME": "/Users/ann", "XDG_DATA_HOME": "/x"}, "/Users/ann/Library/Application Support/vault-rag"},
		{"darwin", map[string]string{}, ""},
		{"windows", map[string]string{"LOCALAPPDATA": `C:\Users\ann\AppData\Local`, "HOME": "/h"}, `C:\Users\ann\AppData\Local\vault-rag`},
		{"windows", map[string]string{"LOCALAPPDATA": `D:\data\`}, `D:\data\vault-rag`},
		{"windows", map[string]string{"USERPROFILE": `C:\Users\ann`}, `C:\Users\ann\AppData\Local\vault-rag`},
		{"windows", map[string]string{"HOME": "/h"}, ""},
		{"linux", map[string]string{"HOME": "/home/ann", "XDG_DATA_HOME": "/home/ann/xdg"}, "/home/ann/xdg/vault-rag"},
		{"linux", map[string]string{"HOME": "/home/ann"}, "/home/ann/.local/share/vault-rag"},
		// The XDG spec: a relative XDG_DATA_HOME is invalid and ignored.
		{"linux", map[string]string{"HOME": "/home/ann", "XDG_DATA_HOME": "rel"}, "/home/ann/.local/share/vault-rag"},
		{"freebsd", map[string]string{"HOME": "/home/ann"}, "/home/ann/.local/share/vault-rag"},
		{"linux", map[string]string{}, ""},
	} {
		got, err := UserDataDir(tc.goos, func(k string) string { return tc.env[k] })
		if tc.want == "" {
			if err == nil {
				t.Errorf("UserDataDir(%s, %v) = %q, want an error", tc.goos, tc.env, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("UserDataDir(%s, %v) = %q, %v; want %q", tc.goos, tc.env, got, err, tc.want)
		}
	}
}

// TestLocator checks where data and ONNX Runtime are found for a checkout, a
// checkout's binary started from elsewhere, and an installed archive, on
// every OS.
func TestLocator(t *testing.T) {
	dir := t.TempDir()
	mk := func(p string) string {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return full
	}
	// A checkout with setup done, an archive per OS, and a user's folder
	// that has a data/ of photos.
	mk("checkout/go.mod")
	mk("checkout/models/manifest.json")
	mk("checkout/data/lib/libonnxruntime.so")
	mk("checkout/bin/vault-rag")
	mk("checkout/internal/vault/x.go")
	for _, f := range []string{"libonnxruntime.so", "libonnxruntime.dylib", "onnxruntime.dll"} {
		mk("install-" + f + "/vault-rag/lib/" + f)
	}
	mk("user/data/photos/a.jpg")
	mk("empty/x")
	j := func(p ...string) string { return filepath.Join(append([]string{dir}, p...)...) }
	home := map[string]string{"HOME": "/home/ann", "LOCALAPPDATA": `C:\Users\ann\AppData\Local`}
	for _, tc := range []struct {
		name    string
		goos    string
		env     map[string]string
		wd, exe string
		data    string
		lib     string
	}{
		{"in the checkout", "linux", home, j("checkout"), j("checkout/bin/vault-rag"), "data", j("checkout/data/lib/libonnxruntime.so")},
		{"below the checkout", "linux", home, j("checkout/internal/vault"), "", j("checkout/data"), j("checkout/data/lib/libonnxruntime.so")},
		{"the checkout's binary from elsewhere", "linux", home, j("user"), j("checkout/bin/vault-rag"), j("checkout/data"), j("checkout/data/lib/libonnxruntime.so")},
		{"archive on linux", "linux", home, j("user"), j("install-libonnxruntime.so/vault-rag/bin/vault-rag"), "/home/ann/.local/share/vault-rag", j("install-libonnxruntime.so/vault-rag/lib/libonnxruntime.so")},
		{"archive on linux, XDG", "linux", map[string]string{"HOME": "/home/ann", "XDG_DATA_HOME": "/xdg"}, j("empty"), j("install-libonnxruntime.so/vault-rag/bin/vault-rag"), "/xdg/vault-rag", j("install-libonnxruntime.so/vault-rag/lib/libonnxruntime.so")},
		{"archive on macOS", "darwin", home, j("user"), j("install-libonnxruntime.dylib/vault-rag/bin/vault-rag"), "/home/ann/Library/Application Support/vault-rag", j("install-libonnxruntime.dylib/vault-rag/lib/libonnxruntime.dylib")},
		{"archive on Windows", "windows", home, j("user"), j("install-onnxruntime.dll/vault-rag/bin/vault-rag.exe"), `C:\Users\ann\AppData\Local\vault-rag`, j("install-onnxruntime.dll/vault-rag/lib/onnxruntime.dll")},
		// An archive whose lib/ was removed: the error names where it belongs.
		{"archive without its library", "linux", home, j("empty"), j("empty/vault-rag/bin/vault-rag"), "/home/ann/.local/share/vault-rag", j("empty/vault-rag/lib/libonnxruntime.so")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := Locator{GOOS: tc.goos, Getenv: func(k string) string { return tc.env[k] }, Wd: tc.wd, Exe: tc.exe}
			s := l.Settings()
			if s.DataDir != tc.data {
				t.Errorf("data folder %q, want %q", s.DataDir, tc.data)
			}
			// "data" is relative to the working folder, as the process sees it.
			if s.DataDir == "data" {
				s.Runtime.Lib = l.RuntimeLib(filepath.Join(tc.wd, "data"))
			}
			if s.Runtime.Lib != tc.lib {
				t.Errorf("ONNX Runtime %q, want %q", s.Runtime.Lib, tc.lib)
			}
		})
	}
	// The variables win over every rule.
	l := Locator{GOOS: "linux", Getenv: func(k string) string {
		return map[string]string{"VAULT_RAG_DATA": "/d", "ONNXRUNTIME_LIB": "/o.so", "HOME": "/h"}[k]
	}, Wd: j("checkout"), Exe: j("install-libonnxruntime.so/vault-rag/bin/vault-rag")}
	if s := l.Settings(); s.DataDir != "/d" || s.Runtime.Lib != "/o.so" {
		t.Errorf("VAULT_RAG_DATA and ONNXRUNTIME_LIB set: %q, %q", s.DataDir, s.Runtime.Lib)
	}
}

func TestRuntimeLibraryName(t *testing.T) {
	for goos, want := range map[string]string{"linux": "libonnxruntime.so", "darwin": "libonnxruntime.dylib", "windows": "onnxruntime.dll", "freebsd": "libonnxruntime.so"} {
		if got := RuntimeLibraryName(goos); got != want {
			t.Errorf("RuntimeLibraryName(%s) = %q, want %q", goos, got, want)
		}
	}
}
