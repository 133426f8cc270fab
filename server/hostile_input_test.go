package server

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// lockedBuffer is a log sink safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestHostileInputErrors calls every tool with oversized and odd values in
// each of its string parameters (and as unknown keys): every error it gets
// back, and every line the server logs, is short, and none names a path of
// the server (the vault, the index, the configurations).
func TestHostileInputErrors(t *testing.T) {
	logs := &lockedBuffer{}
	s := newModelFreeServer(t, func(o *Options) {
		o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	c := connectStdio(t, s)

	big := strings.Repeat("a", 900<<10)
	odd := strings.Repeat("\x00\x1b[2J\xff\xfe\u2028\u202e/../", 60<<10)
	values := map[string]string{"900 KB": big, "control bytes and invalid UTF-8": odd, "a path": "../../../../etc/passwd"}
	base := map[string]map[string]any{
		ToolSearch:   {"query": "x"},
		ToolRead:     {"path": "knowledge/engineering/idempotency.md"},
		ToolGrep:     {"pattern": "x"},
		ToolList:     {},
		ToolOverview: {},
		ToolDelta:    {"items": []any{map[string]any{"text": "x"}}},
		ToolReindex:  {},
	}
	type hcall struct {
		name string
		tool string
		args map[string]any
	}
	var calls []hcall
	with := func(tool string, extra map[string]any) map[string]any {
		m := map[string]any{}
		for k, v := range base[tool] {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	for _, spec := range toolSpecs(s.langs) {
		tool := spec.def.Name
		var params []string
		for p := range spec.def.InputSchema.Properties {
			params = append(params, p)
		}
		sort.Strings(params)
		for vname, v := range values {
			calls = append(calls, hcall{tool + " unknown key " + vname, tool, with(tool, map[string]any{v: 1})})
			for _, p := range params {
				prop, _ := spec.def.InputSchema.Properties[p].(map[string]any)
				switch prop["type"] {
				case "string":
					calls = append(calls, hcall{tool + " " + p + " " + vname, tool, with(tool, map[string]any{p: v})})
				case "array":
					calls = append(calls, hcall{tool + " " + p + "[0] " + vname, tool, with(tool, map[string]any{p: []any{v}})})
				}
			}
		}
		many := map[string]any{}
		for i := range 10000 {
			many[strings.Repeat("k", 50)+string(rune('a'+i%26))+strings.Repeat("z", i/26)] = 1
		}
		calls = append(calls, hcall{tool + " 10,000 unknown keys", tool, with(tool, many)})
	}
	for vname, v := range values {
		calls = append(calls,
			hcall{"delta item text " + vname, ToolDelta, map[string]any{"items": []any{map[string]any{"text": v}}}},
			hcall{"delta item title " + vname, ToolDelta, map[string]any{"items": []any{map[string]any{"text": "x", "title": v}}}},
			hcall{"delta item key " + vname, ToolDelta, map[string]any{"items": []any{map[string]any{"text": "x", v: "y"}}}},
		)
	}
	calls = append(calls,
		hcall{"search unknown config", ToolSearch, map[string]any{"query": "x", "config": "no-such-config"}},
		hcall{"read a missing note", ToolRead, map[string]any{"path": "no/such/note.md"}},
	)

	const most = 1024 // bytes of an error's text
	serverPaths := []string{fx.dir, fx.vault, fx.db, fx.configs, filepath.Dir(fx.dir)}
	errs := 0
	for _, tc := range calls {
		text, isErr := call(t, c, tc.tool, tc.args)
		if !isErr {
			if len(text) > 64<<10 {
				t.Errorf("%s: a %d-byte answer", tc.name, len(text))
			}
			continue
		}
		errs++
		if testing.Verbose() {
			t.Logf("%s: %.400s", tc.name, text)
		}
		if len(text) > most {
			t.Errorf("%s: a %d-byte error: %.300s…", tc.name, len(text), text)
		}
		for _, p := range serverPaths {
			if strings.Contains(text, p) {
				t.Errorf("%s: the error names the server path %s: %s", tc.name, p, text)
			}
		}
	}
	if errs < len(calls)/2 {
		t.Errorf("only %d of %d calls failed", errs, len(calls))
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if len(line) > 4*most {
			t.Errorf("a %d-byte log line: %.300s…", len(line), line)
		}
	}
}
