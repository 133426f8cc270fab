package models

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
)

// Settings say where this machine keeps the models and how it runs them. The
// binary reads them from its environment once (SettingsFrom(os.Getenv)) and
// hands them down, as the tests do; nothing in this package reads the
// environment itself.
type Settings struct {
	// DataDir is where setup put the models and ONNX Runtime.
	DataDir string
	Runtime Runtime
	Fetch   FetchOptions
}

// Runtime is how models run: the ONNX Runtime shared library, and the
// intra-op thread count of every session (0: one per CPU). Results do not
// depend on Threads.
type Runtime struct {
	Lib     string
	Threads int
}

// IntraOpThreads is the thread count sessions are given.
func (r Runtime) IntraOpThreads() int {
	if r.Threads > 0 {
		return r.Threads
	}
	return runtime.NumCPU()
}

// SettingsFrom reads Settings from an environment (getenv is os.Getenv in the
// binary):
//
//   - VAULT_RAG_DATA, the data folder, else FindDataDir's;
//   - ONNXRUNTIME_LIB, the ONNX Runtime library, else DataDir/lib/ and the
//     platform's file name (RuntimeLibraryName);
//   - VAULT_RAG_THREADS, the intra-op threads, else one per CPU;
//   - HF_ENDPOINT, a Hugging Face mirror (the variable the Hugging Face tools
//     read), else huggingface.co;
//   - VAULT_RAG_MAVEN_REPO, a Maven repository mirror (https:// or file://),
//     else Maven Central.
//
// The proxy a fetch goes through is not among them: net/http reads Go's
// standard variables (http.ProxyFromEnvironment), which the binary sets as
// Fetch.Proxy.
func SettingsFrom(getenv func(string) string) Settings {
	s := Settings{DataDir: getenv("VAULT_RAG_DATA")}
	if s.DataDir == "" {
		s.DataDir = FindDataDir()
	}
	s.Runtime.Lib = getenv("ONNXRUNTIME_LIB")
	if s.Runtime.Lib == "" {
		s.Runtime.Lib = filepath.Join(s.DataDir, "lib", RuntimeLibraryName(runtime.GOOS))
	}
	if n, err := strconv.Atoi(getenv("VAULT_RAG_THREADS")); err == nil && n > 0 {
		s.Runtime.Threads = n
	}
	s.Fetch.Hub = getenv("HF_ENDPOINT")
	s.Fetch.MavenRepo = getenv("VAULT_RAG_MAVEN_REPO")
	return s
}

// FindDataDir looks for the folder setup fetched into when none is named:
// ./data if it is one (it holds lib/ or models/: a folder of a user's that
// happens to be called data is not taken), else the data folder of the
// source checkout this process runs inside (so tests find it from any
// package folder), else the data folder beside the binary's (bin/vault-rag →
// data/), so a client that starts vault-rag from its own folder, or a
// release archive run from anywhere, finds the models and ONNX Runtime.
func FindDataDir() string {
	if isDataDir("data") {
		return "data"
	}
	if wd, err := os.Getwd(); err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				if _, err := os.Stat(filepath.Join(dir, "models", "manifest.json")); err == nil {
					return filepath.Join(dir, "data")
				}
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	if dir := BesideExecutable("data"); dir != "" {
		return filepath.Join(dir, "data")
	}
	return "data"
}

// isDataDir reports whether dir looks like a data folder setup filled.
func isDataDir(dir string) bool {
	for _, sub := range []string{"lib", "models"} {
		if st, err := os.Stat(filepath.Join(dir, sub)); err == nil && st.IsDir() {
			return true
		}
	}
	return false
}

// BesideExecutable returns the folder above the running binary's own
// (bin/..) when it holds sub, else "": where a built checkout keeps data/ and
// configs/.
func BesideExecutable(sub string) string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return ""
	}
	dir := filepath.Dir(filepath.Dir(exe))
	if st, err := os.Stat(filepath.Join(dir, sub)); err == nil && st.IsDir() {
		return dir
	}
	return ""
}

// RuntimeLibraryName is the file scripts/setup.sh installs ONNX Runtime as on
// an operating system: libonnxruntime.dylib on macOS, libonnxruntime.so
// elsewhere.
func RuntimeLibraryName(goos string) string {
	if goos == "darwin" {
		return "libonnxruntime.dylib"
	}
	return "libonnxruntime.so"
}
