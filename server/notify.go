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
// subscribes, and is sent the progress of the run it waits for and of the
// run in progress before it (a first build, a watcher's build), including,
// while that run waits for another process's build of the index, the
// other build's coverage.
type buildEvents struct {
	mu    sync.Mutex
	seq   int             // the run in progress, 0 when none
	last  *index.Progress // its last embedding progress
	other *otherBuild     // another process's build it waits for, nil when none
	subs  map[*progressSub]struct{}
	// noIndex is whether the run in progress started without an index
	// file: its notes become listable when its keyword index is in place.
	noIndex   bool
	announced bool
}

// otherBuild is another process's build of the index, as seen from here: who
// holds the build lock, and how far it has got: done of total in its
// phase, "reading" (notes) or "embedding" (chunks).
type otherBuild struct {
	holder      index.BuildHolder
	phase       string
	done, total int
}

// otherBuildOf is how far holder's build has got: the progress it records
// in the lock file, else (a build that has not reported yet) cov, the
// vector coverage of the index it fills.
func otherBuildOf(holder index.BuildHolder, cov index.Coverage) otherBuild {
	if p := holder.Progress; p != nil {
		return otherBuild{holder: holder, phase: p.Phase, done: p.Done, total: p.Total}
	}
	return otherBuild{holder: holder, phase: "embedding", done: cov.Embedded, total: cov.Chunks}
}

func (e *buildEvents) begin(seq int, noIndex bool) {
	e.mu.Lock()
	e.seq, e.last, e.other, e.noIndex, e.announced = seq, nil, nil, noIndex, false
	e.mu.Unlock()
}

func (e *buildEvents) subsLocked() []*progressSub {
	subs := make([]*progressSub, 0, len(e.subs))
	for sub := range e.subs {
		subs = append(subs, sub)
	}
	return subs
}

// progress records p and passes it to the subscribers of the run; it
// reports whether this is the moment a first build's notes became listable.
func (e *buildEvents) progress(p index.Progress) (listable bool) {
	if p.Phase != "embedding" {
		return false // reading counts notes, not the chunks the progress is in
	}
	e.mu.Lock()
	seq := e.seq
	e.last, e.other = &p, nil
	subs := e.subsLocked()
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

// otherProgress records how far another process's build, which the run in
// progress waits for, has got, and passes it to the subscribers.
func (e *buildEvents) otherProgress(o *otherBuild) {
	e.mu.Lock()
	seq := e.seq
	if seq == 0 || e.last != nil {
		e.mu.Unlock()
		return // no run, or it has the lock and reports its own progress
	}
	e.other = o
	subs := e.subsLocked()
	e.mu.Unlock()
	for _, sub := range subs {
		sub.updateOther(seq, *o)
	}
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
// Subscribers waiting for a later run are told r ended.
func (e *buildEvents) end(r *run) {
	e.mu.Lock()
	e.seq, e.last, e.other = 0, nil, nil
	subs := e.subsLocked()
	e.mu.Unlock()
	for _, sub := range subs {
		sub.mu.Lock()
		target := sub.target
		sub.mu.Unlock()
		switch {
		case target == r.seq:
			sub.finish(r)
		case target > r.seq:
			sub.passed(r)
		}
	}
}

// current is the run in progress and its last progress (nil: none yet).
func (e *buildEvents) current() (int, *index.Progress) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.seq, e.last
}

func (e *buildEvents) currentOther() *otherBuild {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.other
}

// progressSub sends one caller's progress notifications, at most one per
// ProgressInterval, and a last one when its run ends. What it reports goes
// through phases: the run in progress before the caller's own (when the call
// came during one), another process's build that a run waits for, and the
// caller's own run. Within a phase, progress counts chunks from the phase's
// offset (the progress reached before it) and total is that offset plus the
// chunks of the phase plus a step for the end of each run still to end (one
// for the caller's run, two during a run before it), so the notifications
// increase strictly, as the protocol requires, up to progress == total, the
// caller's run's end.
type progressSub struct {
	send func(progress, total float64, message string)
	now  func() time.Time

	mu     sync.Mutex
	target int // the run waited for, 0 until known
	// phase is what is being reported: a run, and whether it is another
	// process's build that run waits for; offset is the progress before it
	// and phaseTotal its chunks.
	phase      phaseKey
	phased     bool
	offset     float64
	phaseTotal int
	sent       float64 // the progress and total of the last notification
	total      float64
	any        bool
	lastAt     time.Time
	heldTotal  float64 // the total of the latest update not sent (throttled), 0 when none
	finished   bool
}

type phaseKey struct {
	seq   int
	other bool
	// otherPhase is the other process's phase ("reading", "embedding"):
	// each counts from where the one before ended.
	otherPhase string
}

// setTarget names the run and sends what the run in progress has already
// reported, when the caller waits for it or for the run after it.
func (p *progressSub) setTarget(seq int, e *buildEvents) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.target = seq
	cur, last := e.current()
	if cur == 0 || cur > seq {
		return
	}
	if o := e.currentOther(); o != nil && last == nil {
		p.sendOtherLocked(cur, *o)
	} else if last != nil {
		p.sendLocked(cur, *last)
	}
}

