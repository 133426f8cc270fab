package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/models"
	"github.com/vault-rag/vault-rag/pipeline"
	"github.com/vault-rag/vault-rag/server"
	"github.com/vault-rag/vault-rag/stages"
)

// session is an open index with its models, as every command that searches
// needs them.
type session struct {
	db  *index.DB
	reg *models.Registry
	env *stages.Env
}

// openSession opens the index at db for the vault: an index built from
// another vault is refused, with the way out.
func openSession(ctx context.Context, db, vault string) (*session, error) {
	d, err := index.Open(ctx, db)
	if errors.Is(err, index.ErrNoIndex) {
		abs, _ := filepath.Abs(vault)
		return nil, fmt.Errorf("no index of the vault %s yet (%s): run `vault-rag reindex` with the same VAULT_PATH or --vault", abs, db)
	}
	if err != nil {
		return nil, err
	}
	if err := d.CheckVault(vault); err != nil {
		d.Close()
		return nil, vaultMismatchHint(err)
	}
	reg, err := newRegistry()
	if err != nil {
		d.Close()
		return nil, err
	}
	return &session{db: d, reg: reg, env: pipeline.NewEnv(d, reg)}, nil
}

func (s *session) Close() {
	s.reg.Close()
	s.db.Close()
}

// filterFlags are search's structured filters, named as vault_search's
// parameters are (date_from is --date-from).
type filterFlags struct {
	path, typ, project, status, topics, dateFrom, dateTo string
}

func addFilterFlags(fs *flag.FlagSet) *filterFlags {
	f := &filterFlags{}
	fs.StringVar(&f.path, "path", "", "only notes under this vault-relative folder or path prefix")
	fs.StringVar(&f.typ, "type", "", "only notes of this frontmatter type")
	fs.StringVar(&f.project, "project", "", "only notes of this project")
	fs.StringVar(&f.status, "status", "", "only notes with this status")
	fs.StringVar(&f.topics, "topics", "", "only notes with all these topics (comma-separated)")
	fs.StringVar(&f.dateFrom, "date-from", "", "only notes dated on or after YYYY-MM-DD")
	fs.StringVar(&f.dateTo, "date-to", "", "only notes dated on or before YYYY-MM-DD")
	// The names before --date-from and --date-to, kept so no script breaks.
	fs.StringVar(&f.dateFrom, "from", "", "alias of --date-from")
	fs.StringVar(&f.dateTo, "to", "", "alias of --date-to")
	return f
}

func (f *filterFlags) filter() index.Filter {
	var topics []string
	for _, t := range strings.Split(f.topics, ",") {
		if t = strings.TrimSpace(t); t != "" {
			topics = append(topics, t)
		}
	}
	return index.Filter{PathPrefix: f.path, Type: f.typ, Project: f.project, Status: f.status, Topics: topics, DateFrom: f.dateFrom, DateTo: f.dateTo}
}

// parseNow reads --now (pipeline.ParseNow); empty means the wall clock, read
// here, at the edge, never inside the pipeline.
func parseNow(s string) (time.Time, error) {
	if s == "" {
		return time.Now().UTC(), nil
	}
	now, ok := pipeline.ParseNow(s)
	if !ok {
		return now, fmt.Errorf("--now %q is neither RFC 3339 nor YYYY-MM-DD", s)
	}
	return now, nil
}

func cmdSearch(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("search", flag.ContinueOnError)
	cfgName := fs.String("config", envOr("VAULT_RAG_CONFIG", server.DefaultConfig), "configuration name (configs/ or experiments/) or a YAML file [VAULT_RAG_CONFIG]")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	explainFlag := fs.Bool("explain", false, "show every stage's rank and score for each note")
	nowFlag := fs.String("now", "", "the clock recency measures from (RFC 3339 or YYYY-MM-DD; default: now)")
	k := fs.Int("k", pipeline.DefaultK, "notes to return")
	detail := fs.String("detail", "", `how much of each note to show: "brief", "passage" (default) or "section", as vault_search's detail`)
	related := fs.Bool("related", false, "also list the notes the first result links to and that link to it")
	keywords := fs.String("keywords", "", "the words a note that answers would contain (what an MCP client sends as keywords)")
	answer := fs.String("answer", "", "a passage written as the note that answers (what an MCP client sends as hypothetical_answer)")
	vault := fs.String("vault", vaultPath(), "the vault folder (default: with only --db or DB_PATH named, the vault that index was built from, else ./vault) [VAULT_PATH]")
	db := fs.String("db", "", dbFlagUsage)
	root := fs.String("root", configRoot(), "folder holding configs/ and experiments/ [VAULT_RAG_ROOT]")
	ff := addFilterFlags(fs)
	demo := fs.Bool("demo", false, "run the five demo queries through keyword, vector and the configuration, side by side")
	setUsage(fs, "[flags] [--] QUERY...", "Searches the vault's index with a configuration (default shipping) and prints the notes found.\n\"--\" ends the flags: vault-rag search -- --background-primary searches for a text that starts with a dash.")
	if err := parseFlags(fs, args, operands{any: true, dashHint: `"--" ends the flags: to search for text that starts with a dash, put it after --, e.g. vault-rag search -- --background-primary`}); err != nil {
		return err
	}
	if strings.TrimSpace(strings.Join(fs.Args(), " ")) == "" && !*demo {
		fs.Usage() // parseFlags left the output on stderr
		return exitError{code: 2}
	}
	v, fromIndex := indexVault(ctx, fs, *vault, *db)
	*vault = v
	if !fromIndex {
		if err := checkVault(*vault); err != nil {
			return err
		}
	}
	now, err := parseNow(*nowFlag)
	if err != nil {
		return err
	}
	cfg, err := pipeline.Find(*root, *cfgName)
	if err != nil {
		return err
	}
	if *db, err = indexPath(*db, *vault); err != nil {
		return err
	}
	s, err := openSession(ctx, *db, *vault)
	if err != nil {
		return err
	}
	defer s.Close()
	query := strings.Join(fs.Args(), " ")
	req := pipeline.Request{Text: query, Keywords: *keywords, Answer: *answer, Filter: ff.filter(), Now: now, K: *k, Explain: *explainFlag,
		Detail: pipeline.Detail(*detail), Related: *related}
	if *demo {
		return demoSearches(ctx, os.Stdout, s, *root, cfg, req)
	}
	res, _, err := pipeline.Run(ctx, s.env, cfg, req)
	if err != nil {
		return corruptHint(err)
	}
	cov, err := s.db.Coverage(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		out := server.SearchAnswer(res, *explainFlag)
		if !cov.Complete() {
			out.Vectors = &server.Coverage{Embedded: cov.Embedded, Chunks: cov.Chunks}
		}
		return printJSON(out)
	}
	printResult(os.Stdout, res, *explainFlag)
	if !cov.Complete() {
		fmt.Printf("(vectors: %d of %d chunks embedded so far; the rest are found by keyword only until the build ends)\n", cov.Embedded, cov.Chunks)
	}
	return nil
}

