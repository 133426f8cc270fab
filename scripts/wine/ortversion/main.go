// Command ortversion loads an ONNX Runtime shared library, starts its
// environment and prints the library's version. Under wine it shows that a
// Windows build of a Go program can load onnxruntime.dll before anything
// heavier (an index, a model) is tried.
package main

import (
	"fmt"
	"os"

	ort "github.com/yalue/onnxruntime_go"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: ortversion PATH-TO-ONNXRUNTIME-LIBRARY")
		os.Exit(2)
	}
	lib := os.Args[1]
	if _, err := os.Stat(lib); err != nil {
		fmt.Fprintf(os.Stderr, "ortversion: %v\n", err)
		os.Exit(1)
	}
	ort.SetSharedLibraryPath(lib)
	if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
		fmt.Fprintf(os.Stderr, "ortversion: initialise ONNX Runtime from %s: %v\n", lib, err)
		os.Exit(1)
	}
	defer ort.DestroyEnvironment()
	fmt.Printf("onnxruntime %s\n", ort.GetVersion())
}
