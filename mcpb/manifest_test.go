package mcpb

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/internal/vault"
	"github.com/vault-rag/vault-rag/server"
)

var update = flag.Bool("update", false, "rewrite manifest.json's tools from the server's")

type tool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// description is the first sentence of a tool's description: the bundle
// lists the tools for a person choosing to install it, and the server gives
// the model the full text at run time.
func description(full string) string {
	if i := strings.Index(full, ". "); i >= 0 {
		return full[:i+1]
	}
	return full
}

// serverTools are the tools the server lists before it knows the vault's
// language, with Description's text.
func serverTools() []tool {
	var out []tool
	for _, t := range server.Tools(vault.Languages{}, nil) {
		out = append(out, tool{Name: t.Name, Description: description(t.Description)})
	}
	return out
}

func TestManifestTools(t *testing.T) {
	raw, err := os.ReadFile("manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	want := serverTools()
	if *update {
		// Rewrite only the tools, the manifest's last key, keeping the rest
		// as written.
		enc, err := json.MarshalIndent(want, "  ", "  ")
		if err != nil {
			t.Fatal(err)
		}
		i := bytes.Index(raw, []byte(`"tools": [`))
		if i < 0 {
			t.Fatal(`manifest.json has no "tools": [ line`)
		}
		end := bytes.LastIndex(raw, []byte("\n}"))
		out := append(append(append([]byte{}, raw[:i]...), `"tools": `...), enc...)
		out = append(out, raw[end:]...)
		if err := os.WriteFile("manifest.json", out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	var got []tool
	if err := json.Unmarshal(m["tools"], &got); err != nil {
		t.Fatalf("manifest.json tools: %v", err)
	}
	if len(want) == 0 {
		t.Fatal("the server lists no tools")
	}
	if !equal(got, want) {
		t.Errorf("manifest.json's tools are not the server's: run `go test ./mcpb -update`\n got %+v\nwant %+v", got, want)
	}
}

func equal(a, b []tool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The bundle's settings reach the binary as the variables it reads, each
// platform's command is where the staging folders put its binary, and every
// platform the bundle claims has a command.
func TestManifestServer(t *testing.T) {
	raw, err := os.ReadFile("manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Server struct {
			Type       string `json:"type"`
			EntryPoint string `json:"entry_point"`
			MCPConfig  struct {
				Command   string            `json:"command"`
				Args      []string          `json:"args"`
				Env       map[string]string `json:"env"`
				Overrides map[string]struct {
					Command string `json:"command"`
				} `json:"platform_overrides"`
			} `json:"mcp_config"`
		} `json:"server"`
		UserConfig map[string]struct {
			Type     string  `json:"type"`
			Required bool    `json:"required"`
			Default  *string `json:"default"`
		} `json:"user_config"`
		Compatibility struct {
			Platforms []string `json:"platforms"`
		} `json:"compatibility"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	cfg := m.Server.MCPConfig
	if m.Server.Type != "binary" || strings.Join(cfg.Args, " ") != "serve --transport stdio" {
		t.Errorf("server: type %q, args %q; want a binary run as serve --transport stdio", m.Server.Type, cfg.Args)
	}
	if cfg.Env["VAULT_PATH"] != "${user_config.vault}" || cfg.Env[vault.ExcludeEnv] != "${user_config.exclude}" || len(cfg.Env) != 2 {
		t.Errorf("env %v: want VAULT_PATH from the vault setting and %s from the exclude setting, nothing else", cfg.Env, vault.ExcludeEnv)
	}
	if v := m.UserConfig["vault"]; v.Type != "directory" || !v.Required {
		t.Errorf("user_config.vault: %+v, want a required directory", v)
	}
	// Claude Desktop leaves ${user_config.x} as it is when an optional
	// setting has no value and no default.
	if v := m.UserConfig["exclude"]; v.Type != "string" || v.Required || v.Default == nil || *v.Default != "" {
		t.Errorf("user_config.exclude: %+v, want an optional string defaulting to empty", v)
	}
	want := map[string]string{
		"darwin": "${__dirname}/server/macos-arm64/bin/vault-rag",
		"win32":  "${__dirname}/server/windows-x64/bin/vault-rag.exe",
		"linux":  "${__dirname}/server/linux-x64/bin/vault-rag",
	}
	for _, p := range m.Compatibility.Platforms {
		if cfg.Overrides[p].Command != want[p] || want[p] == "" {
			t.Errorf("platform %s: command %q, want %q", p, cfg.Overrides[p].Command, want[p])
		}
	}
	if len(m.Compatibility.Platforms) != len(cfg.Overrides) {
		t.Errorf("platforms %v, overrides for %d", m.Compatibility.Platforms, len(cfg.Overrides))
	}
	if "${__dirname}/"+m.Server.EntryPoint != cfg.Command {
		t.Errorf("entry_point %q and command %q differ", m.Server.EntryPoint, cfg.Command)
	}
}
