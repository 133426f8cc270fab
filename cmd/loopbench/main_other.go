//go:build !unix

// The loop benchmark's harness starts servers in sessions of their own,
// signals them and locks its logs the Unix way; it runs on Linux and macOS.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "loopbench: the loop benchmark's harness runs on Linux and macOS only")
	os.Exit(2)
}
