package server

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/vault-rag/vault-rag/index"
)

// ProgressInterval is the shortest time between two progress notifications
// to one caller (the first, the end of embedding and the build's end are
// always sent).
const ProgressInterval = 250 * time.Millisecond

// LoggerName names the server's log messages to clients.
const LoggerName = "vault-rag"

// buildEvents carries a build's progress from the build goroutine to the
// callers waiting for it: each vault_reindex call with a progressToken
// subscribes for the run it waits for.
type buildEvents struct {
	mu   sync.Mutex
	seq  int             // the run in progress, 0 when none
	last *index.Progress // its last embedding progress
	subs map[*progressSub]struct{}
	// noIndex is whether the run in progress started without an index
	// file: its notes become listable when its keyword index is in place.
	noIndex   bool
	announced bool
}

func (e *buildEvents) begin(seq int, noIndex bool) {
	e.mu.Lock()
	e.seq, e.last, e.noIndex, e.announced = seq, nil, noIndex, false
	e.mu.Unlock()
}

// progress records p and passes it to the subscribers of the run; it
// reports whether this is the moment a first build's notes became listable.
func (e *buildEvents) progress(p index.Progress) (listable bool) {
	if p.Phase != "embedding" {
		return false // reading counts notes, not the chunks the progress is in
	}
	e.mu.Lock()
	seq := e.seq
	e.last = &p
	subs := make([]*progressSub, 0, len(e.subs))
	for sub := range e.subs {
		subs = append(subs, sub)
	}
	if e.noIndex && !e.announced {
		// A staged first build embeds into the live index: its keyword
		// index, and so the notes, are in place once embedding starts.
		e.announced, listable = true, true
	}
	e.mu.Unlock()
	for _, sub := range subs {
		sub.update(seq, p)
	}
	return listable
}

func (e *buildEvents) subscribe(sub *progressSub) {
	e.mu.Lock()
	if e.subs == nil {
		e.subs = map[*progressSub]struct{}{}
	}
	e.subs[sub] = struct{}{}
	e.mu.Unlock()
}

func (e *buildEvents) unsubscribe(sub *progressSub) {
	e.mu.Lock()
	delete(e.subs, sub)
	e.mu.Unlock()
}

// end sends the last notification to the subscribers of run r, from the
// build goroutine before r's waiters wake: it is queued before their result.
func (e *buildEvents) end(r *run) {
	e.mu.Lock()
	e.seq, e.last = 0, nil
	subs := make([]*progressSub, 0, len(e.subs))
	for sub := range e.subs {
		subs = append(subs, sub)
	}
	e.mu.Unlock()
	for _, sub := range subs {
		sub.mu.Lock()
		mine := sub.target == r.seq
		sub.mu.Unlock()
		if mine {
			sub.finish(r)
		}
	}
}

// current is the run in progress and its last progress (nil: none yet).
func (e *buildEvents) current() (int, *index.Progress) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.seq, e.last
}

// progressSub sends one caller's progress notifications: the embedded
// chunks of the run it waits for, at most one per ProgressInterval, and a
// last one when the run ends. Progress counts in steps of total = chunks to
// embed + 1, the last step being the build's end, so the notifications
// increase strictly, as the protocol requires, up to progress == total.
type progressSub struct {
	send func(progress, total float64, message string)
	now  func() time.Time

	mu       sync.Mutex
	target   int     // the run waited for, 0 until known
	sent     float64 // the progress and total of the last notification
	total    float64
	any      bool
	lastAt   time.Time
	lastSeen *index.Progress // the latest update not sent (throttled)
	finished bool
}

// setTarget names the run and sends what it has already reported.
func (p *progressSub) setTarget(seq int, e *buildEvents) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.target = seq
	if cur, last := e.current(); cur == seq && last != nil {
		p.sendLocked(*last)
	}
}

func (p *progressSub) update(seq int, pr index.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.target == 0 || seq != p.target {
		return
	}
	p.sendLocked(pr)
}

func (p *progressSub) sendLocked(pr index.Progress) {
	now := p.now()
	// The end of embedding is never held back: the build's last steps may
	// take a while.
	if p.any && now.Sub(p.lastAt) < ProgressInterval && pr.Done < pr.Total {
		p.lastSeen = &pr
		return
	}
	progress, total := float64(pr.Done), float64(pr.Total+1)
	if progress <= p.sent && p.any {
		return // nothing new: the protocol wants each one higher
	}
	msg := fmt.Sprintf("embedded %d of %d chunks", pr.Done, pr.Total)
	if pr.Reused > 0 {
		msg += fmt.Sprintf(" (%d reused from before)", pr.Reused)
	}
	p.send(progress, total, msg)
	p.sent, p.total, p.any, p.lastAt, p.lastSeen = progress, total, true, now, nil
}

// finish sends the last notification, progress == total, once.
func (p *progressSub) finish(r *run) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.finished {
		return
	}
	p.finished = true
	total := 1.0
	switch {
	case p.lastSeen != nil:
		total = float64(p.lastSeen.Total + 1)
	case p.any:
		total = p.total
	}
	msg := fmt.Sprintf("reindex done: %d notes, %d added, %d changed, %d removed, %d chunks embedded", r.rep.Notes, r.rep.Added, r.rep.Changed, r.rep.Removed, r.rep.Embedded)
	if r.err != nil {
		msg = "reindex failed: " + r.err.Error()
	}
	p.send(total, total, msg)
}

// progressTokenKey holds a tool call's progressToken in its context.
type progressTokenKey struct{}

func withProgressToken(ctx context.Context, meta *mcp.Meta) context.Context {
	if meta == nil || meta.ProgressToken == nil {
		return ctx
	}
	return context.WithValue(ctx, progressTokenKey{}, meta.ProgressToken)
}

