package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vault-rag/vault-rag/internal/measure"
	"github.com/vault-rag/vault-rag/internal/table"
)

// Report is the outcome of one load run; it is also the JSON written by -json.
type Report struct {
	Started    string `json:"started"`
	Host       Host   `json:"host"`
	Calls      int    `json:"calls"` // planned, the reindex included
	Clients    int    `json:"clients"`
	Protocol   string `json:"protocol"`
	Sessions   int    `json:"sessions"` // distinct MCP session ids among the clients
	Seed       uint64 `json:"seed"`
	SetupCalls int    `json:"setup_calls"` // the catalog's list and reads, not part of the load

	Index    IndexInfo `json:"index"`
	Degraded []string  `json:"degraded"` // what /health says the server cannot do

	Tools        []ToolStats `json:"tools"`
	Overall      ToolStats   `json:"overall"`
	WallSeconds  float64     `json:"wall_seconds"`
	CallsPerSec  float64     `json:"calls_per_second"`
	Errors       int         `json:"errors"`
	NotRun       int         `json:"not_run"` // planned calls the deadline left out
	ErrorSamples []string    `json:"error_samples,omitempty"`

	Reindex      ReindexInfo `json:"reindex"`
	Memory       Memory      `json:"memory"`
	ServerBuilds int         `json:"server_builds"` // builds the server ran in all (startup, mid-run, watcher)
	Checks       Checks      `json:"checks"`
	Exit         Exit        `json:"exit"`
	ProbeExit    *Exit       `json:"probe_exit,omitempty"`
}

// Host is the machine the run was on.
type Host struct {
	CPUs         int    `json:"cpus"`
	OS           string `json:"os"`
	Go           string `json:"go"`
	LoadAvgStart string `json:"load_avg_start"`
	LoadAvgEnd   string `json:"load_avg_end"`
}

// IndexInfo is how the server's index came to be.
type IndexInfo struct {
	Seed         string        `json:"seed"` // the embedding cache copied in, or why none was
	Seeded       bool          `json:"seeded"`
	SeedCurrent  bool          `json:"seed_current"` // the startup build embedded nothing
	StartupBuild *BuildSummary `json:"startup_build"`
	ReadySeconds float64       `json:"ready_seconds"` // start to ready (startup build done)
	Notes        int           `json:"notes"`
	Chunks       int           `json:"chunks"`
}

// ToolStats are the latencies of one tool's calls (or of all), in ms.
type ToolStats struct {
	Tool   string  `json:"tool"`
	Calls  int     `json:"calls"`
	Errors int     `json:"errors"`
	P50MS  float64 `json:"p50_ms"`
	P95MS  float64 `json:"p95_ms"`
	P99MS  float64 `json:"p99_ms"`
	MaxMS  float64 `json:"max_ms"`
	MeanMS float64 `json:"mean_ms"`
}

// ReindexInfo is the mid-run reindex and what ran around it.
type ReindexInfo struct {
	AtCall                 int           `json:"at_call"`
	Note                   string        `json:"note"`
	Marker                 string        `json:"marker"`
	CallMS                 float64       `json:"call_ms"`
	Build                  *BuildSummary `json:"build"`
	CallsBefore            int           `json:"calls_before"`             // ended before it started
	CallsOverlapping       int           `json:"calls_overlapping"`        // in flight at some point during it
	CallsAnsweredDuring    int           `json:"calls_answered_during"`    // answered, without error, while it ran
	SearchesAnsweredDuring int           `json:"searches_answered_during"` // of which searches
	CallsAfter             int           `json:"calls_after"`              // started after it ended
}

