package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/vault"
)

// The notes as MCP resources: vault://PATH, one per indexed note, listed a
// page at a time; the template vault://{path} with completion of its path.
const (
	// ResourceScheme starts every note's URI.
	ResourceScheme = "vault://"
	// ResourceTemplate is the URI template of a note.
	ResourceTemplate = ResourceScheme + "{path}"
	// ResourceMIMEType is every note's type.
	ResourceMIMEType = "text/markdown"
	// DefaultResourcePage is how many notes one resources/list page holds.
	DefaultResourcePage = 500
	// MaxCompletions bounds completion/complete's values (the protocol's own
	// limit is 100).
	MaxCompletions = 100
)

// errBadCursor is a resources/list cursor this server did not hand out.
var errBadCursor = errors.New("invalid cursor: pass back the nextCursor of the previous page unchanged")

// ResourceURI is a note's URI: its vault-relative path after vault://, each
// segment percent-encoded as RFC 3986 requires and "/" kept between them.
func ResourceURI(rel string) string {
	segs := strings.Split(rel, "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	return ResourceScheme + strings.Join(segs, "/")
}

// notePathOfURI is the vault-relative path a vault:// URI names, decoded
// once; the path checks are CleanNotePath's, as for vault_read.
func notePathOfURI(uri string) (string, error) {
	rest, ok := strings.CutPrefix(uri, ResourceScheme)
	if !ok {
		return "", fmt.Errorf("resource %s: a note's URI starts with %s", vault.QuoteInput(uri), ResourceScheme)
	}
	p, err := url.PathUnescape(rest)
	if err != nil {
		return "", fmt.Errorf("resource %s: the path is not validly percent-encoded: %w", vault.QuoteInput(uri), err)
	}
	return p, nil
}

// canonicalURI percent-encodes every byte of a vault:// URI's path that is
// not an RFC 3986 unreserved character or a valid %XX escape. mcp-go matches
// vault://{path} as RFC 6570 simple expansion, which takes neither "/" nor raw
// spaces or letters beyond ASCII: in this form every note's URI matches it,
// and decoding it gives back the same path.
func canonicalURI(uri string) string {
	rest, ok := strings.CutPrefix(uri, ResourceScheme)
	if !ok {
		return uri
	}
	var b strings.Builder
	b.WriteString(ResourceScheme)
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		switch {
		case c == '%' && i+2 < len(rest) && isHex(rest[i+1]) && isHex(rest[i+2]):
			b.WriteString(rest[i : i+3])
			i += 2
		case unreserved(c):
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// encodeCursor and decodeCursor: a cursor is the offset of the page's first
// note in path order, base64 as mcp-go's own pagination expects.
func encodeCursor(offset int) mcp.Cursor {
	return mcp.Cursor(base64.StdEncoding.EncodeToString([]byte("n" + strconv.Itoa(offset))))
}

func decodeCursor(c mcp.Cursor) (int, error) {
	if c == "" {
		return 0, nil
	}
	raw, err := base64.StdEncoding.DecodeString(string(c))
	if err != nil {
		return 0, errBadCursor
	}
	num, ok := strings.CutPrefix(string(raw), "n")
	if !ok {
		return 0, errBadCursor
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 {
		return 0, errBadCursor
	}
	return n, nil
}

// resourceOptions are the MCP server options for the notes as resources,
// progress and logs: the resources capability with listChanged, completions,
// logging, and the hooks below.
func (s *Server) resourceOptions() []mcpserver.ServerOption {
	hooks := &mcpserver.Hooks{}
	// mcp-go lists only resources registered one by one, sorted by name;
	// the notes are listed from the index instead, in path order, a page at
	// a time, by filling the (empty) page mcp-go answers.
	hooks.AddAfterListResources(func(ctx context.Context, _ any, req *mcp.ListResourcesRequest, res *mcp.ListResourcesResult) {
		page, next := s.listResources(ctx, req.Params.Cursor)
		res.Resources, res.NextCursor = page, next
	})
	// A cursor this server did not make is refused before anything runs:
	// the after-hook cannot answer an error.
	hooks.AddOnRequestInitialization(func(_ context.Context, _ any, message any) error {
		raw, ok := message.(json.RawMessage)
		if !ok {
			return nil
		}
		var req struct {
			Method string `json:"method"`
			Params struct {
				Cursor mcp.Cursor `json:"cursor"`
			} `json:"params"`
		}
		if json.Unmarshal(raw, &req) != nil || req.Method != string(mcp.MethodResourcesList) {
			return nil
		}
		_, err := decodeCursor(req.Params.Cursor)
		return err
	})
	hooks.AddBeforeReadResource(func(_ context.Context, _ any, req *mcp.ReadResourceRequest) {
		req.Params.URI = canonicalURI(req.Params.URI)
	})
	// Build logs go unprompted only to clients of the initialize handshake
	// (protocol versions up to 2025-11-25), which set their level with
	// logging/setLevel; a later client declares a level per request and gets
	// them only with its vault_reindex call (reindexWithProgress).
	hooks.AddAfterInitialize(func(ctx context.Context, _ any, _ *mcp.InitializeRequest, _ *mcp.InitializeResult) {
		if cs := mcpserver.ClientSessionFromContext(ctx); cs != nil {
			s.sessions.Store(cs.SessionID(), struct{}{})
		}
	})
	hooks.AddOnUnregisterSession(func(_ context.Context, cs mcpserver.ClientSession) {
		s.sessions.Delete(cs.SessionID())
	})
	return []mcpserver.ServerOption{
		mcpserver.WithResourceCapabilities(false, true),
		mcpserver.WithCompletions(),
		mcpserver.WithResourceCompletionProvider(pathCompleter{s}),
		mcpserver.WithLogging(),
		mcpserver.WithHooks(hooks),
	}
}

// addResources registers the note template and its reader.
func (s *Server) addResources() {
	s.mcp.AddResourceTemplate(
		mcp.NewResourceTemplate(ResourceTemplate, "note",
			mcp.WithTemplateTitle("A note of the vault"),
			mcp.WithTemplateDescription("A note by its vault-relative path, e.g. projects/plan.md; read as vault_read reads it (the text after the frontmatter; the title, metadata and headings in _meta)."),
			mcp.WithTemplateMIMEType(ResourceMIMEType),
		),
		s.readResource,
	)
}

// resourcePage is how many notes a resources/list page holds.
func (s *Server) resourcePage() int {
	if s.opts.resourcePage > 0 {
		return s.opts.resourcePage
	}
	return DefaultResourcePage
}

// listResources is one page of the notes as resources. Without an index yet
// (a first build has not put the keyword index in place) or when the index
// cannot be read, the page is empty: the first build sends list_changed
// once the notes are there.
func (s *Server) listResources(ctx context.Context, cursor mcp.Cursor) ([]mcp.Resource, mcp.Cursor) {
	out := []mcp.Resource{}
	offset, err := decodeCursor(cursor)
	if err != nil {
		return out, "" // refused earlier, by the request hook
	}
	h, release, err := s.acquire(ctx)
	if err != nil {
		s.log.Info("resources/list answered an empty page", "reason", err)
		return out, ""
	}
	defer release()
	limit := s.resourcePage()
	rows, total, err := h.db.List(ctx, index.Filter{}, offset, limit)
	if err != nil {
		s.log.Warn("resources/list: cannot list the notes", "err", err)
		return out, ""
	}
	for _, r := range rows {
		out = append(out, mcp.Resource{URI: ResourceURI(r.Path), Name: r.Title, Description: r.Path, MIMEType: ResourceMIMEType})
	}
	var next mcp.Cursor
	if n := offset + len(rows); len(rows) > 0 && n < total {
		next = encodeCursor(n)
	}
	return out, next
}

// readResource reads a note through vault_read's own code: the same path
// checks, refusals and size bound. The text is vault_read's content; the
// rest of its answer (title, metadata, headings) is the contents' _meta.
func (s *Server) readResource(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	rel, err := notePathOfURI(req.Params.URI)
	if err != nil {
		return nil, err
	}
	out, err := s.readNote(ctx, rel)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ToolRead, err)
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode the note: %w", err)
	}
	var meta map[string]any
	if err := json.Unmarshal(raw, &meta); err != nil {
		return nil, fmt.Errorf("encode the note: %w", err)
	}
	delete(meta, "content")
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: ResourceURI(out.Path), MIMEType: ResourceMIMEType, Text: out.Content, Meta: meta}}, nil
}

// pathCompleter completes the path argument of vault://{path}: the indexed
// notes' paths that start with what was typed, in path order, at most
// MaxCompletions of them, with the total.
type pathCompleter struct{ s *Server }

func (p pathCompleter) CompleteResourceArgument(ctx context.Context, uri string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	if uri != ResourceTemplate || arg.Name != "path" {
		return &mcp.Completion{Values: []string{}}, nil
	}
	h, release, err := p.s.acquire(ctx)
	if err != nil {
		return &mcp.Completion{Values: []string{}}, nil // nothing indexed yet: nothing to offer
	}
	defer release()
	rows, total, err := h.db.List(ctx, index.Filter{PathPrefix: arg.Value}, 0, MaxCompletions)
	if err != nil {
		return nil, fmt.Errorf("complete the path: %w", err)
	}
	out := &mcp.Completion{Values: make([]string, 0, len(rows)), Total: total, HasMore: total > len(rows)}
	for _, r := range rows {
		out.Values = append(out.Values, r.Path)
	}
	return out, nil
}
