package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/vault-rag/vault-rag/server"
)

// cmdServe serves the MCP tools: over streamable HTTP (the default, one
// daemon whose models every client shares) or over stdio for one client.
func cmdServe(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	transport := fs.String("transport", envOr("VAULT_RAG_TRANSPORT", "http"), "http (a daemon at --addr, MCP at /mcp, health at /health) or stdio (one client on stdin/stdout) [VAULT_RAG_TRANSPORT]")
	addr := fs.String("addr", envOr("VAULT_RAG_ADDR", server.DefaultAddr), "HTTP listen address; a non-loopback one needs VAULT_RAG_TOKEN [VAULT_RAG_ADDR]")
	toolsFlag := fs.String("tools", envOr("VAULT_RAG_TOOLS", server.ToolsetDefault), "the tools to list: names (search, grep, read, list, overview, reindex, delta) and the sets default (search, grep, read) and all, comma-separated [VAULT_RAG_TOOLS]")
	cfgName := fs.String("config", envOr("VAULT_RAG_CONFIG", server.DefaultConfig), "the configuration vault_search runs (configs/ or experiments/) [VAULT_RAG_CONFIG]")
	root := fs.String("root", configRoot(), "folder holding configs/ and experiments/ [VAULT_RAG_ROOT]")
	vault := fs.String("vault", vaultPath(), "the vault folder (only ever read) [VAULT_PATH]")
	db := fs.String("db", "", dbFlagUsage+"; built in the background if missing")
	watch := fs.Bool("watch", true, "watch the vault and reindex changed notes")
	poll := fs.Duration("poll", server.DefaultPollInterval, "how often the watcher looks at the vault")
	debounce := fs.Duration("debounce", server.DefaultDebounce, "how long the vault must be quiet before the watcher reindexes")
	timeout := fs.Duration("timeout", server.DefaultRequestTimeout, "time limit of one tool call (but vault_reindex)")
	reindexTimeout := fs.Duration("reindex-timeout", server.DefaultReindexTimeout, "how long vault_reindex waits for its build (the build goes on after)")
	firstWait := fs.Duration("first-index-wait", server.DefaultFirstIndexWait, "how long vault_search, vault_list and vault_overview wait for a first build's keyword index before answering that it is still being built (negative: no wait)")
	origins := fs.String("allow-origin", os.Getenv("VAULT_RAG_ALLOWED_ORIGINS"), "comma-separated Origin values allowed besides loopback ones [VAULT_RAG_ALLOWED_ORIGINS]")
	hosts := fs.String("allow-host", os.Getenv("VAULT_RAG_ALLOWED_HOSTS"), "comma-separated Host names allowed besides loopback and the bound host [VAULT_RAG_ALLOWED_HOSTS]")
	verbose := fs.Bool("v", false, "log debug detail")
	setUsage(fs, "[flags]", "Serves the MCP tools over streamable HTTP (one daemon every client shares) or stdio (one client),\nbuilding the index in the background if missing. The bearer token comes from VAULT_RAG_TOKEN only.")
	if err := parseFlags(fs, args, operands{}); err != nil {
		return err
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	// Logs go to stderr under every transport: over stdio, stdout carries
	// protocol messages and nothing else.
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	protocolOut := os.Stdout
	if *transport == "stdio" {
		os.Stdout = os.Stderr // a stray print anywhere in the process cannot corrupt the stream
	} else if *transport != "http" {
		return exitError{code: 2, msg: fmt.Sprintf("vault-rag serve: --transport %q: want http or stdio", *transport)}
	}

	tools, err := server.ParseTools(*toolsFlag)
	if err != nil {
		return exitError{code: 2, msg: "vault-rag serve: --tools: " + err.Error()}
	}
	reg, err := newRegistry()
	if err != nil {
		return err
	}
	defer reg.Close()
	opts := server.Options{
		Tools:          tools,
		VaultPath:      *vault,
		ConfigRoot:     *root,
		ConfigName:     *cfgName,
		Registry:       reg,
		Addr:           *addr,
		FirstIndexWait: *firstWait,
		Token:          os.Getenv("VAULT_RAG_TOKEN"),
		AllowedOrigins: serveList(*origins),
		AllowedHosts:   serveList(*hosts),
		Watch:          *watch,
		PollInterval:   *poll,
		Debounce:       *debounce,
		RequestTimeout: *timeout,
		ReindexTimeout: *reindexTimeout,
		Scan:           scanOptions(),
		Clock:          time.Now,
		Logger:         logger,
	}
	start := func(ctx context.Context) (*server.Server, error) {
		o := opts
		var err error
		if o.DBPath, err = indexPath(*db, *vault); err != nil {
			return nil, err
		}
		embedder, why, record, err := chooseEmbedder(ctx, reg.Manifest(), "", *vault, o.DBPath)
		if err != nil {
			return nil, err
		}
		logger.Info("embedder", "name", embedder, "why", why, "index", o.DBPath)
		if err := ensureEmbedder(ctx, "serve", embedder); err != nil {
			return nil, err
		}
		o.Embedder, o.EmbedderWhy = embedder, record
		s, err := server.New(o)
		if err != nil {
			return nil, vaultMismatchHint(err)
		}
		return s, nil
	}
	// A client that started the server would see a vault folder it cannot
	// serve only as a closed connection: the server answers instead, each
	// tool saying what is wrong, and starts once the folder is fixed.
	var s *server.Server
	if problem := server.VaultProblem(*vault); problem != nil {
		logger.Warn("the vault folder cannot be served; waiting for it (every tool call says why)", "problem", problem)
		s, err = server.NewPending(opts, vaultFixHint, start)
	} else {
		s, err = start(ctx)
	}
	if err != nil {
		return err
	}
	defer s.Close()
	if *transport == "stdio" {
		return s.ServeStdio(ctx, os.Stdin, protocolOut)
	}
	return s.ListenAndServe(ctx)
}

// vaultFixHint is how to point the server at another vault folder, for
// every way it is started.
const vaultFixHint = "Create it, add notes to it, or choose another vault folder: in Claude Desktop, in vault-rag's settings (Settings > Extensions > vault-rag > Configure); " +
	"for any other client, VAULT_PATH (or --vault) in the server's entry of the client's MCP configuration, then restart the server. " +
	"Nothing needs restarting once this folder is fixed"

func serveList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
