// Command loadtest is a bounded load test of `vault-rag serve` on loopback.
//
// It copies the demo vault to a temporary folder (./vault is only ever read),
// starts the real binary on a free 127.0.0.1 port against that copy and a
// temporary index (its embedding cache seeded from the demo's index when there is one), and drives it
// with concurrent mcp-go streamable-HTTP clients, each with its own session:
// a fixed number of calls in a deterministic mix of vault_search, vault_read,
// vault_list and vault_delta, with one vault_reindex in the middle, issued
// right after the load test appends a line to one note of the copy. It samples
// the server's resident memory from /proc (idle, after the first search,
// every 100 ms under load, and the kernel's high-water mark), reports latency
// percentiles per tool, throughput and the reindex, checks that the change is
// searchable afterwards and that the server never wrote the vault, then stops
// the server with SIGTERM and checks that it exits 0 within 10 s.
//
// Every loop is bounded by a count and by an overall deadline (-timeout), and
// the only address it talks to is the 127.0.0.1 port it picked.
//
// Usage (from the checkout, after `make build`; `make load` does both):
//
//	go run -tags=sqlite_fts5 ./cmd/loadtest -calls 2000 -json data/bench/load.json
//
// The exit code is 1 when any call failed or any check did not hold.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vault-rag/vault-rag/internal/measure"
)

func main() {
	os.Exit(mainErr())
}

func mainErr() int {
	opts := DefaultOptions()
	var jsonPath string
	flag.IntVar(&opts.Calls, "calls", opts.Calls, "tool calls in total, the mid-run vault_reindex included")
	flag.IntVar(&opts.Clients, "clients", opts.Clients, "concurrent MCP clients, each with its own session")
	flag.DurationVar(&opts.Timeout, "timeout", opts.Timeout, "overall deadline of the run, start to shutdown")
	flag.DurationVar(&opts.CallTimeout, "call-timeout", opts.CallTimeout, "time limit of one tool call")
	flag.StringVar(&opts.Protocol, "protocol", opts.Protocol, "MCP protocol version the clients ask for ("+mcp.LATEST_LEGACY_PROTOCOL_VERSION+" has sessions; "+mcp.LATEST_PROTOCOL_VERSION+" is stateless)")
	flag.Uint64Var(&opts.Seed, "seed", opts.Seed, "seed of the call mix (the same seed gives the same calls)")
	flag.StringVar(&opts.Note, "note", opts.Note, "vault-relative note the run appends a line to before the mid-run reindex")
	flag.StringVar(&opts.Root, "root", "", "the checkout (vault/, configs/, eval/queries.json); default: the folder holding go.mod above the working folder")
	flag.StringVar(&opts.Bin, "bin", "", "the vault-rag binary (default ROOT/bin/vault-rag)")
	flag.StringVar(&opts.DataDir, "data", os.Getenv("VAULT_RAG_DATA"), "models, ONNX Runtime and the seed index (default ROOT/data) [VAULT_RAG_DATA]")
	flag.BoolVar(&opts.IdleProbe, "idle-probe", opts.IdleProbe, "also start a --watch=false server to measure resident memory with no model loaded")
	flag.BoolVar(&opts.Keep, "keep", false, "keep the temporary folder (vault copy, index, server logs)")
	flag.StringVar(&jsonPath, "json", "data/bench/load.json", "write the report as JSON here (empty: do not)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "loadtest: unexpected argument %q\n", flag.Arg(0))
		return 2
	}
	opts.Log = os.Stderr

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := Run(ctx, opts)
	if rep != nil {
		rep.WriteTable(os.Stdout)
		if jsonPath != "" {
			if werr := measure.WriteJSON(jsonPath, rep); werr != nil {
				fmt.Fprintln(os.Stderr, "loadtest:", werr)
				return 1
			}
			abs, _ := filepath.Abs(jsonPath)
			fmt.Fprintf(os.Stdout, "\nreport written to %s\n", abs)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		return 1
	}
	if fails := rep.Failures(); len(fails) > 0 {
		for _, f := range fails {
			fmt.Fprintln(os.Stderr, "loadtest: FAIL:", f)
		}
		return 1
	}
	fmt.Fprintln(os.Stdout, "loadtest: PASS")
	return 0
}

// findRoot walks up from the working folder to the one holding go.mod.
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find the checkout: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("find the checkout: no go.mod above the working folder; pass -root")
		}
		dir = parent
	}
}
