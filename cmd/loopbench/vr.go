//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// vrTimeout bounds one vr command: the session's start and the call.
const vrTimeout = 3 * time.Minute

// cmdVR is the vault-rag arm's tool: `tools` prints what an MCP client shows
// the model (the server's instructions, each tool's name, description, input
// schema and output schema if any); `call TOOL JSON` calls one tool over MCP
// (streamable HTTP) and prints the result's text content verbatim. Both are
// logged.
func cmdVR(args []string) error {
	fs := newFlagSet("vr", "usage: loopbench vr --server URL --log FILE --qid ID tools\n       loopbench vr --server URL --log FILE --qid ID call TOOL 'JSON-ARGUMENTS'")
	server := fs.String("server", "", "the MCP endpoint, http://127.0.0.1:PORT/mcp")
	logPath := fs.String("log", "", "the call log (JSON lines, appended)")
	qid := fs.String("qid", "", "the question's id")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := need("server", *server, "log", *logPath, "qid", *qid); err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return usageErr("want tools, or call TOOL 'JSON-ARGUMENTS'")
	}
	started := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), vrTimeout)
	defer cancel()

	switch rest[0] {
	case "tools":
		if len(rest) != 1 {
			return usageErr("tools takes no arguments")
		}
		out, err := listTools(ctx, *server)
		failed := err != nil
		if err != nil {
			out = "error: " + err.Error() + "\n"
		}
		os.Stdout.WriteString(out)
		if lerr := logCall(*logPath, Call{Arm: armVaultRag, QID: *qid, Tool: "tools", Bytes: len(out), Error: failed, Setup: true}, started); lerr != nil {
			return lerr
		}
		if failed {
			return exitCode{code: 1}
		}
		return nil
	case "call":
		if len(rest) < 2 || len(rest) > 3 {
			return usageErr("want call TOOL 'JSON-ARGUMENTS'")
		}
		tool, raw := rest[1], "{}"
		if len(rest) == 3 {
			raw = rest[2]
		}
		call := Call{Arm: armVaultRag, QID: *qid, Tool: tool}
		var argMap map[string]any
		var out string
		failed := false
		dec := json.NewDecoder(strings.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&argMap); err != nil || argMap == nil {
			out, failed = fmt.Sprintf("error: the arguments must be one JSON object: %v\n", errOr(err, "null")), true
			call.Args, _ = json.Marshal(raw)
		} else {
			call.Args, _ = json.Marshal(argMap)
			out, failed = callTool(ctx, *server, tool, argMap)
		}
		os.Stdout.WriteString(out)
		call.Bytes, call.Error = len(out), failed
		if err := logCall(*logPath, call, started); err != nil {
			return err
		}
		if failed {
			return exitCode{code: 1}
		}
		return nil
	}
	return usageErr("unknown vr command %q: want tools or call", rest[0])
}

func errOr(err error, s string) string {
	if err != nil {
		return err.Error()
	}
	return s
}

// connect opens an initialized MCP session over streamable HTTP.
func connect(ctx context.Context, server string) (*client.Client, *mcp.InitializeResult, error) {
	hc := &http.Client{Transport: &http.Transport{Proxy: nil}}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	c, err := client.NewStreamableHttpClient(server, transport.WithHTTPBasicClient(hc), transport.WithHTTPLogger(logger))
	if err != nil {
		return nil, nil, fmt.Errorf("MCP client: %w", err)
	}
	if err := c.Start(ctx); err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("connect to %s: %w", server, err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION // the initialize handshake, as MCP clients use it
	req.Params.ClientInfo = mcp.Implementation{Name: "loopbench", Version: "1"}
	res, err := c.Initialize(ctx, req)
	if err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("initialize an MCP session with %s: %w", server, err)
	}
	return c, res, nil
}

// rawTool is a tool of tools/list as the server sent it: the schemas are
// kept raw, so no key is lost.
type rawTool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"` // MCP 2025-06-18 on; absent on most tools
}

// listTools is what an MCP client shows a model of a server: its
// instructions, and each tool's name, title, description, input schema and
// output schema (when the tool has one), the schemas as the server sent them
// (tools/list read raw, so no key is lost).
func listTools(ctx context.Context, server string) (string, error) {
	c, init, err := connect(ctx, server)
	if err != nil {
		return "", err
	}
	defer c.Close()
	var tools []rawTool
	cursor := ""
	for id := int64(1000); ; id++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		resp, err := c.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(id), Method: string(mcp.MethodToolsList), Params: params})
		if err != nil {
			return "", fmt.Errorf("tools/list: %w", err)
		}
		if resp.Error != nil {
			return "", fmt.Errorf("tools/list: %s", resp.Error.Message)
		}
		var page struct {
			Tools      []rawTool `json:"tools"`
			NextCursor string    `json:"nextCursor"`
		}
		if err := json.Unmarshal(resp.Result, &page); err != nil {
			return "", fmt.Errorf("tools/list: %w", err)
		}
		tools = append(tools, page.Tools...)
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	return formatListing(init.Instructions, tools), nil
}

// formatListing prints a server's instructions and tools as listTools shows
// them.
func formatListing(instructions string, tools []rawTool) string {
	var b strings.Builder
	b.WriteString("Instructions:\n")
	if instructions == "" {
		b.WriteString("(none)\n")
	} else {
		b.WriteString(strings.TrimRight(instructions, "\n") + "\n")
	}
	fmt.Fprintf(&b, "\nTools (%d):\n", len(tools))
	for _, t := range tools {
		fmt.Fprintf(&b, "\n## %s\n", t.Name)
		if t.Title != "" {
			fmt.Fprintf(&b, "Title: %s\n", t.Title)
		}
		b.WriteString("Description:\n")
		b.WriteString(strings.TrimRight(t.Description, "\n") + "\n")
		b.WriteString("Input schema:\n")
		writeSchema(&b, t.InputSchema)
		if s := bytes.TrimSpace(t.OutputSchema); len(s) > 0 && string(s) != "null" {
			b.WriteString("Output schema:\n")
			writeSchema(&b, s)
		}
	}
	return b.String()
}

// writeSchema writes a schema indented, or as sent if it is not valid JSON,
// and a newline.
func writeSchema(b *strings.Builder, schema json.RawMessage) {
	var ind bytes.Buffer
	if err := json.Indent(&ind, schema, "", "  "); err != nil {
		b.Write(schema)
	} else {
		b.Write(ind.Bytes())
	}
	b.WriteString("\n")
}

// callTool calls one tool and returns its text content verbatim (several
// contents joined by newlines, nothing added) and whether the call failed: a protocol
// error, or the tool's own error (isError).
func callTool(ctx context.Context, server, tool string, args map[string]any) (string, bool) {
	c, _, err := connect(ctx, server)
	if err != nil {
		return "error: " + err.Error() + "\n", true
	}
	defer c.Close()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return "error: " + err.Error() + "\n", true
	}
	var parts []string
	for _, content := range res.Content {
		switch v := content.(type) {
		case mcp.TextContent:
			parts = append(parts, v.Text)
		case mcp.EmbeddedResource:
			if r, ok := v.Resource.(mcp.TextResourceContents); ok {
				parts = append(parts, r.Text)
			} else {
				parts = append(parts, "[binary resource]")
			}
		case mcp.ImageContent:
			parts = append(parts, "[image]")
		case mcp.AudioContent:
			parts = append(parts, "[audio]")
		case mcp.ResourceLink:
			parts = append(parts, "[resource link: "+v.URI+"]")
		}
	}
	return strings.Join(parts, "\n"), res.IsError
}