// Memory is the server's resident memory (VmRSS) at points of the run, in KiB.
type Memory struct {
	IdleNoWatchKB             int64  `json:"idle_no_watch_kb"` // a --watch=false server, idle
	IdleNoWatchEmbedderLoaded *bool  `json:"idle_no_watch_embedder_loaded"`
	IdleKB                    int64  `json:"idle_kb"` // the default server, idle after its startup build
	IdleEmbedderLoaded        bool   `json:"idle_embedder_loaded"`
	AfterFirstSearchKB        int64  `json:"after_first_search_kb"`
	LoadMaxKB                 int64  `json:"load_max_kb"` // the largest 100 ms sample under load
	LoadMeanKB                int64  `json:"load_mean_kb"`
	LoadSamples               int    `json:"load_samples"`
	PeakHWMKB                 int64  `json:"peak_hwm_kb"` // VmHWM after the load: the process's peak
	AfterLoadKB               int64  `json:"after_load_kb"`
	Problem                   string `json:"problem,omitempty"`
}

// Checks are the run's assertions besides the calls themselves.
type Checks struct {
	MarkerAbsentBefore    bool     `json:"marker_absent_before"`     // a keyword search for the marker found nothing before the load
	MarkerTopAfter        bool     `json:"marker_top_after"`         // ... and the modified note first after it
	MarkerFoundByShipping bool     `json:"marker_found_by_shipping"` // the served configuration finds it too
	NoteAsWritten         bool     `json:"note_as_written"`          // the note is its original bytes plus the marker line
	VaultDiffs            []string `json:"vault_diffs"`              // changes to the copy besides that note
	SourceVaultDiffs      []string `json:"source_vault_diffs"`       // changes to ./vault
	Problems              []string `json:"problems,omitempty"`
}

func newReport(o Options) *Report {
	return &Report{Started: time.Now().UTC().Format(time.RFC3339), Host: host(), Calls: o.Calls, Clients: o.Clients,
		Protocol: o.Protocol, Seed: o.Seed, Degraded: []string{}}
}

