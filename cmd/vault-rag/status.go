package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/vault"
	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/server"
)

// statusReport is what `vault-rag status` says of a vault, its index and the
// server on the configured address.
type statusReport struct {
	Vault       string `json:"vault"`
	VaultExists bool   `json:"vault_exists"`
	Index       string `json:"index"`
	IndexExists bool   `json:"index_exists"`
	IndexBytes  int64  `json:"index_bytes,omitempty"`
	// IndexProblem says why the index cannot be used: missing, damaged, of
	// another schema, or built from another vault.
	IndexProblem string `json:"index_problem,omitempty"`
	Notes        int    `json:"notes"`
	Chunks       int    `json:"chunks"`
	Links        int    `json:"links"`
	Embedder     string `json:"embedder,omitempty"`
	EmbedderWhy  string `json:"embedder_why,omitempty"`
	// Language names the notes' main languages ("English", "Chinese and
	// English"), as the server tells its clients.
	Language    string           `json:"language,omitempty"`
	Script      string           `json:"script,omitempty"`
	ScriptShare float64          `json:"script_share,omitempty"`
	Vectors     *index.Coverage  `json:"vectors,omitempty"`
	BuiltAt     *time.Time       `json:"built_at,omitempty"` // the last full build
	LastBuild   *index.LastBuild `json:"last_build,omitempty"`
	// Building is the build of the index running now, in any process.
	Building *index.BuildHolder `json:"building,omitempty"`
	Warnings []string           `json:"warnings"`
	Server   serverStatus       `json:"server"`
}

// serverStatus is what the server at the configured address says, if one runs.
type serverStatus struct {
	URL     string         `json:"url"`
	Running bool           `json:"running"`
	Error   string         `json:"error,omitempty"`
	Health  *server.Health `json:"health,omitempty"`
}

func cmdStatus(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the status as JSON")
	vault := fs.String("vault", vaultPath(), "the vault folder (default: with only --db or DB_PATH named, the vault that index was built from, else ./vault) [VAULT_PATH]")
	db := fs.String("db", "", dbFlagUsage)
	addr := fs.String("addr", envOr("VAULT_RAG_ADDR", server.DefaultAddr), "where a running server's /health is asked [VAULT_RAG_ADDR]")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: vault-rag status [flags]\nSays what is indexed: the vault, its index file, notes and chunks, the embedder and why, how many\nchunks have their vector, the last build, what was skipped, and what a running server reports.\n\n")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args, operands{}); err != nil {
		return err
	}
	*vault, _ = indexVault(ctx, fs, *vault, *db)
	var err error
	if *db, err = indexPath(*db, *vault); err != nil {
		return err
	}
	st := readStatus(ctx, *vault, *db)
	if old := filepath.Join(modelSettings().DataDir, "vault.db"); !samePath(old, *db) {
		if _, err := os.Stat(old); err == nil {
			// Before each vault had its own index, every vault's was this one.
			st.Warnings = append(st.Warnings, fmt.Sprintf("%s is the single index of an earlier version, no longer read: each vault now has its own under %s; delete it (and %s) to free the space", old, filepath.Join(modelSettings().DataDir, index.IndexDir), index.CachePath(old)))
		}
	}
	st.Server = askServer(ctx, *addr)
	if st.Server.Health != nil && st.Server.Health.Vault != "" && !index.SameVault(st.Server.Health.Vault, st.Vault) {
		st.Warnings = append(st.Warnings, fmt.Sprintf("the server at %s serves another vault, %s", st.Server.URL, st.Server.Health.Vault))
	}
	if *asJSON {
		return printJSON(st)
	}
	printStatus(os.Stdout, st)
	return nil
}

// readStatus reads the vault's index; what it cannot read goes into
// IndexProblem, never an error: status is what a person runs when something
// is wrong.
func readStatus(ctx context.Context, vaultDir, db string) statusReport {
	st := statusReport{Vault: vaultDir, Index: db, Warnings: []string{}}
	if abs, err := filepath.Abs(vaultDir); err == nil {
		st.Vault = abs
	}
	if err := vault.FolderProblem(vaultDir); err == nil {
		st.VaultExists = true
	} else {
		st.Warnings = append(st.Warnings, err.Error()+"; set VAULT_PATH or pass --vault")
	}
	if abs, err := filepath.Abs(db); err == nil {
		st.Index = abs
	}
	fi, err := os.Stat(db)
	if err != nil {
		st.IndexProblem = "no index yet: run `vault-rag reindex`"
		return st
	}
	st.IndexExists, st.IndexBytes = true, fi.Size()
	d, err := index.Open(ctx, db)
	if err != nil {
		st.IndexProblem = err.Error()
		return st
	}
	defer d.Close()
	if err := d.CheckVault(vaultDir); err != nil {
		st.IndexProblem = vaultMismatchHint(err).Error()
	}
	if s, err := d.Stats(ctx); err != nil {
		st.IndexProblem = err.Error()
		return st
	} else {
		st.Notes, st.Chunks, st.Links = s.Notes, s.Chunks, s.Links
		if !s.BuiltAt.IsZero() {
			t := s.BuiltAt.UTC()
			st.BuiltAt = &t
		}
	}
	st.Embedder, st.EmbedderWhy = d.Embedder(), d.Meta("embedder_why")
	st.Script, st.ScriptShare = d.Script()
	st.Language = d.Languages().Describe()
	if h, running, err := index.RunningBuild(db); err == nil && running {
		st.Building = &h
	}
	if cov, err := d.Coverage(ctx); err == nil {
		st.Vectors = &cov
		if !cov.Complete() {
			st.Warnings = append(st.Warnings, fmt.Sprintf("%d of %d chunks have no vector yet: keyword search finds every note, vector search only the embedded ones", cov.Chunks-cov.Embedded, cov.Chunks))
			if st.Building == nil {
				st.Warnings = append(st.Warnings, "no build is running: the last one stopped before embedding every chunk (its process ended); `vault-rag reindex`, or a server started on this vault, finishes it")
			}
		}
	}
	if lb, ok, err := d.LastBuild(ctx); err == nil && ok {
		st.LastBuild = &lb
	}
	if m, err := models.LoadManifest(); err == nil {
		if spec, err := m.Lookup(st.Embedder); err == nil {
			if w := spec.ScriptWarning(st.Script, st.ScriptShare); w != "" {
				st.Warnings = append(st.Warnings, w)
			}
		}
	}
	return st
}