// reindexWithProgress is reindex.Run for a caller that gave a progressToken:
// it is sent the embedding progress of the run it waits for, and a last
// notification when that run ends.
func (s *Server) reindexWithProgress(ctx context.Context) (*run, error) {
	token := ctx.Value(progressTokenKey{})
	if token == nil {
		target, err := s.reindex.join()
		if err != nil {
			return nil, err
		}
		s.logCaller(ctx, mcp.LoggingLevelInfo, fmt.Sprintf("waiting for reindex run %d", target.seq))
		r, err := s.reindex.wait(ctx, target)
		if r != nil {
			level, msg := runLog(r)
			s.logCaller(ctx, level, msg)
		}
		return r, err
	}
	sub := &progressSub{now: time.Now, send: func(progress, total float64, message string) {
		err := s.mcp.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), map[string]any{
			"progressToken": token, "progress": progress, "total": total, "message": message,
		})
		if err != nil {
			s.log.Debug("progress notification not sent", "err", err)
		}
	}}
	s.events.subscribe(sub)
	defer s.events.unsubscribe(sub)
	target, err := s.reindex.join()
	if err != nil {
		return nil, err
	}
	sub.setTarget(target.seq, &s.events)
	s.logCaller(ctx, mcp.LoggingLevelInfo, fmt.Sprintf("waiting for reindex run %d", target.seq))
	r, err := s.reindex.wait(ctx, target)
	if r != nil {
		level, msg := runLog(r)
		s.logCaller(ctx, level, msg)
		sub.finish(r) // when the run ended before its target was set
		drainNotifications(ctx)
	}
	return r, err
}

// drainNotifications waits, up to 100ms, until the notifications queued
// for the caller's session have been taken for writing. Over stdio they are
// written by another goroutine than the call's result, and a client drops
// progress that comes after the result.
func drainNotifications(ctx context.Context) {
	cs := mcpserver.ClientSessionFromContext(ctx)
	if cs == nil {
		return
	}
	ch := cs.NotificationChannel()
	for i := 0; i < 100 && len(ch) > 0; i++ {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(time.Millisecond) // the last one taken is being written
}

// onBuildStart and onBuildEnd run around every build: the watcher's, the
// first one and vault_reindex's.
func (s *Server) onBuildStart(seq int) {
	_, statErr := os.Stat(s.opts.DBPath)
	s.events.begin(seq, statErr != nil)
	s.logClients(mcp.LoggingLevelInfo, fmt.Sprintf("reindex run %d started", seq))
}

func (s *Server) onBuildEnd(r *run) {
	s.events.end(r)
	if r.err == nil || s.ctx.Err() == nil {
		s.logClients(runLog(r))
	}
	// A failed build may have committed part of its work (a staged first
	// build's keyword index): its counts say what it added.
	if r.rep.Added > 0 || r.rep.Removed > 0 {
		s.notifyListChanged()
	}
}

// buildProgress is the builds' BuildOptions.Progress.
func (s *Server) buildProgress(p index.Progress) {
	if s.events.progress(p) {
		s.notifyListChanged()
	}
}

// runLog is the log message of a run's end.
func runLog(r *run) (mcp.LoggingLevel, string) {
	if r.err != nil {
		return mcp.LoggingLevelError, fmt.Sprintf("reindex run %d failed: %v", r.seq, r.err)
	}
	return mcp.LoggingLevelInfo, fmt.Sprintf("reindex run %d done in %s: %d notes, %d added, %d changed, %d removed",
		r.seq, r.rep.Duration.Round(time.Millisecond), r.rep.Notes, r.rep.Added, r.rep.Changed, r.rep.Removed)
}

// logCaller sends a log message to the client of a request that declared
// its log level in the request itself (protocol 2026-07-28 and later); a
// client of the handshake has them from logClients already.
func (s *Server) logCaller(ctx context.Context, level mcp.LoggingLevel, message string) {
	if info := mcpserver.RequestProtocolInfoFromContext(ctx); info == nil || !info.Modern {
		return
	}
	_ = s.mcp.SendLogMessageToClient(ctx, mcp.NewLoggingMessageNotification(level, LoggerName, message)) // best effort, like every log
}

func (s *Server) notifyListChanged() {
	s.mcp.SendNotificationToAllClients(string(mcp.MethodNotificationResourcesListChanged), nil)
}

// logClients sends a log message to every client of the initialize
// handshake whose level (logging/setLevel; mcp-go's default is error) lets
// it through.
func (s *Server) logClients(level mcp.LoggingLevel, message string) {
	n := mcp.NewLoggingMessageNotification(level, LoggerName, message)
	s.sessions.Range(func(id, _ any) bool {
		_ = s.mcp.SendLogMessageToSpecificClient(id.(string), n) // a client not initialized yet misses it
		return true
	})
}

// waitProgress tells a caller that gave a progressToken, at most once a
// second, that its call is waiting for the first index: progress is the
// seconds waited of FirstIndexWait, the message what the build is doing.
func (s *Server) waitProgress(ctx context.Context, start time.Time) {
	token := ctx.Value(progressTokenKey{})
	waited := time.Since(start)
	if token == nil || waited < time.Second || waited%time.Second >= firstIndexPoll {
		return
	}
	msg := "waiting for the first index of the vault"
	if _, last := s.events.current(); last != nil {
		msg += fmt.Sprintf(" (the build is %s: %d of %d)", last.Phase, last.Done, last.Total)
	}
	err := s.mcp.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), map[string]any{
		"progressToken": token, "progress": waited.Truncate(time.Second).Seconds(), "total": s.opts.FirstIndexWait.Seconds(), "message": msg,
	})
	if err != nil {
		s.log.Debug("progress notification not sent", "err", err)
	}
}
