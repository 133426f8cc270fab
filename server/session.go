package server

import (
	"crypto/rand"
	"errors"
	"net/http"
	"sync"
	"time"

	mcpserver "github.com/mark3labs/mcp-go/server"
)

// maxSessions is how many sessions the HTTP server remembers: past it, the
// one used least recently is forgotten (its client gets 404 and, as the
// transport asks of it, starts a new session with initialize).
const maxSessions = 10_000

var errUnknownSession = errors.New("unknown session")

// sessionIDs issues, checks and ends the Mcp-Session-Id values of the
// streamable HTTP transport (mcp-go's SessionIdManager): an id is valid only
// from the initialize that issued it until the client's DELETE, or until
// this process ends. mcp-go answers a request carrying any other id 404, as
// the transport specification asks; a client then initializes again.
type sessionIDs struct {
	mu       sync.Mutex
	lastUsed map[string]time.Time
	now      func() time.Time
}

var _ mcpserver.SessionIdManager = (*sessionIDs)(nil)

func newSessionIDs() *sessionIDs {
	return &sessionIDs{lastUsed: map[string]time.Time{}, now: time.Now}
}

// Generate issues a new id: 128 random bits (crypto/rand), so none can be
// guessed.
func (m *sessionIDs) Generate() string {
	id := "mcp-session-" + rand.Text()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.lastUsed) >= maxSessions {
		var oldest string
		var at time.Time
		for k, t := range m.lastUsed {
			if oldest == "" || t.Before(at) {
				oldest, at = k, t
			}
		}
		delete(m.lastUsed, oldest)
	}
	m.lastUsed[id] = m.now()
	return id
}

// Validate accepts only a live id this server issued.
func (m *sessionIDs) Validate(id string) (isTerminated bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.lastUsed[id]; !ok {
		return false, errUnknownSession
	}
	m.lastUsed[id] = m.now()
	return false, nil
}

// Terminate ends a session (the client's DELETE): its id is refused from
// then on.
func (m *sessionIDs) Terminate(id string) (isNotAllowed bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.lastUsed, id)
	return false, nil
}

func (m *sessionIDs) known(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.lastUsed[id]
	return ok
}

// refuseUnknownDelete answers a DELETE of a session this server does not
// know (never issued, already ended) 404, as the transport asks; mcp-go
// would answer 200.
func refuseUnknownDelete(ids *sessionIDs, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get(mcpserver.HeaderKeySessionID); r.Method == http.MethodDelete && id != "" && !ids.known(id) {
			http.Error(w, "Invalid session ID", http.StatusNotFound)
			return
		}
		next.ServeHTTP(w, r)
	})
}
