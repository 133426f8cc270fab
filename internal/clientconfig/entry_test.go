package clientconfig

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestThroughRunner checks the entry for each package runner on each OS: the
// runner by an absolute path (the launcher's, else PATH's), the exact
// package version, node's folder on PATH only where a desktop application
// would not have it, and node with npx-cli.js on Windows.
func TestThroughRunner(t *testing.T) {
	base := Server{Type: "stdio", Command: "/cache/vault-rag/bin/vault-rag", Args: []string{"serve", "--transport", "stdio"},
		Env: map[string]string{"VAULT_PATH": "/notes", "VAULT_RAG_DATA": "/data"}}
	serve := []string{"serve", "--transport", "stdio"}
	env := func(extra ...string) map[string]string {
		m := map[string]string{"VAULT_PATH": "/notes", "VAULT_RAG_DATA": "/data"}
		for i := 0; i < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return m
	}
	nvm := "/home/u/.nvm/versions/node/v22.1.0/bin"
	winNode := `C:\Program Files\nodejs\node.exe`
	winCLI := `C:\Program Files\nodejs\node_modules\npm\bin\npx-cli.js`
	for _, tc := range []struct {
		name    string
		goos    string
		r       Runner
		files   []string          // what exists
		path    map[string]string // what exec.LookPath finds
		want    Server
		warning string
	}{{
		name:  "npx under nvm: node's folder goes on PATH",
		goos:  "linux",
		r:     Runner{Via: "npx", Package: "vault-rag@1.2.3", Path: nvm + "/npx", Node: nvm + "/node"},
		files: []string{nvm + "/npx"},
		want: Server{Type: "stdio", Command: nvm + "/npx", Args: append([]string{"-y", "vault-rag@1.2.3"}, serve...),
			Env: env("PATH", nvm+":/usr/bin:/bin:/usr/sbin:/sbin")},
	}, {
		name:  "npx with the system node: PATH left alone",
		goos:  "darwin",
		r:     Runner{Via: "npx", Package: "vault-rag@1.2.3", Path: "/usr/bin/npx", Node: "/usr/bin/node"},
		files: []string{"/usr/bin/npx"},
		want:  Server{Type: "stdio", Command: "/usr/bin/npx", Args: append([]string{"-y", "vault-rag@1.2.3"}, serve...), Env: env()},
	}, {
		name: "npx the launcher did not name: the one on PATH",
		goos: "darwin",
		r:    Runner{Via: "npx", Package: "@me/vault-rag@2.0.0", Node: "/opt/homebrew/bin/node"},
		path: map[string]string{"npx": "/opt/homebrew/bin/npx"},
		want: Server{Type: "stdio", Command: "/opt/homebrew/bin/npx", Args: append([]string{"-y", "@me/vault-rag@2.0.0"}, serve...),
			Env: env("PATH", "/opt/homebrew/bin:/usr/bin:/bin:/usr/sbin:/sbin")},
	}, {
		name:    "npx nowhere to be found: the bare name, and a warning",
		goos:    "linux",
		r:       Runner{Via: "npx", Package: "vault-rag@1.2.3", Path: "/gone/npx"},
		want:    Server{Type: "stdio", Command: "npx", Args: append([]string{"-y", "vault-rag@1.2.3"}, serve...), Env: env()},
		warning: "no npx was found on PATH",
	}, {
		name:  "npx on Windows: node runs npx-cli.js, no .cmd",
		goos:  "windows",
		r:     Runner{Via: "npx", Package: "vault-rag@1.2.3", Path: `C:\Program Files\nodejs\npx.cmd`, Node: winNode},
		files: []string{winCLI, `C:\Program Files\nodejs\npx.cmd`},
		want:  Server{Type: "stdio", Command: winNode, Args: append([]string{winCLI, "-y", "vault-rag@1.2.3"}, serve...), Env: env()},
	}, {
		name:    "npx on Windows without npm beside node: npx.cmd, and a warning",
		goos:    "windows",
		r:       Runner{Via: "npx", Package: "vault-rag@1.2.3", Node: winNode},
		path:    map[string]string{"npx.cmd": `C:\nvm4w\nodejs\npx.cmd`},
		want:    Server{Type: "stdio", Command: `C:\nvm4w\nodejs\npx.cmd`, Args: append([]string{"-y", "vault-rag@1.2.3"}, serve...), Env: env()},
		warning: "no npx-cli.js beside",
	}, {
		name:  "uvx",
		goos:  "linux",
		r:     Runner{Via: "uvx", Package: "vault-rag@1.2.3", Path: "/home/u/.local/bin/uvx"},
		files: []string{"/home/u/.local/bin/uvx"},
		want:  Server{Type: "stdio", Command: "/home/u/.local/bin/uvx", Args: append([]string{"vault-rag@1.2.3"}, serve...), Env: env()},
	}, {
		name: "uvx on Windows, found on PATH",
		goos: "windows",
		r:    Runner{Via: "uvx", Package: "vault-rag@1.2.3"},
		path: map[string]string{"uvx.exe": `C:\Users\u\.local\bin\uvx.exe`},
		want: Server{Type: "stdio", Command: `C:\Users\u\.local\bin\uvx.exe`, Args: append([]string{"vault-rag@1.2.3"}, serve...), Env: env()},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			exists := func(p string) bool {
				for _, f := range tc.files {
					if f == p {
						return true
					}
				}
				return false
			}
			lookPath := func(name string) (string, error) {
				if p, ok := tc.path[name]; ok {
					return p, nil
				}
				return "", errors.New("not found")
			}
			h := Host{GOOS: tc.goos, Env: func(string) string { return "" }}
			got, warnings := ThroughRunner(tc.r, h, base, exists, lookPath)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("entry\n got %+v\nwant %+v", got, tc.want)
			}
			joined := strings.Join(warnings, "\n")
			if tc.warning == "" && joined != "" || !strings.Contains(joined, tc.warning) {
				t.Errorf("warnings %q, want one saying %q", joined, tc.warning)
			}
			if base.Env["PATH"] != "" || len(base.Env) != 2 {
				t.Errorf("the base entry's env was changed: %v", base.Env)
			}
		})
	}
}
