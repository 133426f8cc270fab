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
		role := s.Role
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

// cmdModelsFetch installs every model it can. A model no source delivers is
// reported in one line and is not an error unless --require names it: the
// cross-encoder, for one, has no source but Hugging Face.
func cmdModelsFetch(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("models fetch", flag.ContinueOnError)
	require := fs.String("require", models.DefaultEmbedder, "comma-separated models whose absence is an error")
	verbose := fs.Bool("v", false, "print every source tried")
	if err := parseFlags(fs, args, operands{}); err != nil {
		return err
	}
	m, err := models.LoadManifest()
	if err != nil {
		return err
	}
	required := map[string]bool{}
	for _, n := range strings.Split(*require, ",") {
		if n = strings.TrimSpace(n); n != "" {
			if _, err := m.Lookup(n); err != nil {
				return err
			}
			required[n] = true
		}
	}
	settings := modelSettings()
	var failed []string
	for _, s := range m.Models {
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
			}
		default:
			return err
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("required models not installed: %s", strings.Join(failed, ", "))
	}
	return nil
}

// cmdModelsImport installs a model from files brought by other means: a
// folder, the files, or an archive or jar holding them. Each file is checked
// against the manifest's size and sha256 before anything is installed.
func cmdModelsImport(args []string) error {
	fs := flag.NewFlagSet("models import", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: vault-rag models import NAME PATH [PATH...]\n  PATH: a folder, the model's files, or a .zip/.jar/.tar/.tar.gz holding them")
	}
	if err := parseFlags(fs, args, operands{any: true}); err != nil {
		return err
	}
	if fs.NArg() < 2 {
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
