//go:build unix

// Command loopbench is the harness of the loop benchmark (bench/loop/README.md):
// language-model assistants answer held-out questions about a vault, once
// with vault-rag's MCP tools only (arm vault-rag), once with rg, sed, cat and
// ls over the vault folder only (arm ripgrep). loopbench starts and stops the
// servers, gives the assistants each arm's tool wrapper (which logs every
// call's output bytes), writes their briefs, samples the questions and scores
// the answers.
//
//	loopbench serve-start --bin VAULT_RAG --vault DIR --port N --data DIR [--root DIR]
//	loopbench serve-stop --port N
//	loopbench serve-status [--port N]
//	loopbench vr --server URL --log FILE --qid ID tools | call TOOL 'JSON'
//	loopbench rg --vault DIR --log FILE --qid ID -- rg|sed|cat|ls ARG...
//	loopbench answer --answers FILE --arm ARM --qid ID --text ANSWER -- PATH...
//	loopbench brief --arm vault-rag|ripgrep --dataset DIR --qids IDS --log FILE --answers FILE [--server URL]
//	loopbench sample --dataset DIR --n 12
//	loopbench score --dataset DIR --answers FILE... --log FILE... [--out FILE --label TEXT]
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
)

const usage = `usage: loopbench COMMAND [flags]

  serve-start  start vault-rag serve over HTTP in the background and wait for its index
  serve-stop   stop a server serve-start started
  serve-status the servers serve-start started: pid, running, /health in a line
  vr           the vault-rag arm's tool: list the MCP server's tools, or call one (logged)
  rg           the ripgrep arm's tool: run rg, sed, cat or ls in the vault folder (logged)
  answer       append one answer line to an answers file
  brief        print an assistant's brief for one arm
  sample       print a deterministic, kind-stratified sample of question ids
  score        score answers and logs: nDCG@5, tool calls and bytes per question

loopbench COMMAND -h shows a command's flags; bench/loop/README.md the protocol.
`

// exitCode is an error that carries the process's exit status; its message,
// when not empty, has been printed already or is printed by main.
type exitCode struct {
	code int
	msg  string
}

func (e exitCode) Error() string { return e.msg }

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	cmd, args := os.Args[1], os.Args[2:]
	switch cmd {
	case "serve-start":
		err = cmdServeStart(args)
	case "serve-stop":
		err = cmdServeStop(args)
	case "serve-status":
		err = cmdServeStatus(args)
	case "vr":
		err = cmdVR(args)
	case "rg":
		err = cmdRG(args)
	case "answer":
		err = cmdAnswer(args)
	case "brief":
		err = cmdBrief(args)
	case "sample":
		err = cmdSample(args)
	case "score":
		err = cmdScore(args)
	case "-h", "-help", "--help", "help":
		fmt.Print(usage)
		return
	default:
		fmt.Fprintf(os.Stderr, "loopbench: unknown command %q\n\n%s", cmd, usage)
		os.Exit(2)
	}
	if err == nil {
		return
	}
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	var ec exitCode
	if errors.As(err, &ec) {
		if ec.msg != "" {
			fmt.Fprintln(os.Stderr, "loopbench "+cmd+": "+ec.msg)
		}
		os.Exit(ec.code)
	}
	fmt.Fprintln(os.Stderr, "loopbench "+cmd+": "+err.Error())
	os.Exit(1)
}

// newFlagSet is a subcommand's flags, whose usage is its usage line and then
// the flags.
func newFlagSet(name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), usage)
		fs.PrintDefaults()
	}
	return fs
}

// usageErr is a command-line mistake: exit status 2.
func usageErr(format string, a ...any) error {
	return exitCode{code: 2, msg: fmt.Sprintf(format, a...)}
}

// need checks that every named flag value is set.
func need(pairs ...string) error {
	var missing []string
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			missing = append(missing, "--"+pairs[i])
		}
	}
	if len(missing) > 0 {
		return usageErr("missing %s", strings.Join(missing, ", "))
	}
	return nil
}

// multi is a flag that may be given several times, each value possibly a
// comma-separated list.
type multi []string

func (m *multi) String() string { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*m = append(*m, p)
		}
	}
	return nil
}
