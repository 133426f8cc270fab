//go:build ignore

// Command vault-rag-registry-validate runs the MCP Registry's own validation
// of a server.json offline: the checks its /v0/validate endpoint (and so
// `mcp-publisher validate`) runs, validators.ValidateServerJSON with
// ValidationAll (the JSON schema the file names, embedded in the registry's
// source, and the semantic rules), plus a strict decode that refuses a key
// the registry would silently drop. Built by scripts/registry-validate.sh
// inside a copy of the registry's module, whose internal packages it needs
// (hence the ignore tag: this module cannot import them).
//
//	vault-rag-registry-validate FILE...
//
// It prints every issue and exits 1 when any file has an error.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/registry/internal/validators"
	apiv0 "github.com/modelcontextprotocol/registry/pkg/api/v0"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: vault-rag-registry-validate server.json...")
		os.Exit(2)
	}
	bad := false
	for _, file := range os.Args[1:] {
		if err := validate(file); err != nil {
			fmt.Fprintf(os.Stderr, "registry-validate: %s: %v\n", file, err)
			bad = true
		}
	}
	if bad {
		os.Exit(1)
	}
}

func validate(file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s apiv0.ServerJSON
	if err := dec.Decode(&s); err != nil {
		return fmt.Errorf("not a server.json the registry reads: %w", err)
	}
	res := validators.ValidateServerJSON(&s, validators.ValidationAll)
	errs := 0
	for _, is := range res.Issues {
		fmt.Printf("%s: %s %s at %s: %s", file, is.Severity, is.Type, is.Path, is.Message)
		if is.Reference != "" {
			fmt.Printf(" (%s)", is.Reference)
		}
		fmt.Println()
		if is.Severity == validators.ValidationIssueSeverityError {
			errs++
		}
	}
	if !res.Valid || errs > 0 {
		return fmt.Errorf("%d error(s)", errs)
	}
	fmt.Printf("%s: valid (%s, %d package(s))\n", file, s.Schema, len(s.Packages))
	return nil
}