// follows reports whether the caller reports run seq: its own, or the one
// before it.
func (p *progressSub) follows(seq int) bool {
	return p.target != 0 && seq != 0 && seq <= p.target
}

func (p *progressSub) update(seq int, pr index.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.follows(seq) {
		p.sendLocked(seq, pr)
	}
}

func (p *progressSub) updateOther(seq int, o otherBuild) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.follows(seq) {
		p.sendOtherLocked(seq, o)
	}
}

// enterLocked makes key the phase reported, starting it from the progress
// reached so far.
func (p *progressSub) enterLocked(key phaseKey) {
	if p.phased && p.phase == key {
		return
	}
	if p.phased {
		p.offset = p.sent
	}
	p.phase, p.phased, p.heldTotal = key, true, 0
}

// steps is the ends of runs still to come while run seq is reported.
func (p *progressSub) steps(seq int) float64 {
	if seq < p.target {
		return 2
	}
	return 1
}

func (p *progressSub) sendLocked(seq int, pr index.Progress) {
	p.enterLocked(phaseKey{seq: seq})
	p.phaseTotal = pr.Total
	var msg string
	if seq == p.target {
		msg = fmt.Sprintf("embedded %d of %d chunks", pr.Done, pr.Total)
	} else {
		msg = fmt.Sprintf("reindex run %d, already running, embedded %d of %d chunks; this call's run %d follows it", seq, pr.Done, pr.Total, p.target)
	}
	if pr.Reused > 0 {
		msg += fmt.Sprintf(" (%d reused from before)", pr.Reused)
	}
	p.emitLocked(pr.Done, pr.Total, p.steps(seq), msg)
}

func (p *progressSub) sendOtherLocked(seq int, o otherBuild) {
	p.enterLocked(phaseKey{seq: seq, other: true, otherPhase: o.phase})
	p.phaseTotal = o.total
	did := fmt.Sprintf("%d of %d chunks embedded", o.done, o.total)
	if o.phase == "reading" {
		did = fmt.Sprintf("%d of %d notes read", o.done, o.total)
	}
	msg := fmt.Sprintf("another process (pid %d) is building the index: %s; this call waits for it, then reindexes", o.holder.PID, did)
	p.emitLocked(o.done, o.total, p.steps(seq), msg)
}

// emitLocked sends done of n in the current phase, unless it is too soon
// after the last one or no higher.
func (p *progressSub) emitLocked(done, n int, steps float64, msg string) {
	now := p.now()
	progress, total := p.offset+float64(done), p.offset+float64(n)+steps
	// The end of embedding is never held back: the build's last steps may
	// take a while.
	if p.any && now.Sub(p.lastAt) < ProgressInterval && done < n {
		p.heldTotal = total
		return
	}
	if progress <= p.sent && p.any {
		return // nothing new: the protocol wants each one higher
	}
	p.send(progress, total, msg)
	p.sent, p.total, p.any, p.lastAt, p.heldTotal = progress, total, true, now, 0
}

// passed tells a caller waiting for a later run that run r, whose progress
// it was sent, ended: its own run starts next.
func (p *progressSub) passed(r *run) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.any || p.finished || !p.phased || p.phase.seq != r.seq {
		return
	}
	progress := p.sent + 1
	if !p.phase.other {
		progress = max(progress, p.offset+float64(p.phaseTotal)+1)
	}
	total := max(p.total, progress+1)
	msg := fmt.Sprintf("reindex run %d, which was running, ended; this call's run %d starts", r.seq, p.target)
	if r.err != nil {
		msg = fmt.Sprintf("reindex run %d, which was running, failed (%v); this call's run %d starts", r.seq, r.err, p.target)
	}
	p.send(progress, total, msg)
	p.sent, p.total, p.lastAt, p.heldTotal = progress, total, p.now(), 0
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
	if p.any {
		total = max(p.total, p.heldTotal, p.sent+1)
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

// OtherBuildPoll is how often a build waiting for another process's build
// of the index looks at how far that build has got, for the progress of
// the callers waiting.
var OtherBuildPoll = time.Second

// watchOtherBuild, run beside a build until stop is closed, sends the
// callers waiting for it how far another process's build has got while that
// process holds the build lock: that process's build is what they wait for first.
// It ends once this process holds the lock.
func (s *Server) watchOtherBuild(ctx context.Context, stop <-chan struct{}) {
	t := time.NewTicker(OtherBuildPoll)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		holder, running, err := index.RunningBuild(s.opts.DBPath)
		switch {
		case err != nil || !running || holder.PID == 0:
			continue // free (the build is taking it) or not said yet
		case holder.PID == os.Getpid():
			return // this build holds it and reports its own progress
		}
		var cov index.Coverage
		if holder.Progress == nil {
			h, release, err := s.acquire(ctx)
			if err != nil {
				continue // no index to read yet
			}
			cov, err = h.db.Coverage(ctx)
			release()
			if err != nil {
				continue
			}
		}
		o := otherBuildOf(holder, cov)
		s.events.otherProgress(&o)
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
