package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Every client's file on every OS, from that OS's environment, with its
// separators: the paths each client's documentation gives.
func TestConnectClientFiles(t *testing.T) {
	mac := map[string]string{"HOME": "/Users/ann"}
	win := map[string]string{"USERPROFILE": `C:\Users\ann`, "APPDATA": `C:\Users\ann\AppData\Roaming`, "HOME": "/ignored"}
	linux := map[string]string{"HOME": "/home/ann"}
	xdg := map[string]string{"HOME": "/home/ann", "XDG_CONFIG_HOME": "/home/ann/cfg"}
	for _, tc := range []struct {
		client, goos string
		env          map[string]string
		want         string // "" : an error
		note         string // in where's note; "" for none
	}{
		{"claude-desktop", "darwin", mac, "/Users/ann/Library/Application Support/Claude/claude_desktop_config.json", ""},
		{"claude-desktop", "windows", win, `C:\Users\ann\AppData\Roaming\Claude\claude_desktop_config.json`, ""},
		{"claude-desktop", "linux", linux, "/home/ann/.config/Claude/claude_desktop_config.json", "no official Linux build"},
		{"claude-desktop", "linux", xdg, "/home/ann/cfg/Claude/claude_desktop_config.json", "no official Linux build"},
		{"claude-desktop", "windows", map[string]string{"USERPROFILE": `C:\Users\ann`}, "", ""},
		{"cursor", "darwin", mac, "/Users/ann/.cursor/mcp.json", "every project"},
		{"cursor", "windows", win, `C:\Users\ann\.cursor\mcp.json`, "every project"},
		{"cursor", "linux", xdg, "/home/ann/.cursor/mcp.json", "every project"},
		{"cursor", "linux", map[string]string{}, "", "every project"},
		{"vscode", "darwin", mac, "/Users/ann/Library/Application Support/Code/User/mcp.json", "profile"},
		{"vscode", "windows", win, `C:\Users\ann\AppData\Roaming\Code\User\mcp.json`, "profile"},
		{"vscode", "linux", linux, "/home/ann/.config/Code/User/mcp.json", "profile"},
		// A relative XDG_CONFIG_HOME is invalid (the XDG rule, and Go's).
		{"vscode", "linux", map[string]string{"HOME": "/home/ann", "XDG_CONFIG_HOME": "cfg"}, "/home/ann/.config/Code/User/mcp.json", "profile"},
	} {
		c, err := lookupClient(tc.client)
		if err != nil {
			t.Fatal(err)
		}
		h := host{goos: tc.goos, getenv: func(k string) string { return tc.env[k] }}
		got, err := c.file(h)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("%s on %s with %v: %q, want an error", tc.client, tc.goos, tc.env, got)
		case tc.want != "" && (err != nil || got != tc.want):
			t.Errorf("%s on %s with %v: %q, %v; want %q", tc.client, tc.goos, tc.env, got, err, tc.want)
		}
		if note := c.where(h); (tc.note == "") != (note == "") || !strings.Contains(note, tc.note) {
			t.Errorf("%s on %s: note %q, want one saying %q", tc.client, tc.goos, note, tc.note)
		}
	}
	// Claude Code's configuration is its own: there is no file on any OS.
	c, _ := lookupClient("claude-code")
	if c.file != nil {
		t.Error("claude-code has a file to edit")
	}
}

// The bundle is found in a checkout's dist/, beside the extracted archive,
// or in the archive's folder: the newest when there are several.
func TestFindBundle(t *testing.T) {
	dir := t.TempDir()
	mk := func(rel string, age time.Duration) string {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		when := time.Now().Add(-age)
		if err := os.Chtimes(p, when, when); err != nil {
			t.Fatal(err)
		}
		return p
	}
	checkoutExe := mk("checkout/bin/vault-rag", 0)
	mk("checkout/dist/vault-rag-v1.mcpb", 2*time.Hour)
	newest := mk("checkout/dist/vault-rag-v2.mcpb", time.Hour)
	mk("checkout/dist/other.mcpb", 0) // not ours
	downloadsExe := mk("Downloads/vault-rag/bin/vault-rag.exe", 0)
	beside := mk("Downloads/vault-rag-1.0.0.mcpb", 0)
	inside := mk("opt/vault-rag/vault-rag-1.0.0.mcpb", 0)
	optExe := mk("opt/vault-rag/bin/vault-rag", 0)
	bareExe := mk("bare/vault-rag/bin/vault-rag", 0)
	mk("bare/vault-rag/bin/vault-rag-0.mcpb/keep", 0) // a folder, not a bundle
	for _, tc := range []struct{ exe, want string }{
		{checkoutExe, newest},
		{downloadsExe, beside},
		{optExe, inside},
		{bareExe, ""},
		{"", ""},
	} {
		if got := findBundle(tc.exe); got != tc.want {
			t.Errorf("findBundle(%s) = %q, want %q", tc.exe, got, tc.want)
		}
	}
}

// connect claude-desktop names the bundle as the one-click route when there
// is one, else where to get it, and on Linux that Claude Desktop has no
// build there.
func TestBundleRoute(t *testing.T) {
	for _, tc := range []struct {
		bundle, goos string
		want         []string
		not          []string
	}{
		{"/x/vault-rag-1.0.0.mcpb", "darwin", []string{"open /x/vault-rag-1.0.0.mcpb with Claude Desktop", "vault folder", "Or by hand:"}, []string{"Linux"}},
		{`C:\dl\vault-rag-1.0.0.mcpb`, "windows", []string{`open C:\dl\vault-rag-1.0.0.mcpb`}, []string{"Linux"}},
		{"", "windows", []string{"vault-rag-VERSION.mcpb", "make mcpb", "Or by hand:"}, nil},
		{"/x/vault-rag-1.0.0.mcpb", "linux", []string{"open /x/vault-rag-1.0.0.mcpb", "no official Linux build"}, nil},
	} {
		got := bundleRoute(tc.bundle, host{goos: tc.goos, getenv: func(string) string { return "" }})
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("bundleRoute(%q, %s) does not say %q:\n%s", tc.bundle, tc.goos, w, got)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(got, w) {
				t.Errorf("bundleRoute(%q, %s) says %q:\n%s", tc.bundle, tc.goos, w, got)
			}
		}
	}
}
