package models

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// Settings say where this machine keeps the models and how it runs them. The
// binary reads them from its environment once (SettingsFrom(os.Getenv)) and
// hands them down, as the tests do; nothing in this package reads the
// environment itself.
type Settings struct {
	// DataDir is where models, indexes and caches are kept.
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
// binary), on this machine (LocateFor with this process's OS, working
// folder and binary):
//
//   - VAULT_RAG_DATA, the data folder (models, indexes, caches), else
//     Locator.DataDir's;
//   - ONNXRUNTIME_LIB, the ONNX Runtime library, else Locator.RuntimeLib's;
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
	return ThisMachine(getenv).Settings()
}

// Locator holds what decides where data and ONNX Runtime live, so that the
// rule can be checked for every operating system from any one.
type Locator struct {
	GOOS   string              // runtime.GOOS of the machine
	Getenv func(string) string // its environment
	Wd     string              // the working folder ("" if unknown)
	Exe    string              // the running binary, symlinks resolved ("" if unknown)
}

// ThisMachine is the Locator of this process.
func ThisMachine(getenv func(string) string) Locator {
	l := Locator{GOOS: runtime.GOOS, Getenv: getenv}
	l.Wd, _ = os.Getwd()
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			l.Exe = exe
		}
	}
	return l
}

// Settings resolves every setting of l (see SettingsFrom).
func (l Locator) Settings() Settings {
	getenv := l.Getenv
	s := Settings{DataDir: getenv("VAULT_RAG_DATA")}
	if s.DataDir == "" {
		s.DataDir = l.DataDir()
	}
	s.Runtime.Lib = getenv("ONNXRUNTIME_LIB")
	if s.Runtime.Lib == "" {
		s.Runtime.Lib = l.RuntimeLib(s.DataDir)
	}
	if n, err := strconv.Atoi(getenv("VAULT_RAG_THREADS")); err == nil && n > 0 {
		s.Runtime.Threads = n
	}
	s.Fetch.Hub = getenv("HF_ENDPOINT")
	s.Fetch.MavenRepo = getenv("VAULT_RAG_MAVEN_REPO")
	return s
}

// DataDir is where models, indexes and caches go when VAULT_RAG_DATA names
// no folder: ./data if it is one (it holds lib/ or models/: a folder of a
// user's that happens to be called data is not taken), else the data folder
// of the source checkout the working folder is inside (so tests find it from
// any package folder) or the binary was built into (bin/vault-rag, so a
// client that starts a checkout's binary from its own folder finds the
// checkout's models), else the per-user data folder (UserDataDir): an
// installed binary never keeps data beside itself, where an update would
// replace it and where it may not be allowed to write.
func (l Locator) DataDir() string {
	if l.Wd != "" && isDataDir(filepath.Join(l.Wd, "data")) {
		return "data"
	}
	if root := checkoutAbove(l.Wd); root != "" {
		return filepath.Join(root, "data")
	}
	if l.Exe != "" {
		if root := filepath.Dir(filepath.Dir(l.Exe)); isCheckout(root) {
			return filepath.Join(root, "data")
		}
	}
	if dir, err := UserDataDir(l.GOOS, l.Getenv); err == nil {
		return dir
	}
	return "data"
}

// RuntimeLib is the ONNX Runtime library when ONNXRUNTIME_LIB names none:
// the data folder's lib/ where setup installed it (a checkout), else lib/
// beside the binary's bin/ (a release archive or bundle:
// vault-rag/bin/vault-rag, vault-rag/lib/FILE). When neither holds the file
// it is the one a checkout would have, or the archive's when the binary is
// not a checkout's, so the error names the place that was looked in.
func (l Locator) RuntimeLib(dataDir string) string {
	name := RuntimeLibraryName(l.GOOS)
	inData := filepath.Join(dataDir, "lib", name)
	if exists(inData) {
		return inData
	}
	if l.Exe == "" {
		return inData
	}
	root := filepath.Dir(filepath.Dir(l.Exe))
	beside := filepath.Join(root, "lib", name)
	if exists(beside) || !isCheckout(root) && filepath.Base(filepath.Dir(l.Exe)) == "bin" {
		return beside
	}
	return inData
}

// UserDataDir is the per-user data folder on an operating system, from its
// environment: macOS ~/Library/Application Support/vault-rag, Windows
// %LOCALAPPDATA%\vault-rag, elsewhere $XDG_DATA_HOME/vault-rag (default
// ~/.local/share/vault-rag). Paths are joined with the target OS's
// separator, so the rule for each can be checked from any.
func UserDataDir(goos string, getenv func(string) string) (string, error) {
	switch goos {
	case "windows":
		if d := getenv("LOCALAPPDATA"); d != "" {
			return winJoin(d, "vault-rag"), nil
		}
		if h := getenv("USERPROFILE"); h != "" {
			return winJoin(h, "AppData", "Local", "vault-rag"), nil
		}
		return "", fmt.Errorf("finding the per-user data folder: neither LOCALAPPDATA nor USERPROFILE is set")
	case "darwin":
		if h := getenv("HOME"); h != "" {
			return path.Join(h, "Library", "Application Support", "vault-rag"), nil
		}
	default:
		if d := getenv("XDG_DATA_HOME"); d != "" && path.IsAbs(d) {
			return path.Join(d, "vault-rag"), nil
		}
		if h := getenv("HOME"); h != "" {
			return path.Join(h, ".local", "share", "vault-rag"), nil
		}
	}
	return "", fmt.Errorf("finding the per-user data folder: HOME is not set")
}

// winJoin joins Windows path elements with backslashes.
func winJoin(elem ...string) string {
	out := strings.TrimRight(elem[0], `\/`)
	for _, e := range elem[1:] {
		out += `\` + e
	}
	return out
}

// FindDataDir is this process's data folder when VAULT_RAG_DATA names none
// (Locator.DataDir).
func FindDataDir() string {
	return ThisMachine(os.Getenv).DataDir()
}

// checkoutAbove returns the source checkout dir is inside, or "".
func checkoutAbove(dir string) string {
	if dir == "" {
		return ""
	}
	for {
		if isCheckout(dir) {
			return dir
		}
		if filepath.Dir(dir) == dir {
			return ""
		}
		dir = filepath.Dir(dir)
	}
}

// isCheckout reports whether dir is vault-rag's source checkout.
func isCheckout(dir string) bool {
	return exists(filepath.Join(dir, "go.mod")) && exists(filepath.Join(dir, "models", "manifest.json"))
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
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
// (bin/..) when it holds sub, else "": where a built checkout or a release
// archive keeps configs/.
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

// RuntimeLibraryName is the file ONNX Runtime is installed as on an
// operating system (by scripts/setup.sh, and in a release archive):
// libonnxruntime.dylib on macOS, onnxruntime.dll on Windows,
// libonnxruntime.so elsewhere.
func RuntimeLibraryName(goos string) string {
	switch goos {
	case "darwin":
		return "libonnxruntime.dylib"
	case "windows":
		return "onnxruntime.dll"
	}
	return "libonnxruntime.so"
}
