// Command vault-rag indexes a folder of markdown notes, searches it with
// configurable retrieval pipelines, scores those pipelines against labelled
// queries, and serves the shipping one to AI assistants over MCP.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/vault-rag/vault-rag/server"
)

// releaseVersion is the release a binary was built for (scripts/dist.sh sets
// it with -ldflags -X, from git describe); "" in any other build, whose
// version is the module's (server.Version).
var releaseVersion string

// version is this binary's version, as --version and connect give it.
func version() string {
	if releaseVersion != "" {
		return releaseVersion
	}
	return server.Version()
}

const usage = `vault-rag: local retrieval over a folder of markdown notes

usage: vault-rag <command> [flags]

commands:
  reindex   build the index of the vault (--incremental re-embeds only changed notes)
  search    search the vault (--demo runs five demo queries side by side)
  eval      score every configuration against labelled queries (--check, --update)
  sweep     run a sweep file's grid of settings with cross-validation and write the winner
  serve     serve the MCP tools over HTTP (default) or stdio
  status    what is indexed: the vault, its index, the embedder, vector coverage, the last build, the server
  connect   configure an MCP client to start serve (print it, or --write the client's file)
  models    list the models (models fetch [NAME...]: download and verify them;
            models import NAME PATH: install them from a folder, files or a jar)
  gen       generate a synthetic vault for benchmarks
  bench     measure reindex, query latency, rerank and throughput (a table and JSON)

run "vault-rag <command> -h" for a command's flags; "--" ends a command's flags
(vault-rag search -- --background-primary); "vault-rag --version" prints the version.

` + settings + "\n"

func main() {
	loadDotEnv(".env")
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmds := map[string]func(context.Context, []string) error{
		"reindex": cmdReindex,
		"search":  cmdSearch,
		"eval":    cmdEval,
		"sweep":   cmdSweep,
		"serve":   cmdServe,
		"status":  cmdStatus,
		"connect": cmdConnect,
		"models":  cmdModels,
		"gen":     cmdGen,
		"bench":   cmdBench,
	}
	name := os.Args[1]
	if name == "-h" || name == "--help" || name == "help" {
		fmt.Print(usage)
		return
	}
	if name == "version" || name == "--version" || name == "-version" {
		fmt.Println(versionLine(version(), launchFrom(os.Getenv)))
		return
	}
	run, ok := cmds[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "vault-rag: unknown command %q\n\n%s", name, usage)
		os.Exit(2)
	}
	if err := run(ctx, os.Args[2:]); err != nil {
		var ex exitError
		if errors.As(err, &ex) {
			if ex.msg != "" {
				fmt.Fprintln(os.Stderr, termSafeLines(ex.msg))
			}
			os.Exit(ex.code)
		}
		fmt.Fprintf(os.Stderr, "vault-rag %s: %s\n", name, termSafeLines(err.Error()))
		os.Exit(1)
	}
}

// exitError ends the process with a code and an optional message.
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }
