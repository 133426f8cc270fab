//go:build unix

package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template"
)

// Answer is one line of an answers file.
type Answer struct {
	QID       string   `json:"qid"`
	Arm       string   `json:"arm"`
	Citations []string `json:"citations"`
	Answer    string   `json:"answer"`
}

// cmdAnswer appends one answer line; the assistants may use it instead of
// writing the JSON themselves. It does not look at the vault.
func cmdAnswer(args []string) error {
	fs := newFlagSet("answer", "usage: loopbench answer --answers FILE --arm ARM --qid ID --text ANSWER -- [PATH...]  (paths best first, at most 5)")
	answers := fs.String("answers", "", "the answers file (JSON lines, appended)")
	arm := fs.String("arm", "", "vault-rag or ripgrep")
	qid := fs.String("qid", "", "the question's id")
	text := fs.String("text", "", "the one or two sentence answer")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := need("answers", *answers, "arm", *arm, "qid", *qid); err != nil {
		return err
	}
	if *arm != armVaultRag && *arm != armRipgrep {
		return usageErr("--arm: want %s or %s", armVaultRag, armRipgrep)
	}
	cites := fs.Args()
	if cites == nil {
		cites = []string{}
	}
	if len(cites) > 5 {
		return usageErr("%d citations: cite at most 5", len(cites))
	}
	if err := appendJSONLine(*answers, Answer{QID: *qid, Arm: *arm, Citations: cites, Answer: *text}); err != nil {
		return err
	}
	fmt.Printf("recorded %s: %d citations\n", *qid, len(cites))
	return nil
}

// briefData fills the brief templates.
type briefData struct {
	Arm       string
	Loopbench string
	Server    string
	Vault     string
	Log       string
	Answers   string
	Tools     string
	Questions []*Query
}

// cmdBrief prints one assistant's brief: bench/loop/brief.md with the arm's
// tools section (tools-ARM.md) and the questions, id and text only.
func cmdBrief(args []string) error {
	fs := flag.NewFlagSet("brief", flag.ContinueOnError)
	arm := fs.String("arm", "", "vault-rag or ripgrep")
	dataset := fs.String("dataset", "", "the dataset folder (queries.json, vault/)")
	var qids multi
	fs.Var(&qids, "qids", "the question ids, comma-separated, in the order to answer them (loopbench sample)")
	logPath := fs.String("log", "", "the call log the tool commands append to")
	answers := fs.String("answers", "", "the answers file")
	server := fs.String("server", "", "the MCP endpoint (arm vault-rag), http://127.0.0.1:PORT/mcp")
	vault := fs.String("vault", "", "the vault folder the rg command runs in (arm ripgrep; default DATASET/vault)")
	templates := fs.String("templates", "", "the folder of brief.md and tools-ARM.md (default: bench/loop of the current folder or of the checkout holding this binary)")
	self := fs.String("loopbench", "", "the loopbench path the commands name (default: this binary's absolute path)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := need("arm", *arm, "dataset", *dataset, "qids", qids.String(), "log", *logPath, "answers", *answers); err != nil {
		return err
	}
	d, err := loadDataset(*dataset)
	if err != nil {
		return err
	}
	qs, err := d.pick(qids)
	if err != nil {
		return err
	}
	data := briefData{Arm: *arm, Questions: qs, Loopbench: *self}
	if data.Loopbench == "" {
		if data.Loopbench, err = os.Executable(); err != nil {
			return err
		}
	}
	if data.Log, err = filepath.Abs(*logPath); err != nil {
		return err
	}
	if data.Answers, err = filepath.Abs(*answers); err != nil {
		return err
	}
	switch *arm {
	case armVaultRag:
		if *server == "" {
			return usageErr("--arm vault-rag needs --server")
		}
		data.Server = *server
	case armRipgrep:
		v := *vault
		if v == "" {
			v = filepath.Join(d.Dir, "vault")
		}
		if data.Vault, err = filepath.Abs(v); err != nil {
			return err
		}
		if st, err := os.Stat(data.Vault); err != nil || !st.IsDir() {
			return usageErr("--vault %s: not a folder", data.Vault)
		}
	default:
		return usageErr("--arm: want %s or %s", armVaultRag, armRipgrep)
	}
	dir, err := templateDir(*templates)
	if err != nil {
		return err
	}
	tools, err := render(filepath.Join(dir, "tools-"+*arm+".md"), data)
	if err != nil {
		return err
	}
	data.Tools = tools
	out, err := render(filepath.Join(dir, "brief.md"), data)
	if err != nil {
		return err
	}
	fmt.Print(out)
	return nil
}

func render(path string, data briefData) (string, error) {
	t, err := template.New(filepath.Base(path)).Option("missingkey=error").ParseFiles(path)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return "", err
	}
	return b.String(), nil
}

// templateDir finds bench/loop: the flag, else ./bench/loop, else the one of
// the checkout whose bin/ holds this binary.
func templateDir(flagDir string) (string, error) {
	var tried []string
	cands := []string{}
	if flagDir != "" {
		cands = append(cands, flagDir)
	} else {
		cands = append(cands, filepath.Join("bench", "loop"))
		if exe, err := os.Executable(); err == nil {
			if real, err := filepath.EvalSymlinks(exe); err == nil {
				exe = real
			}
			cands = append(cands, filepath.Join(filepath.Dir(filepath.Dir(exe)), "bench", "loop"))
		}
	}
	for _, c := range cands {
		if _, err := os.Stat(filepath.Join(c, "brief.md")); err == nil {
			return c, nil
		}
		tried = append(tried, c)
	}
	return "", fmt.Errorf("no brief.md in %s: pass --templates", strings.Join(tried, " or "))
}
