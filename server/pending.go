package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/vault-rag/vault-rag/internal/vault"
)

// VaultProblem says what keeps the folder dir from being served as a vault,
// or returns nil: it does not exist, is a file, cannot be read, or holds no
// markdown note (no .md file outside hidden folders).
func VaultProblem(dir string) error {
	if err := vault.FolderProblem(dir); err != nil {
		return err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	// WalkDir does not follow a symlink, even at the root: a vault folder
	// is often one.
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fmt.Errorf("the vault folder %s cannot be read: %w", abs, err)
	}
	found := false
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil && p == root:
			return err
		case err != nil:
			return nil // an unreadable subfolder: the notes may be elsewhere
		case d.IsDir() && p != root && strings.HasPrefix(d.Name(), "."):
			return filepath.SkipDir
		case !d.IsDir() && strings.EqualFold(filepath.Ext(p), ".md"):
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	switch {
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("the vault folder %s cannot be read: permission denied", abs)
	case err != nil:
		return fmt.Errorf("the vault folder %s cannot be read: %w", abs, err)
	case !found:
		return fmt.Errorf("the vault folder %s holds no markdown notes (.md files)", abs)
	}
	return nil
}

// StartFunc makes the server of a vault folder that can now be served; ctx
// is the pending server's lifetime.
type StartFunc func(ctx context.Context) (*Server, error)

// pending is the state of a Server made by NewPending.
type pending struct {
	hint  string
	start StartFunc

	mu       sync.Mutex
	real     *Server
	handlers map[string]mcpserver.ToolHandlerFunc
}

// NewPending returns a Server for a vault folder that cannot be served yet
// (VaultProblem), so that a client which started it sees a server, not a
// closed connection: it answers initialize and lists the tools, and every
// tool call looks at the folder again. While the problem lasts, the call's
// result is an error that says what is wrong, followed by hint (how to fix
// it); once the folder can be served, start makes the real server, which
// answers that call and every later one, with no restart. /health reports
// the same. opts are the transport's settings (Addr, Token, the allowed
// origins and hosts, the limits, Logger), VaultPath the folder looked at,
// and Registry, when set, the models /health lists. The instructions and
// tool descriptions cannot name the notes' language: it is not known yet.
func NewPending(opts Options, hint string, start StartFunc) (*Server, error) {
	if opts.VaultPath == "" {
		return nil, errors.New("server: VaultPath is required")
	}
	if start == nil {
		return nil, errors.New("server: a pending server needs its StartFunc")
	}
	opts.setDefaults()
	// A configuration that cannot be read is the installation's fault, not
	// the folder's: it is refused now, as New refuses it.
	if err := opts.checkConfig(); err != nil {
		return nil, err
	}
	s := &Server{opts: opts, log: opts.Logger, pending: &pending{hint: hint, start: start}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if abs, err := filepath.Abs(opts.VaultPath); err == nil {
		s.realVault = abs
	}
	s.mcp = mcpserver.NewMCPServer("vault-rag", Version(),
		mcpserver.WithToolCapabilities(false),
		mcpserver.WithStrictInputSchemaDefault(),
		mcpserver.WithRecovery(),
		mcpserver.WithInstructions(Instructions(vault.Languages{}, opts.Tools)),
	)
	for _, spec := range enabledSpecs(vault.Languages{}, opts.Tools) {
		t := spec.def
		name := t.Name
		s.mcp.AddTool(t, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			h, err := s.ready()
			if err != nil {
				return mcp.NewToolResultError(name + ": " + err.Error()), nil
			}
			return h[name](ctx, req)
		})
	}
	return s, nil
}

// ready returns the real server's tool handlers, starting it if the vault
// folder can now be served, or says what is wrong with the folder.
func (s *Server) ready() (map[string]mcpserver.ToolHandlerFunc, error) {
	p := s.pending
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.real != nil {
		return p.handlers, nil
	}
	if err := s.ctx.Err(); err != nil {
		return nil, errShuttingDown
	}
	if err := VaultProblem(s.opts.VaultPath); err != nil {
		return nil, p.explain(err)
	}
	s.log.Info("the vault folder can be served now; starting", "vault", s.opts.VaultPath)
	real, err := p.start(s.ctx)
	if err != nil {
		return nil, fmt.Errorf("starting on the vault folder %s: %w", s.realVault, err)
	}
	p.real = real
	p.handlers = map[string]mcpserver.ToolHandlerFunc{}
	for _, t := range real.tools() {
		p.handlers[t.Tool.Name] = t.Handler
	}
	return p.handlers, nil
}

func (p *pending) explain(err error) error {
	if p.hint == "" {
		return err
	}
	return fmt.Errorf("%w. %s", err, p.hint)
}

// pendingHealth is /health of a pending server: the real server's once it
// runs, else an error that says what is wrong with the vault folder.
func (s *Server) pendingHealth(ctx context.Context) Health {
	if _, err := s.ready(); err != nil {
		h := Health{Status: StatusError, Version: Version(), Vault: s.realVault, IndexPath: s.opts.DBPath, Config: s.opts.ConfigName,
			Index: err.Error(), Models: []ModelHealth{}, DegradedStages: []string{}, OtherConfigurations: []ConfigHealth{}}
		return h
	}
	return s.pending.real.Health(ctx)
}

// closePending stops a pending server and the real one it started.
func (s *Server) closePending() error {
	var err error
	s.closed.Do(func() {
		s.cancel()
		p := s.pending
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.real != nil {
			err = p.real.Close()
		}
	})
	return err
}
