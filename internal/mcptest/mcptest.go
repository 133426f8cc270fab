// Package mcptest runs `vault-rag serve --transport stdio` in a child process
// and speaks MCP to it, for the tests of the server and of the command. Only
// tests import it.
package mcptest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Initialize starts c and initializes it as the tests' client.
func Initialize(ctx context.Context, c *client.Client) (*mcp.InitializeResult, error) {
	if err := c.Start(ctx); err != nil {
		return nil, fmt.Errorf("start client: %w", err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "vault-rag-test", Version: "0"}
	return c.Initialize(ctx, req)
}

// Stdio is a server process and a client over its stdin and stdout.
type Stdio struct {
	// Client speaks to the server; Initialize it before use.
	Client *client.Client

	cmd      *exec.Cmd
	toClient *io.PipeReader // the client's end of the checked stdout
	stderr   lockedBuilder
	checked  chan struct{} // closed when stdout has been read to its end
	bad      []string      // stdout lines that are not JSON-RPC messages

	once     sync.Once
	closed   atomic.Bool
	closeErr error
}

// StartStdio starts cmd, a server over stdio, with a client over its stdin
// and stdout. Every line the server writes to stdout must be a JSON-RPC
// message: Close reports the others. When the test ends without closing it,
// it is closed, and what Close reports is a test error.
func StartStdio(t *testing.T, cmd *exec.Cmd) *Stdio {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &Stdio{cmd: cmd, checked: make(chan struct{})}
	cmd.Stderr = &s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	s.toClient = pr
	go func() {
		defer close(s.checked)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var msg struct {
				JSONRPC string `json:"jsonrpc"`
			}
			if err := json.Unmarshal(sc.Bytes(), &msg); err != nil || msg.JSONRPC != "2.0" {
				s.bad = append(s.bad, sc.Text())
			}
			pw.Write(append(sc.Bytes(), '\n'))
		}
		pw.Close()
	}()
	s.Client = client.NewClient(transport.NewIO(pr, stdin, io.NopCloser(strings.NewReader(""))))
	t.Cleanup(func() {
		if s.closed.Load() {
			return // the test closed it and had Close's answer
		}
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// CallTool calls the tool name with args and returns its answer as JSON (its
// structuredContent, or the text of a tool error) and whether it is a tool
// error; a protocol error fails the test, with the server's stderr.
func (s *Stdio) CallTool(ctx context.Context, t testing.TB, name string, args map[string]any) (string, bool) {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := s.Client.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("%s: protocol error: %v\nstderr:\n%s", name, err, s.Stderr())
	}
	var text []string
	for _, ct := range res.Content {
		if tc, ok := ct.(mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	if !res.IsError && res.StructuredContent != nil {
		raw, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatalf("%s: structuredContent: %v", name, err)
		}
		return string(raw), false
	}
	return strings.Join(text, "\n"), res.IsError
}

// Stderr is what the server has written to stderr so far.
func (s *Stdio) Stderr() string { return s.stderr.String() }

// Close closes the client, which closes the server's stdin, and waits for the
// server to exit. It returns an error when the server did not exit cleanly or
// wrote to stdout anything but JSON-RPC messages; a second call returns the
// first's answer.
func (s *Stdio) Close() error {
	s.closed.Store(true)
	s.once.Do(func() {
		s.Client.Close()
		if err := s.cmd.Wait(); err != nil {
			s.closeErr = fmt.Errorf("the server did not exit cleanly on EOF: %w\n%s", err, s.Stderr())
		}
		// Lines the closed client no longer reads are still checked.
		s.toClient.CloseWithError(io.EOF)
		<-s.checked
		if len(s.bad) > 0 {
			s.closeErr = errors.Join(s.closeErr, fmt.Errorf("stdout carried %d lines that are not JSON-RPC, e.g. %q", len(s.bad), s.bad[0]))
		}
	})
	return s.closeErr
}

// lockedBuilder is a strings.Builder the process's stderr copier writes to
// while a test reads it.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