func printResult(w io.Writer, res *pipeline.Result, explain bool) {
	fmt.Fprintf(w, "%s — %q (%s)\n", res.Config, res.Query, res.Took)
	for _, st := range res.Stages {
		if st.Info != "" {
			fmt.Fprintf(w, "  [%s] %s\n", st.Stage, termSafe(st.Info))
		}
	}
	if len(res.Notes) == 0 {
		fmt.Fprintln(w, "  (nothing)")
	}
	for _, n := range res.Notes {
		fmt.Fprintf(w, "%2d. [%.3f] %s\n    %s\n", n.Rank, n.Score, termSafe(n.Path), termSafe(n.Title))
		for _, p := range n.Passages {
			if len(p.HeadingPath) > 0 {
				fmt.Fprintf(w, "    § %s\n", termSafe(strings.Join(p.HeadingPath, " › ")))
			}
			for _, line := range strings.Split(termSafeLines(p.Text), "\n") {
				fmt.Fprintf(w, "      %s\n", line)
			}
		}
		if explain {
			var parts []string
			for _, e := range n.Explain {
				if e.Rank == 0 {
					parts = append(parts, e.Stage+" —")
				} else {
					parts = append(parts, fmt.Sprintf("%s #%d (%.4f)", e.Stage, e.Rank, e.Score))
				}
			}
			fmt.Fprintf(w, "    explain: %s\n", strings.Join(parts, ", "))
		}
		for _, r := range n.Related {
			fmt.Fprintf(w, "    related: %s %s\n", r.Direction, termSafe(r.Path))
		}
	}
}

// demoQueries show where each branch wins: exact tokens for keyword, plain
// words for vector, and one scope.
var demoQueries = []struct {
	text string
	path string
}{
	{"why did writes get slow in the middle of the night", ""},
	{"FERR-4102", ""},
	{"a task ran twice because another worker picked it up while the first was still busy", ""},
	{"lease_ttl_ms", ""},
	{"what went wrong overnight", "personal/"},
}

// demoSearches runs the demo queries through keyword, vector and the chosen
// configuration, and prints the three lists side by side.
func demoSearches(ctx context.Context, w io.Writer, s *session, root string, cfg *pipeline.Config, base pipeline.Request) error {
	var branches []*pipeline.Config
	for _, name := range []string{"keyword", "vector"} {
		c, err := pipeline.Find(root, name)
		if err != nil {
			return err
		}
		branches = append(branches, c)
	}
	branches = append(branches, cfg)
	labels := []string{"keyword (FTS5/BM25)", "vector (sqlite-vec)", cfg.Name + " (" + cfg.Description + ")"}
	for _, q := range demoQueries {
		req := base
		req.Text, req.K = q.text, 3
		if q.path != "" {
			req.Filter.PathPrefix = q.path
		}
		scope := ""
		if q.path != "" {
			scope = "   [scope: " + q.path + "]"
		}
		fmt.Fprintf(w, "$ vault-rag search %q%s\n", q.text, scope)
		for i, c := range branches {
			fmt.Fprintf(w, "  %s\n", labels[i])
			res, _, err := pipeline.Run(ctx, s.env, c, req)
			if errors.Is(err, models.ErrNotInstalled) {
				fmt.Fprintf(w, "    (model not installed: %v)\n", err)
				continue
			}
			if err != nil {
				return corruptHint(err)
			}
			if len(res.Notes) == 0 {
				fmt.Fprintln(w, "    (nothing)")
			}
			for _, n := range res.Notes {
				fmt.Fprintf(w, "    %d. [%.3f] %s\n", n.Rank, n.Score, termSafe(n.Path))
			}
		}
		fmt.Fprintln(w)
	}
	return nil
}

// corruptHint turns a query that read a damaged page (the index is opened
// without SQLite's page check unless something suggests damage) into the one
// line a damaged index gets at open.
func corruptHint(err error) error {
	if index.IsCorrupt(err) && !errors.Is(err, index.ErrCorrupt) {
		return fmt.Errorf("%w: %v; run `vault-rag reindex` to rebuild it", index.ErrCorrupt, err)
	}
	return err
}
