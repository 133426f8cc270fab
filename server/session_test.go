package server

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawMCP posts body to /mcp (or sends method) with the session id sid, and
// returns the status, the session id the answer carries and its body.
func rawMCP(t *testing.T, base, method, sid, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, base+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b)
}

const (
	initBody      = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	initedBody    = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	listToolsBody = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
)

// TestHTTPSessions: a session id is valid from the initialize that issued
// it until the client's DELETE. Any other id, however well formed, is 404,
// as the streamable HTTP transport asks, and so is a DELETE of one.
func TestHTTPSessions(t *testing.T) {
	base := serveHTTP(t, newModelFreeServer(t, nil))
	open := func() string {
		t.Helper()
		code, sid, body := rawMCP(t, base, http.MethodPost, "", initBody)
		if code != http.StatusOK || sid == "" {
			t.Fatalf("initialize: %d, session %q: %s", code, sid, body)
		}
		if code, _, body := rawMCP(t, base, http.MethodPost, sid, initedBody); code != http.StatusAccepted {
			t.Fatalf("notifications/initialized: %d %s", code, body)
		}
		return sid
	}
	live, other, ended := open(), open(), open()
	if live == other {
		t.Fatalf("two initializes issued the same session id %q", live)
	}
	if code, _, body := rawMCP(t, base, http.MethodDelete, ended, ""); code != http.StatusOK {
		t.Fatalf("DELETE of a live session: %d %s", code, body)
	}
	tests := []struct {
		name, method, sid, body string
		want                    int
	}{
		{"live session", http.MethodPost, live, listToolsBody, http.StatusOK},
		{"another live session", http.MethodPost, other, listToolsBody, http.StatusOK},
		{"well-formed id never issued", http.MethodPost, "mcp-session-6f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5f", listToolsBody, http.StatusNotFound},
		{"an issued id, altered", http.MethodPost, live[:len(live)-1] + "Z", listToolsBody, http.StatusNotFound},
		{"after DELETE", http.MethodPost, ended, listToolsBody, http.StatusNotFound},
		{"notification after DELETE", http.MethodPost, ended, initedBody, http.StatusNotFound},
		{"DELETE again", http.MethodDelete, ended, "", http.StatusNotFound},
		{"DELETE of an id never issued", http.MethodDelete, "mcp-session-6f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5f", "", http.StatusNotFound},
		{"no session id", http.MethodPost, "", listToolsBody, http.StatusNotFound}, // mcp-go's answer, as before
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if code, _, body := rawMCP(t, base, tc.method, tc.sid, tc.body); code != tc.want {
				t.Errorf("%s with session %q: %d %s; want %d", tc.method, tc.sid, code, body, tc.want)
			}
		})
	}
}

// The session store is bounded: past maxSessions the least recently used
// id is forgotten, never the one just issued or just used.
func TestSessionIDsBounded(t *testing.T) {
	m := newSessionIDs()
	var tick time.Duration // a clock that always moves on
	m.now = func() time.Time { tick++; return time.Unix(0, 0).Add(tick) }
	first := m.Generate()
	second := m.Generate()
	if _, err := m.Validate(first); err != nil { // first is now the more recent
		t.Fatal(err)
	}
	for range maxSessions - 1 {
		m.Generate()
	}
	if len(m.lastUsed) != maxSessions {
		t.Fatalf("%d sessions remembered, want %d", len(m.lastUsed), maxSessions)
	}
	if m.known(second) {
		t.Errorf("the least recently used session is still known")
	}
	if !m.known(first) {
		t.Errorf("a session used after the oldest was forgotten")
	}
}

// TestHTTPBatchRefused: a JSON-RPC batch (MCP 2025-06-18 removed them) is
// refused as such, HTTP 400 with a JSON-RPC Invalid Request error, not
// called invalid JSON; a body that is not JSON still is.
func TestHTTPBatchRefused(t *testing.T) {
	base := serveHTTP(t, newModelFreeServer(t, nil))
	_, sid, _ := rawMCP(t, base, http.MethodPost, "", initBody)
	tests := []struct {
		name, body string
		status     int
		code       int    // the JSON-RPC error code, 0 for none
		message    string // a part of its message
	}{
		{"batch", "[" + listToolsBody + "," + listToolsBody + "]", 400, -32600, "JSON-RPC batches are not supported"},
		{"batch after white space", " \r\n\t [" + listToolsBody + "]", 400, -32600, "JSON-RPC batches are not supported"},
		{"empty batch", "[]", 400, -32600, "JSON-RPC batches are not supported"},
		{"batch of an initialize", "[" + initBody + "]", 400, -32600, "JSON-RPC batches are not supported"},
		{"one message", listToolsBody, 200, 0, ""},
		{"not JSON", "{", 400, -32700, "not valid json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := rawMCP(t, base, http.MethodPost, sid, tc.body)
			if status != tc.status {
				t.Fatalf("status %d (%s), want %d", status, body, tc.status)
			}
			if tc.code == 0 {
				return
			}
			var msg struct {
				JSONRPC string `json:"jsonrpc"`
				Error   struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(body), &msg); err != nil || msg.JSONRPC != "2.0" || msg.Error.Code != tc.code || !strings.Contains(msg.Error.Message, tc.message) {
				t.Errorf("answer %s (%v), want error %d saying %q", body, err, tc.code, tc.message)
			}
		})
	}
}
