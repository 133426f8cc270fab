// Package models runs the ONNX models vault-rag uses (the embedder and the
// cross-encoder) with ONNX Runtime and the models' own tokenizers, and fetches
// their files from the sources in manifest.json.
package models

import (
	"errors"
	"fmt"
	"os"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// ErrNotInstalled says a model's files (or ONNX Runtime itself) are not on this
// machine. Stages that need the model fail with it rather than run without it.
var ErrNotInstalled = errors.New("model not installed")

// The ONNX Runtime environment is process-wide (onnxruntime_go keeps it, and
// the library's path, as its own package state), so it is initialised once,
// by the first session created, and its error kept for every later one.
// envOnce and envErr are the only package-level variables of vault-rag's code
// (tests apart) that change after start-up. The others are written before
// main runs and only read afterwards (the stages registry, filled by init
// functions; stopword lists; the embedded manifest; the generator's
// vocabulary). sqlite-vec's registration as an automatic extension is not Go
// state: it is a list inside SQLite, which index adds it to on every open (a
// no-op after the first). The index's keyword tokenizer belongs to the DB or
// build that uses it.
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
