package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vault-rag/vault-rag/internal/mcptest"
	"github.com/vault-rag/vault-rag/internal/vaultfs"
)

// `serve --transport stdio` on a vault folder that does not exist is how a
// client configured with a wrong folder starts it: the server must answer
// initialize and list its tools, say in each tool's result what is wrong and
// how to fix it, and serve the folder once it appears, without a restart.
func TestServeMissingVault(t *testing.T) {
	dir := t.TempDir()
	vault := filepath.Join(dir, "notes")
	cmd := command(t, dir, vault, filepath.Join(dir, "index.db"), "serve", "--transport", "stdio", "--watch=false", "--tools", "all")
	cmd.Env = append(cmd.Env, "VAULT_RAG_ROOT="+repoRoot)
	srv := mcptest.StartStdio(t, cmd)
	c := srv.Client
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := mcptest.Initialize(ctx, c); err != nil {
		t.Fatalf("initialize with a missing vault folder: %v\nstderr:\n%s", err, srv.Stderr())
	}
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil || len(tools.Tools) == 0 {
		t.Fatalf("tools/list with a missing vault folder: %v, %v", tools, err)
	}
	callTool := func(name string, args map[string]any) (string, bool) {
		t.Helper()
		return srv.CallTool(ctx, t, name, args)
	}
	for _, tl := range tools.Tools {
		msg, isErr := callTool(tl.Name, map[string]any{"query": "lease"})
		if !isErr || !strings.Contains(msg, "the vault folder "+vault+" does not exist") || !strings.Contains(msg, "VAULT_PATH") || !strings.Contains(msg, "settings") {
			t.Errorf("%s with a missing vault folder: error %v, %q; want the folder, what is wrong and how to fix it", tl.Name, isErr, msg)
		}
	}

	// The folder appears: the next calls are answered from it.
	for _, rel := range []string{"reference/ferrite-config-keys.md", "lint-report-2026-03-01.md"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(vault, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := vaultfs.CopyFile(filepath.Join(repoRoot, "vault", rel), filepath.Join(vault, rel), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if msg, isErr := callTool("vault_reindex", map[string]any{}); isErr {
		t.Fatalf("vault_reindex once the folder exists: %s\nstderr:\n%s", msg, srv.Stderr())
	}
	msg, isErr := callTool("vault_search", map[string]any{"query": "lease_ttl_ms"})
	var res struct {
		Notes []struct {
			Path string `json:"path"`
		} `json:"notes"`
	}
	if isErr || json.Unmarshal([]byte(msg), &res) != nil || len(res.Notes) == 0 || res.Notes[0].Path != "reference/ferrite-config-keys.md" {
		t.Errorf("vault_search once the folder exists: error %v, %s", isErr, msg)
	}
}
