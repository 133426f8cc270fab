package clientconfig

import (
	"strings"
	"testing"
)

// Every client's file on every OS, from that OS's environment, with its
// separators: the paths each client's documentation gives.
func TestClientFiles(t *testing.T) {
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
		c, ok := Lookup(tc.client)
		if !ok {
			t.Fatalf("no client %s", tc.client)
		}
		h := Host{GOOS: tc.goos, Env: func(k string) string { return tc.env[k] }}
		got, err := c.File(h)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("%s on %s with %v: %q, want an error", tc.client, tc.goos, tc.env, got)
		case tc.want != "" && (err != nil || got != tc.want):
			t.Errorf("%s on %s with %v: %q, %v; want %q", tc.client, tc.goos, tc.env, got, err, tc.want)
		}
		if note := c.Where(h); (tc.note == "") != (note == "") || !strings.Contains(note, tc.note) {
			t.Errorf("%s on %s: note %q, want one saying %q", tc.client, tc.goos, note, tc.note)
		}
	}
	// Claude Code's configuration is its own: there is no file on any OS.
	c, _ := Lookup("claude-code")
	if c.File != nil {
		t.Error("claude-code has a file to edit")
	}
}
