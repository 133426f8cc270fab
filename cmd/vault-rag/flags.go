package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/vault-rag/vault-rag/models"
)

// operands is what a command takes after its flags. The zero value is what
// most take: none, a stray argument refused.
type operands struct {
	any bool // takes operands
	// dashHint, said when a flag is unknown, tells how to pass an operand
	// that starts with a dash: for search, a query such as a CSS variable
	// is most often taken for a flag.
	dashHint string
}

// parseFlags parses a command's flags the same way for every command. A
// command that takes no operands refuses a stray one: "vault-rag reindex
// ~/notes" must not quietly index ./vault. A flag the command does not know
// is refused, naming the flag it most likely meant (nearestFlag) and with
// the command's word on "--" (which ends the flags) when it has one. -h and
// --help print the command's usage on stdout and exit 0, as "vault-rag -h"
// does.
func parseFlags(fs *flag.FlagSet, args []string, takes operands) error {
	name := "vault-rag " + fs.Name()
	fs.SetOutput(io.Discard) // the messages below replace the flag package's
	err := fs.Parse(args)
	fs.SetOutput(os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(os.Stdout)
		fs.Usage()
		return exitError{code: 0}
	case err != nil:
		msg := fmt.Sprintf("%s: %v", name, err)
		near := ""
		if unknown, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); ok {
			msg = fmt.Sprintf("%s: unknown flag %s", name, dashed(unknown))
			if near = nearestFlag(fs, unknown); near != "" {
				msg += fmt.Sprintf("; did you mean %s?", dashed(near))
			}
		}
		// A flag close to a real one was mistyped, not a query that starts
		// with a dash.
		if takes.dashHint != "" && near == "" {
			msg += "\n  " + takes.dashHint
		}
		return exitError{code: 2, msg: msg + fmt.Sprintf("\n  run \"%s -h\" for its flags", name)}
	case !takes.any && fs.NArg() > 0:
		msg := fmt.Sprintf("%s: unexpected argument %q: %s takes only flags", name, fs.Arg(0), fs.Name())
		if st, err := os.Stat(fs.Arg(0)); err == nil && st.IsDir() {
			msg += fmt.Sprintf(" (to use the folder %s as the vault, pass --vault %s or set VAULT_PATH)", fs.Arg(0), fs.Arg(0))
		}
		return exitError{code: 2, msg: msg + fmt.Sprintf("\n  run \"%s -h\" for its flags", name)}
	}
	return nil
}

// settings lists every environment variable vault-rag reads, for --help.
const settings = `settings (environment, or a .env file in the working folder):
  VAULT_PATH                 the vault folder, only ever read      (default ./vault)
  DB_PATH                    the index file                        (default: the vault's own,
                             $VAULT_RAG_DATA/indexes/NAME-HASH.db: NAME the vault folder's, HASH of its path)
  VAULT_RAG_DATA             models, indexes and caches            (default ./data if it holds lib/ or models/,
                             else the data/ of the checkout this runs in or was built in, else the per-user
                             data folder: ~/Library/Application Support/vault-rag on macOS,
                             %LOCALAPPDATA%\vault-rag on Windows, $XDG_DATA_HOME/vault-rag or
                             ~/.local/share/vault-rag elsewhere)
  ONNXRUNTIME_LIB            the ONNX Runtime library              (default $VAULT_RAG_DATA/lib/ if it is there, else
                             lib/ beside the binary's bin/: libonnxruntime.so, .dylib on macOS,
                             onnxruntime.dll on Windows)
  VAULT_RAG_THREADS          intra-op threads per ONNX session     (default: the number of CPUs)
  VAULT_RAG_EXCLUDE          notes not to index, comma-separated globs (Archive/**, **/*.excalidraw.md)
  VAULT_RAG_EMBEDDER         the embedder indexes are built with   (default: the index's; a first index
                             takes the one for the vault's script: bge-small-zh-v1.5-q for a mostly
                             Chinese vault, else bge-small-en-v1.5-q; bge-small-en-v1.5 is the fp32
                             original)
  VAULT_RAG_CONFIG           the configuration search and serve run (default shipping)
  VAULT_RAG_ROOT             the folder holding configs/ and experiments/ (eval and bench: also eval/,
                             vault/, baselines/) (default . if it has configs/, else the checkout
                             the binary sits in)
  VAULT_RAG_TRANSPORT        serve: http or stdio                  (default http)
  VAULT_RAG_TOOLS            serve: the tools listed: names (search, grep, read, list, overview,
                             reindex, delta), default or all, comma-separated (default: search, grep, read)
  VAULT_RAG_ADDR             serve: HTTP listen address            (default 127.0.0.1:8848)
  VAULT_RAG_TOKEN            serve: bearer token, required off loopback (never a flag: it would show in ps)
  VAULT_RAG_ALLOWED_ORIGINS  serve: extra allowed Origin values, comma-separated
  VAULT_RAG_ALLOWED_HOSTS    serve: extra allowed Host names, comma-separated
  HF_ENDPOINT                models fetch: a Hugging Face mirror   (default https://huggingface.co)
  VAULT_RAG_MAVEN_REPO       models fetch: a Maven repository mirror, https:// or file:// in Maven's
                             layout                                (default https://repo1.maven.org/maven2)
  HTTPS_PROXY, NO_PROXY      models fetch: the proxy to go through (the standard variables)
  VAULT_RAG_REQUIRE_MODELS   tests: 1 turns a missing model into a failure instead of a skip (CI sets it)`

// configRoot is where configs/ lives: $VAULT_RAG_ROOT, else the working
// folder when it has one, else the checkout the binary was built into
// (bin/..), so a client that starts vault-rag from elsewhere still finds
// configs/shipping.yaml.
func configRoot() string {
	if r := os.Getenv("VAULT_RAG_ROOT"); r != "" {
		return r
	}
	if st, err := os.Stat("configs"); err == nil && st.IsDir() {
		return "."
	}
	if dir := models.BesideExecutable("configs"); dir != "" {
		return dir
	}
	return "."
}

// printJSON prints a command's result as indented JSON on stdout (--json).
func printJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