// stats summarises one set of calls.
func stats(tool string, ds []time.Duration, errors int) ToolStats {
	slices.Sort(ds)
	s := ToolStats{Tool: tool, Calls: len(ds), Errors: errors}
	if len(ds) == 0 {
		return s
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	s.P50MS, s.P95MS, s.P99MS = measure.Millis(measure.Percentile(ds, 50)), measure.Millis(measure.Percentile(ds, 95)), measure.Millis(measure.Percentile(ds, 99))
	s.MaxMS, s.MeanMS = measure.Millis(ds[len(ds)-1]), measure.Millis(sum/time.Duration(len(ds)))
	return s
}

// summarize fills the latency, error and reindex figures from the calls.
func (r *Report) summarize(results []callResult, wall time.Duration, reindexAt int) {
	byTool := map[string][]time.Duration{}
	errs := map[string]int{}
	var all []time.Duration
	for _, c := range results {
		if !c.ran {
			r.NotRun++
			continue
		}
		d := c.end - c.start
		byTool[c.tool] = append(byTool[c.tool], d)
		all = append(all, d)
		if c.err != "" {
			errs[c.tool]++
			r.Errors++
			if len(r.ErrorSamples) < 20 {
				r.ErrorSamples = append(r.ErrorSamples, c.err)
			}
		}
	}
	for _, t := range toolOrder {
		if ds, ok := byTool[t]; ok {
			r.Tools = append(r.Tools, stats(t, ds, errs[t]))
		}
	}
	r.Overall = stats("all", all, r.Errors)
	r.WallSeconds = wall.Seconds()
	if wall > 0 {
		r.CallsPerSec = float64(len(all)) / wall.Seconds()
	}

	r.Reindex.AtCall = reindexAt
	ri := results[reindexAt]
	if !ri.ran {
		return
	}
	r.Reindex.CallMS = measure.Millis(ri.end - ri.start)
	for i, c := range results {
		if !c.ran || i == reindexAt {
			continue
		}
		switch {
		case c.end <= ri.start:
			r.Reindex.CallsBefore++
		case c.start >= ri.end:
			r.Reindex.CallsAfter++
		default:
			r.Reindex.CallsOverlapping++
		}
		if c.err == "" && c.end > ri.start && c.end < ri.end { // answered while the build ran
			r.Reindex.CallsAnsweredDuring++
			if c.tool == toolSearch {
				r.Reindex.SearchesAnsweredDuring++
			}
		}
	}
}

// Failures lists what went wrong: failed or missing calls and checks that
// did not hold. An empty list is a pass.
func (r *Report) Failures() []string {
	var out []string
	if r.Errors > 0 {
		out = append(out, fmt.Sprintf("%d of %d calls failed; first: %s", r.Errors, r.Overall.Calls, strings.Join(r.ErrorSamples[:min(3, len(r.ErrorSamples))], " | ")))
	}
	if r.NotRun > 0 {
		out = append(out, fmt.Sprintf("%d planned calls did not run before the deadline", r.NotRun))
	}
	if r.Reindex.Build == nil {
		out = append(out, "the mid-run vault_reindex did not complete")
	}
	if r.Protocol < mcp.ProtocolVersion20260728 && r.Sessions != r.Clients {
		out = append(out, fmt.Sprintf("%d clients shared %d sessions; want one each", r.Clients, r.Sessions))
	}
	c := r.Checks
	if !c.MarkerAbsentBefore {
		out = append(out, "the marker was found before it was written")
	}
	if !c.MarkerTopAfter {
		out = append(out, "after the reindex a keyword search for the marker does not rank the modified note first")
	}
	if !c.MarkerFoundByShipping {
		out = append(out, "after the reindex the served configuration does not find the marker's note")
	}
	if !c.NoteAsWritten {
		out = append(out, "the modified note is not its original bytes plus the marker line")
	}
	if len(c.VaultDiffs) > 0 {
		out = append(out, "the vault copy changed besides the one note: "+strings.Join(c.VaultDiffs, "; "))
	}
	if len(c.SourceVaultDiffs) > 0 {
		out = append(out, "./vault changed: "+strings.Join(c.SourceVaultDiffs, "; "))
	}
	out = append(out, c.Problems...)
	if !r.Exit.Clean {
		out = append(out, "the server did not exit cleanly after SIGTERM: "+r.Exit.Problem)
	}
	if r.ProbeExit != nil && !r.ProbeExit.Clean {
		out = append(out, "the idle probe server did not exit cleanly after SIGTERM: "+r.ProbeExit.Problem)
	}
	return out
}

// mib formats KiB as MiB ("-" for none).
func mib(kb int64) string {
	if kb <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f MiB", float64(kb)/1024)
}

func yes(ok bool) string {
	if ok {
		return "ok"
	}
	return "FAILED"
}

// WriteTable prints the report for people.
func (r *Report) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "vault-rag load test: %d calls from %d MCP clients over streamable HTTP (protocol %s, %d sessions), seed %d\n",
		r.Calls, r.Clients, r.Protocol, r.Sessions, r.Seed)
	fmt.Fprintf(w, "host: %d CPUs, %s, %s; load average %s at start, %s at end (a shared machine: times are indicative)\n",
		r.Host.CPUs, r.Host.OS, r.Host.Go, r.Host.LoadAvgStart, r.Host.LoadAvgEnd)
	seed := "no seed, every chunk embedded by the server"
	if r.Index.Seeded {
		seed = "embedding cache seeded from " + r.Index.Seed
		if r.Index.SeedCurrent {
			seed += " (current: the startup build embedded nothing)"
		} else {
			seed += " (stale: the startup build embedded what changed)"
		}
	}
	fmt.Fprintf(w, "index: %d notes, %d chunks, %s; server ready in %.1f s\n", r.Index.Notes, r.Index.Chunks, seed, r.Index.ReadySeconds)
	if len(r.Degraded) > 0 {
		fmt.Fprintf(w, "degraded (what the served configuration cannot run): %s\n", strings.Join(r.Degraded, "; "))
	}
	fmt.Fprintln(w)

	ms := func(v float64) string { return fmt.Sprintf("%.1f", v) }
	var rows [][]string
	for _, s := range append(slices.Clone(r.Tools), r.Overall) {
		rows = append(rows, []string{s.Tool, fmt.Sprint(s.Calls), fmt.Sprint(s.Errors), ms(s.P50MS), ms(s.P95MS), ms(s.P99MS), ms(s.MaxMS), ms(s.MeanMS)})
	}
	head := []string{"tool", "calls", "errors", "p50 ms", "p95 ms", "p99 ms", "max ms", "mean ms"}
	if err := table.Columns(w, head, rows, []int{14, 6, 6, 9, 9, 9, 9, 9}); err != nil {
		fmt.Fprintf(w, "(the table of calls: %v)\n", err)
	}
	fmt.Fprintf(w, "\nwall %.1f s, %.1f calls/s; %d calls did not run; %d setup calls (catalog) not counted\n", r.WallSeconds, r.CallsPerSec, r.NotRun, r.SetupCalls)

	ri := r.Reindex
	if b := ri.Build; b != nil {
		fmt.Fprintf(w, "reindex at call %d (after appending a line to %s): call %.0f ms; build run %d, %s, changed %d, embedded %d chunks, took_ms %d\n",
			ri.AtCall, ri.Note, ri.CallMS, b.Run, b.Mode, b.Changed, b.Embedded, b.TookMS)
		fmt.Fprintf(w, "  around it: %d calls ended before it, %d overlapped it (%d answered while it ran, %d of them searches), %d started after; %d builds in all\n",
			ri.CallsBefore, ri.CallsOverlapping, ri.CallsAnsweredDuring, ri.SearchesAnsweredDuring, ri.CallsAfter, r.ServerBuilds)
	} else {
		fmt.Fprintf(w, "reindex at call %d: did not complete\n", ri.AtCall)
	}

	m := r.Memory
	fmt.Fprintln(w, "\nresident memory of serve (VmRSS):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if m.IdleNoWatchEmbedderLoaded != nil {
		fmt.Fprintf(tw, "  idle, --watch=false (embedder loaded: %v)\t%s\n", *m.IdleNoWatchEmbedderLoaded, mib(m.IdleNoWatchKB))
	}
	fmt.Fprintf(tw, "  idle, default --watch, after the startup build (embedder loaded: %v)\t%s\n", m.IdleEmbedderLoaded, mib(m.IdleKB))
	fmt.Fprintf(tw, "  after the first search\t%s\n", mib(m.AfterFirstSearchKB))
	fmt.Fprintf(tw, "  under load, largest of %d samples (100 ms)\t%s\n", m.LoadSamples, mib(m.LoadMaxKB))
	fmt.Fprintf(tw, "  under load, mean\t%s\n", mib(m.LoadMeanKB))
	fmt.Fprintf(tw, "  peak over the process's life (VmHWM)\t%s\n", mib(m.PeakHWMKB))
	fmt.Fprintf(tw, "  after the load\t%s\n", mib(m.AfterLoadKB))
	tw.Flush()
	if m.Problem != "" {
		fmt.Fprintf(w, "  (%s)\n", m.Problem)
	}

	c := r.Checks
	fmt.Fprintln(w, "\nchecks:")
	fmt.Fprintf(w, "  calls without error: %s (%d errors)\n", yes(r.Errors == 0 && r.NotRun == 0), r.Errors)
	fmt.Fprintf(w, "  marker absent before, top keyword hit after the reindex, found by shipping: %s, %s, %s\n",
		yes(c.MarkerAbsentBefore), yes(c.MarkerTopAfter), yes(c.MarkerFoundByShipping))
	fmt.Fprintf(w, "  vault copy unchanged but the one note (as written): %s; ./vault untouched: %s\n",
		yes(len(c.VaultDiffs) == 0 && c.NoteAsWritten), yes(len(c.SourceVaultDiffs) == 0))
	fmt.Fprintf(w, "  server exit after SIGTERM: code %d in %.2f s: %s\n", r.Exit.Code, r.Exit.Seconds, yes(r.Exit.Clean))
	if r.ProbeExit != nil {
		fmt.Fprintf(w, "  idle probe exit after SIGTERM: code %d in %.2f s: %s\n", r.ProbeExit.Code, r.ProbeExit.Seconds, yes(r.ProbeExit.Clean))
	}
	for _, s := range r.ErrorSamples {
		fmt.Fprintf(w, "  error: %s\n", s)
	}
}
