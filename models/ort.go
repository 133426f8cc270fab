// Package models runs the ONNX models vault-rag uses (the embedder and the
// cross-encoder) with ONNX Runtime and the models' own tokenizers, and fetches
// their files from the sources in manifest.json.
package models

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// ErrNotInstalled says a model's files (or ONNX Runtime itself) are not on this
// machine. Stages that need the model fail with it rather than run without it.
var ErrNotInstalled = errors.New("model not installed")

// The ONNX Runtime environment is process-wide: the one piece of package-level
// state vault-rag keeps. It is initialised once, by the first session created.
var (
	envOnce sync.Once
	envErr  error
)

// initRuntime loads the ONNX Runtime shared library from lib.
func initRuntime(lib string) error {
	envOnce.Do(func() {
		if _, err := os.Stat(lib); err != nil {
			envErr = fmt.Errorf("%w: ONNX Runtime library %s (run `make setup`)", ErrNotInstalled, lib)
			return
		}
		ort.SetSharedLibraryPath(lib)
		if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
			envErr = fmt.Errorf("initialise ONNX Runtime from %s: %w", lib, err)
		}
	})
	return envErr
}

// DataDir is where vault-rag keeps what setup fetched: $VAULT_RAG_DATA if set,
// else ./data if it exists, else the data folder of the source checkout this
// process runs inside (so tests find it from any package folder), else the
// data folder beside the binary's (bin/vault-rag → data/), so a client that
// starts vault-rag from its own folder finds the models and ONNX Runtime.
func DataDir() string {
	if d := os.Getenv("VAULT_RAG_DATA"); d != "" {
		return d
	}
	if st, err := os.Stat("data"); err == nil && st.IsDir() {
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

// RuntimeLibrary is the ONNX Runtime shared library path: $ONNXRUNTIME_LIB, else
// DataDir()/lib/ and the platform's file name (RuntimeLibraryName).
func RuntimeLibrary() string {
	if p := os.Getenv("ONNXRUNTIME_LIB"); p != "" {
		return p
	}
	return filepath.Join(DataDir(), "lib", RuntimeLibraryName(runtime.GOOS))
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
