package server

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vault-rag/vault-rag/internal/vault"
)

func TestVaultProblem(t *testing.T) {
	dir := t.TempDir()
	mk := func(rel, body string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("file.md", "# a file\n")
	mk("empty/.keep", "")
	mk("images/a.png", "png")
	mk("hidden/.obsidian/workspace.md", "# not a note\n")
	mk("deep/a/b/c/Note.MD", "# a note\n")
	mk("plain/n.md", "# n\n")
	for _, tc := range []struct {
		rel  string
		want string // in the error; "" for none
	}{
		{"missing", "does not exist"},
		{"file.md", "is a file, not a folder"},
		{"empty", "holds no markdown notes"},
		{"images", "holds no markdown notes"},
		{"hidden", "holds no markdown notes"},
		{"deep", ""},
		{"plain", ""},
	} {
		err := VaultProblem(filepath.Join(dir, tc.rel))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("VaultProblem(%s) = %v, want nil", tc.rel, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), filepath.Join(dir, tc.rel))):
			t.Errorf("VaultProblem(%s) = %v, want an error naming the folder and %q", tc.rel, err, tc.want)
		}
	}
	if os.Geteuid() != 0 { // root reads any folder
		locked := filepath.Join(dir, "locked")
		mk("locked/n.md", "# n\n")
		if err := os.Chmod(locked, 0); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(locked, 0o755)
		if err := VaultProblem(locked); err == nil || !strings.Contains(err.Error(), "cannot be read") {
			t.Errorf("VaultProblem(an unreadable folder) = %v", err)
		}
	}
}

// A server started on a vault folder it cannot serve answers initialize and
// lists every tool; each call says what is wrong with the folder and how to
// fix it, /health says the same, and once the folder is fixed the next call
// is answered from it with no restart.
func TestPendingVault(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "vault") // re-pointed to each state of the folder
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	point := func(target string) {
		t.Helper()
		if err := os.Remove(link); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if target != "" {
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
		}
	}
	const hint = "Choose another folder in the settings"
	starts := 0
	opts := Options{VaultPath: link, ConfigRoot: fx.configs, ConfigName: "test-hybrid", Registry: fx.reg, Logger: quiet,
		Clock: func() time.Time { return fixedNow }}
	s, err := NewPending(opts, hint, func(ctx context.Context) (*Server, error) {
		starts++
		o := opts
		o.DBPath = fx.db
		return New(o)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			c := tr.connect(t, s)
			listed := toolNames(t, c)
			var want []string
			for _, tl := range Tools(vault.Languages{}, nil) {
				want = append(want, tl.Name)
			}
			sort.Strings(listed)
			sort.Strings(want)
			if len(want) == 0 || strings.Join(listed, ",") != strings.Join(want, ",") {
				t.Errorf("tools/list while pending: %v, want %v", listed, want)
			}
			for _, state := range []struct {
				target, want string
			}{{"", "does not exist"}, {empty, "holds no markdown notes"}, {filepath.Join(fx.vault, "reference", "sections.md"), "is a file"}} {
				point(state.target)
				for _, tool := range listed {
					msg := callErr(t, c, tool, map[string]any{"query": "idempotency", "path": "x.md"})
					if !strings.Contains(msg, state.want) || !strings.Contains(msg, link) || !strings.Contains(msg, hint) {
						t.Errorf("%s with the vault folder %q: %q, want the folder, %q and the hint", tool, state.target, msg, state.want)
					}
				}
				h := s.Health(context.Background())
				if h.Status != StatusError || !strings.Contains(h.Index, state.want) || !strings.Contains(h.Index, hint) {
					t.Errorf("/health with the vault folder %q: %s, %q", state.target, h.Status, h.Index)
				}
			}
			if starts != 0 {
				t.Errorf("the server started %d times on an unusable folder", starts)
			}
		})
	}
	point(fx.vault)
	c := connectStdio(t, s)
	var out searchOut
	callOK(t, c, ToolSearch, map[string]any{"query": "idempotency keys"}, &out)
	if len(out.Notes) == 0 {
		t.Errorf("vault_search once the folder is fixed found nothing: %+v", out)
	}
	if h := s.Health(context.Background()); h.Status == StatusError || h.Notes == 0 {
		t.Errorf("/health once the folder is fixed: %s, %d notes, index %q", h.Status, h.Notes, h.Index)
	}
	callOK(t, c, ToolSearch, map[string]any{"query": "lease"}, &out)
	if starts != 1 {
		t.Errorf("the real server started %d times, want once", starts)
	}
}

func toolNames(t *testing.T, c *client.Client) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var out []string
	for _, tl := range res.Tools {
		out = append(out, tl.Name)
	}
	return out
}
