package pipeline_test

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

// sharedDir holds indexes built once and shared by several tests; it is
// removed when the package's tests end.
var sharedDir string

var exitFuncs []func()

// atExit runs f when the package's tests end, last registered first.
func atExit(f func()) { exitFuncs = append(exitFuncs, f) }

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "vault-rag-pipeline-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sharedDir = dir
	code := m.Run()
	for i := len(exitFuncs) - 1; i >= 0; i-- {
		exitFuncs[i]()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}