// askServer reads /health of a server at addr, if one answers within a second.
func askServer(ctx context.Context, addr string) serverStatus {
	ss := serverStatus{URL: "http://" + addr + "/health"}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ss.URL, nil)
	if err != nil {
		ss.Error = err.Error()
		return ss
	}
	if tok := os.Getenv("VAULT_RAG_TOKEN"); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(req)
	if err != nil {
		ss.Error = "no server answers there"
		return ss
	}
	defer resp.Body.Close()
	ss.Running = true
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		ss.Error = err.Error()
		return ss
	}
	var h server.Health
	if err := json.Unmarshal(body, &h); err != nil {
		ss.Error = fmt.Sprintf("%s answers %s, not vault-rag's health", addr, resp.Status)
		return ss
	}
	ss.Health = &h
	return ss
}

func printStatus(w io.Writer, st statusReport) {
	row := func(k, format string, a ...any) { fmt.Fprintf(w, "%-10s %s\n", k, termSafe(fmt.Sprintf(format, a...))) }
	row("vault", "%s", st.Vault)
	if !st.IndexExists {
		row("index", "%s (%s)", st.Index, st.IndexProblem)
	} else {
		row("index", "%s (%s)", st.Index, humanBytes(st.IndexBytes))
		if st.IndexProblem != "" {
			label := "problem" // a problem of several lines: each escaped, aligned
			for _, line := range strings.Split(st.IndexProblem, "\n") {
				row(label, "%s", line)
				label = ""
			}
		}
	}
	if st.IndexExists && st.Chunks > 0 {
		row("notes", "%d notes, %d chunks, %d links", st.Notes, st.Chunks, st.Links)
	}
	if st.Embedder != "" {
		why := st.EmbedderWhy
		if why == "" {
			why = "recorded by the index"
		}
		row("embedder", "%s (%s)", st.Embedder, why)
	}
	switch {
	case st.Language != "" && st.Script != "":
		row("language", "%s (%s script, %.0f%% of the letters)", st.Language, st.Script, 100*st.ScriptShare)
	case st.Script != "":
		row("language", "%s script, %.0f%% of the letters", st.Script, 100*st.ScriptShare)
	}
	if v := st.Vectors; v != nil {
		pct := 100
		if v.Chunks > 0 {
			pct = v.Embedded * 100 / v.Chunks
		}
		row("vectors", "%d of %d chunks embedded (%d%%)", v.Embedded, v.Chunks, pct)
	}
	if b := st.Building; b != nil {
		line := fmt.Sprintf("a %s build by process %d, since %s", b.Mode, b.PID, b.Started.Local().Format("2006-01-02 15:04:05 MST"))
		switch p := b.Progress; {
		case p == nil:
		case p.Phase == "reading":
			line += fmt.Sprintf("; %d of %d notes read", p.Done, p.Total)
		default:
			line += fmt.Sprintf("; %d of %d chunks embedded", p.Done, p.Total)
		}
		row("building", "%s", line)
	}
	if lb := st.LastBuild; lb != nil {
		row("built", "%s, %s, took %s", lb.At.Local().Format("2006-01-02 15:04 MST"), lb.Mode, lb.Took.Round(100*time.Millisecond))
		if n := len(lb.Skipped); n > 0 {
			kinds := make([]string, 0, n)
			for k := range lb.Skipped {
				kinds = append(kinds, k)
			}
			sort.Strings(kinds)
			var parts []string
			for _, k := range kinds {
				parts = append(parts, fmt.Sprintf("%d %s", lb.Skipped[k], k))
			}
			row("skipped", "%s", strings.Join(parts, "; "))
		}
		if lb.Warnings > 0 {
			row("", "%d notes indexed with warnings (vault-rag reindex lists them)", lb.Warnings)
		}
	} else if st.BuiltAt != nil {
		row("built", "%s", st.BuiltAt.Local().Format("2006-01-02 15:04 MST"))
	}
	for _, wn := range st.Warnings {
		row("warning", "%s", wn)
	}
	switch s := st.Server; {
	case s.Health != nil:
		h := s.Health
		line := fmt.Sprintf("%s: %s, %d notes", strings.TrimSuffix(s.URL, "/health"), h.Status, h.Notes)
		if h.Vectors != nil && !h.Vectors.Complete() {
			line += fmt.Sprintf(", vectors %d of %d", h.Vectors.Embedded, h.Vectors.Chunks)
		}
		if h.Reindex.Running {
			line += ", reindexing"
		}
		if h.Vault != "" {
			line += ", vault " + h.Vault
		}
		row("server", "%s", line)
		for _, d := range h.DegradedStages {
			row("", "degraded: %s", d)
		}
	case s.Running:
		row("server", "%s: %s", s.URL, s.Error)
	default:
		row("server", "none at %s (vault-rag serve starts one; an MCP client over stdio starts its own)", strings.TrimSuffix(strings.TrimPrefix(s.URL, "http://"), "/health"))
	}
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
