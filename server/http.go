package server

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/vault-rag/vault-rag/internal/vault"
)

// ErrNeedToken says the server was asked to listen beyond loopback without a
// bearer token.
var ErrNeedToken = errors.New("refusing to listen on a non-loopback address without a token: set VAULT_RAG_TOKEN, or bind 127.0.0.1")

// isLoopbackHost reports whether host (no port; brackets allowed) is
// "localhost" or a loopback IP.
func isLoopbackHost(host string) bool {
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// checkBind refuses a non-loopback listen address when there is no token. An
// empty host (":8848") listens on every interface and so is not loopback.
func checkBind(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if !isLoopbackHost(host) && token == "" {
		return fmt.Errorf("%w (address %q)", ErrNeedToken, addr)
	}
	return nil
}

// Handler serves /mcp (MCP over streamable HTTP) and /health behind the
// request guards: Host and Origin checks against DNS rebinding, the bearer
// token when one is set, the body size limit and the request time limit. Used
// alone (httptest), it accepts any port in Host; Serve pins the bound one.
func (s *Server) Handler() http.Handler {
	// The server sends nothing unprompted, so there is no GET stream to hold
	// open: every request is one bounded POST.
	ids := newSessionIDs()
	mcpH := mcpserver.NewStreamableHTTPServer(s.mcp,
		mcpserver.WithDisableStreaming(true),
		mcpserver.WithStreamableHTTPLogger(s.log),
		mcpserver.WithSessionIdManager(ids),
	)
	mux := http.NewServeMux()
	mux.Handle("/mcp", refuseBatches(refuseUnknownDelete(ids, mcpH)))
	mux.HandleFunc("GET /health", s.serveHealth)
	return s.guard(mux)
}

// errBatch is the answer to a JSON-RPC batch (a body that is a JSON array):
// MCP 2025-06-18 removed batches, and mcp-go would call the body invalid JSON.
const errBatch = "JSON-RPC batches are not supported: send one message per request"

// refuseBatches answers a POST whose body is a JSON array (after white
// space) with a JSON-RPC Invalid Request error, HTTP 400. The guard has
// already read the body, bounded, into memory.
func refuseBatches(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Body != nil && r.Body != http.NoBody {
			body, err := io.ReadAll(r.Body)
			r.Body.Close()
			if err != nil {
				http.Error(w, "read request body: "+err.Error(), http.StatusBadRequest)
				return
			}
			if t := bytes.TrimLeft(body, " \t\r\n"); len(t) > 0 && t[0] == '[' {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": nil,
					"error": map[string]any{"code": -32600, "message": errBatch}})
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	h := s.Health(r.Context())
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(h)
}

// guard applies the security checks, cheapest first.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if why := s.badHost(r.Host); why != "" {
			s.log.Warn("refused request", "reason", why, "remote", r.RemoteAddr)
			http.Error(w, "forbidden: "+why, http.StatusForbidden)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !s.allowedOrigin(origin) {
			s.log.Warn("refused request", "reason", "foreign origin", "origin", origin, "remote", r.RemoteAddr)
			http.Error(w, fmt.Sprintf("forbidden: origin %s is not allowed", vault.QuoteInput(origin)), http.StatusForbidden)
			return
		}
		if s.opts.Token != "" && !s.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="vault-rag"`)
			http.Error(w, "unauthorized: send Authorization: Bearer <VAULT_RAG_TOKEN>", http.StatusUnauthorized)
			return
		}
		if r.ContentLength > s.opts.MaxBodyBytes {
			http.Error(w, fmt.Sprintf("request body of %d bytes is over the %d-byte limit", r.ContentLength, s.opts.MaxBodyBytes), http.StatusRequestEntityTooLarge)
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			// Read it here, bounded, so an oversized chunked body is a 413 and
			// not a JSON-RPC parse error deep inside the transport.
			body, err := io.ReadAll(io.LimitReader(r.Body, s.opts.MaxBodyBytes+1))
			r.Body.Close()
			if err != nil {
				http.Error(w, "read request body: "+err.Error(), http.StatusBadRequest)
				return
			}
			if int64(len(body)) > s.opts.MaxBodyBytes {
				http.Error(w, fmt.Sprintf("request body is over the %d-byte limit", s.opts.MaxBodyBytes), http.StatusRequestEntityTooLarge)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		// A backstop: each tool call has its own, shorter limit, and must
		// reach its answer before this one cuts the response off.
		ctx, cancel := context.WithTimeout(r.Context(), s.callLimit()+5*time.Second)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// badHost says why a Host header is refused, or "" to accept it. Accepted:
// the loopback names, the host the server is bound to and AllowedHosts, with
// the bound port. A server bound to every interface (0.0.0.0, ::) cannot know
// its names, so it accepts any host; it has a token, which a page driving a
// browser cannot send.
func (s *Server) badHost(hostport string) string {
	if hostport == "" {
		return "missing Host header"
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, "80"
	}
	if bp := s.boundPort.Load(); bp != 0 && port != strconv.Itoa(int(bp)) {
		return fmt.Sprintf("Host %s names another port than the one served (%d)", vault.QuoteInput(hostport), bp)
	}
	if isLoopbackHost(host) {
		return ""
	}
	bound, _, _ := net.SplitHostPort(s.opts.Addr)
	if ip, err := netip.ParseAddr(strings.Trim(bound, "[]")); bound == "" || (err == nil && ip.IsUnspecified()) {
		return ""
	}
	if strings.EqualFold(strings.Trim(host, "[]"), strings.Trim(bound, "[]")) {
		return ""
	}
	for _, h := range s.opts.AllowedHosts {
		if strings.EqualFold(host, h) {
			return ""
		}
	}
	return fmt.Sprintf("Host %s is not this server (DNS rebinding protection)", vault.QuoteInput(hostport))
}

// allowedOrigin accepts http(s) origins on a loopback host (any port) and the
// configured ones; everything else — other sites, "null", file: — is refused.
func (s *Server) allowedOrigin(origin string) bool {
	for _, o := range s.opts.AllowedOrigins {
		if strings.EqualFold(strings.TrimRight(o, "/"), origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || (u.Path != "" && u.Path != "/") {
		return false
	}
	return isLoopbackHost(u.Hostname())
}

func (s *Server) authorized(r *http.Request) bool {
	const prefix = "Bearer "
	h := r.Header.Get("Authorization")
	if len(h) < len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(h[len(prefix):])), []byte(s.opts.Token)) == 1
}

// ListenAndServe listens on Options.Addr and serves until ctx is cancelled.
// It refuses a non-loopback address without a token before binding.
func (s *Server) ListenAndServe(ctx context.Context) error {
	if err := checkBind(s.opts.Addr, s.opts.Token); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", s.opts.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.opts.Addr, err)
	}
	return s.Serve(ctx, ln)
}

// Serve serves HTTP on ln until ctx is cancelled, then shuts down gracefully:
// it stops accepting, lets requests in flight finish (up to 10 s) and returns
// nil. It closes ln.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if err := checkBind(ln.Addr().String(), s.opts.Token); err != nil {
		ln.Close()
		return err
	}
	if ta, ok := ln.Addr().(*net.TCPAddr); ok {
		s.boundPort.Store(int32(ta.Port))
	}
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      s.callLimit() + 15*time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	s.log.Info("serving MCP over streamable HTTP", "url", "http://"+ln.Addr().String()+"/mcp", "health", "http://"+ln.Addr().String()+"/health", "token", s.opts.Token != "")
	s.log.Info("health", "state", s.Health(ctx).summary())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve HTTP: %w", err)
	case <-ctx.Done():
	}
	s.log.Info("shutting down: finishing requests in flight")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("shut down HTTP: %w", err)
	}
	return nil
}

// ServeStdio serves one client over in and out (the process's stdin and
// stdout) until in ends or ctx is cancelled. Only protocol messages are
// written to out; logs go to the Logger.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	ss := mcpserver.NewStdioServer(s.mcp)
	ss.SetErrorLogger(slog.NewLogLogger(s.log.Handler(), slog.LevelError))
	s.log.Info("serving MCP over stdio", "health", s.Health(ctx).summary())
	err := ss.Listen(ctx, in, out)
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("serve stdio: %w", err)
	}
	return nil
}
