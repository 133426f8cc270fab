package server

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/vault-rag/vault-rag/index"
)

// reindexer runs incremental builds one at a time and coalesces the calls
// for them. A caller waits for the next run that starts after its call, so
// whatever it changed before calling is included; callers arriving while a run
// is in progress share the one queued behind it. Runs use the server's
// context, not a caller's: a client that gives up waiting does not cancel a
// build other callers share.
type reindexer struct {
	build func(context.Context) (index.Report, error)
	ctx   context.Context
	// joined, when set (tests), receives one value each time a caller has
	// joined a run, after it is queued and before it waits.
	joined chan<- struct{}
	// onStart and onEnd, when set, are called from the build goroutine
	// around each run (outside mu): the server's logs to clients, progress
	// and resource-list notifications hang on them.
	onStart func(seq int)
	onEnd   func(*run)

	mu      sync.Mutex
	running *run // the run in progress, nil when idle
	next    *run // the run queued behind it, nil when none
	last    *run // the last run to finish
	seq     int
	builds  int
	closing bool
	wg      sync.WaitGroup
}

// run is one build and its outcome, shared by every caller that waited for it.
type run struct {
	seq      int
	done     chan struct{}
	started  time.Time
	finished time.Time
	rep      index.Report
	err      error
}

func (r *reindexer) newRun() *run {
	r.seq++
	return &run{seq: r.seq, done: make(chan struct{})}
}

// Run waits for a build that starts after the call and returns it. ctx bounds
// only the wait: the build goes on without a caller that leaves.
func (r *reindexer) Run(ctx context.Context) (*run, error) {
	target, err := r.join()
	if err != nil {
		return nil, err
	}
	return r.wait(ctx, target)
}

// join queues the caller for a build that starts after the call and returns
// that run without waiting for it.
func (r *reindexer) join() (*run, error) {
	r.mu.Lock()
	if r.closing {
		r.mu.Unlock()
		return nil, fmt.Errorf("reindex: %w", errShuttingDown)
	}
	var target *run
	if r.running == nil {
		target = r.newRun()
		r.running = target
		r.wg.Add(1)
		go r.loop(target)
	} else {
		if r.next == nil {
			r.next = r.newRun()
		}
		target = r.next
	}
	joined := r.joined
	r.mu.Unlock()
	if joined != nil {
		joined <- struct{}{}
	}
	return target, nil
}

// wait waits for a run from join to end; ctx bounds only the wait.
func (r *reindexer) wait(ctx context.Context, target *run) (*run, error) {
	select {
	case <-target.done:
		if target.err != nil {
			return target, target.err
		}
		return target, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("reindex run %d is still going and continues in the background (see /health): %w", target.seq, ctx.Err())
	}
}

func (r *reindexer) loop(cur *run) {
	defer r.wg.Done()
	for cur != nil {
		r.mu.Lock()
		cur.started = time.Now()
		r.mu.Unlock()
		if r.onStart != nil {
			r.onStart(cur.seq)
		}
		rep, err := r.build(r.ctx)
		cur.rep, cur.err = rep, err
		if r.onEnd != nil {
			// Before done is closed: a caller that sees its run end has had
			// its last progress and the list_changed already sent.
			r.onEnd(cur)
		}
		r.mu.Lock()
		cur.finished = time.Now()
		r.builds++
		r.last = cur
		close(cur.done)
		cur, r.next = r.next, nil
		r.running = cur
		r.mu.Unlock()
	}
}

// close refuses new runs and waits until none is in progress or queued.
func (r *reindexer) close() {
	r.mu.Lock()
	r.closing = true
	r.mu.Unlock()
	r.wg.Wait()
}

// ReindexStatus is what /health says about reindexing.
type ReindexStatus struct {
	Running    bool         `json:"running"`
	RunningSeq int          `json:"running_run,omitempty"`
	RunningFor string       `json:"running_for,omitempty"`
	Queued     bool         `json:"queued"`
	Builds     int          `json:"builds"`
	LastRun    int          `json:"last_run,omitempty"`
	LastAt     string       `json:"last_finished_at,omitempty"`
	LastReport *ReportBrief `json:"last_report,omitempty"`
	LastError  string       `json:"last_error,omitempty"`
	// OtherProcess is the build of this index another process is running
	// (a second server, a CLI reindex): this server serves what exists,
	// waits for it, and picks up its result.
	OtherProcess *BuildHolder `json:"other_process_building,omitempty"`
	// Problem says why the index is not whole with no build running: the
	// last build failed, or one stopped (killed, crashed) before embedding
	// every chunk. The server retries it.
	Problem string `json:"problem,omitempty"`
}

// ReportBrief is a build's report without the file lists.
type ReportBrief struct {
	BuildCounts
	Skipped int   `json:"skipped"`
	TookMS  int64 `json:"took_ms"`
}

func brief(rep index.Report) *ReportBrief {
	return &ReportBrief{BuildCounts: buildCounts(rep.Counts), Skipped: len(rep.Skipped), TookMS: rep.Duration.Milliseconds()}
}

func (r *reindexer) status() ReindexStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := ReindexStatus{Running: r.running != nil, Queued: r.next != nil, Builds: r.builds}
	if r.running != nil {
		st.RunningSeq = r.running.seq
		if !r.running.started.IsZero() {
			st.RunningFor = time.Since(r.running.started).Round(time.Millisecond).String()
		}
	}
	if r.last != nil {
		st.LastRun = r.last.seq
		st.LastAt = r.last.finished.UTC().Format(time.RFC3339)
		if r.last.err != nil {
			st.LastError = r.last.err.Error()
		} else {
			st.LastReport = brief(r.last.rep)
		}
	}
	return st
}
