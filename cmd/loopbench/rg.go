//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"
)

// outputCap is how much of a command's output the assistant sees, as Claude
// Code's shell tool cuts it: the first 30,000 bytes, then a line saying so.
const outputCap = 30000

const truncatedLine = "\n[output truncated]\n"

// rgTimeout bounds one command.
const rgTimeout = 60 * time.Second

// allowedCommands are the programs of the ripgrep arm.
var allowedCommands = map[string]bool{"rg": true, "sed": true, "cat": true, "ls": true}

// cmdRG runs one of rg, sed, cat and ls in the vault folder, with no shell,
// prints its output (stdout and stderr, cut at outputCap) and logs the call.
func cmdRG(args []string) error {
	fs := newFlagSet("rg", "usage: loopbench rg --vault DIR --log FILE --qid ID -- rg|sed|cat|ls ARG...")
	vault := fs.String("vault", "", "the vault folder: the commands' working directory")
	logPath := fs.String("log", "", "the call log (JSON lines, appended)")
	qid := fs.String("qid", "", "the question's id")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := need("vault", *vault, "log", *logPath, "qid", *qid); err != nil {
		return err
	}
	argv := fs.Args()
	if len(argv) == 0 {
		return usageErr("no command: want -- rg|sed|cat|ls ARG...")
	}
	root, err := filepath.Abs(*vault)
	if err != nil {
		return err
	}
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		return usageErr("--vault %s: not a folder", *vault)
	}
	started := time.Now()
	argJSON, _ := json.Marshal(argv[1:])
	call := Call{Arm: armRipgrep, QID: *qid, Tool: argv[0], Args: argJSON}

	if why := checkCommand(argv); why != "" {
		msg := "refused: " + why + "\n"
		os.Stdout.WriteString(msg)
		call.Bytes, call.Error, call.Refused = len(msg), true, true
		if err := logCall(*logPath, call, started); err != nil {
			return err
		}
		return exitCode{code: 2}
	}

	out, exit, err := runInVault(root, argv)
	if err != nil {
		out = []byte(err.Error() + "\n")
		exit = 127
	}
	shown := capOutput(out)
	if exit != 0 {
		shown = append(shown, fmt.Sprintf("[exit status %d]\n", exit)...)
	}
	os.Stdout.Write(shown)
	// rg's status 1 is "no match", an answer; 2 and above are errors
	failed := exit != 0 && !(argv[0] == "rg" && exit == 1)
	call.Bytes, call.Error, call.Exit = len(shown), failed, exit
	if err := logCall(*logPath, call, started); err != nil {
		return err
	}
	if exit != 0 {
		return exitCode{code: exit}
	}
	return nil
}

// runInVault runs argv in root with no shell and stdin closed, returning
// stdout and stderr as they came.
func runInVault(root string, argv []string) ([]byte, int, error) {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		hint := ""
		if argv[0] == "rg" {
			hint = " (install it: bash bench/loop/setup.sh)"
		}
		return nil, 0, fmt.Errorf("%s: not installed%s", argv[0], hint)
	}
	args := argv[1:]
	if argv[0] == "sed" {
		// GNU sed's sandbox refuses the e, w and r commands whatever the
		// script checker missed.
		args = append([]string{"--sandbox"}, args...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), rgTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = root
	cmd.Env = commandEnv()
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		buf.WriteString(fmt.Sprintf("\n[killed after %s]\n", rgTimeout))
		return buf.Bytes(), 124, nil
	case errors.As(err, &ee):
		return buf.Bytes(), ee.ExitCode(), nil
	case err != nil:
		return nil, 0, err
	}
	return buf.Bytes(), 0, nil
}

// commandEnv is the environment of the arm's commands: this one without
// ripgrep's configuration file, and with a plain locale-independent sort.
func commandEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "RIPGREP_CONFIG_PATH", "GREP_OPTIONS", "POSIXLY_CORRECT":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// capOutput cuts out at outputCap bytes (on a UTF-8 boundary) and says so.
func capOutput(out []byte) []byte {
	if len(out) <= outputCap {
		return out
	}
	cut := outputCap
	for cut > 0 && !utf8.RuneStart(out[cut]) {
		cut--
	}
	res := append([]byte{}, out[:cut]...)
	return append(res, truncatedLine...)
}

// checkCommand says why argv may not run, or "" when it may: a program other
// than rg, sed, cat and ls; a file argument naming an absolute path or
// leaving the vault with .. (search patterns and sed scripts are not file
// arguments: `rg /api` and `sed -n /x/p note.md` run); rg's options that run
// other programs; sed's in-place editing, script files and the commands that
// write, execute or read files.
func checkCommand(argv []string) string {
	name := argv[0]
	if !allowedCommands[name] {
		return fmt.Sprintf("%q is not one of rg, sed, cat, ls", name)
	}
	args := argv[1:]
	switch name {
	case "rg":
		return checkRG(args)
	case "sed":
		return checkSed(args)
	}
	// cat, ls: every argument, options' values too
	return checkPaths(args...)
}

// checkPaths checks every string of args that may name a file.
func checkPaths(args ...string) string {
	for _, a := range args {
		for _, p := range pathCandidates(a) {
			if why := checkPath(p); why != "" {
				return fmt.Sprintf("argument %q: %s", a, why)
			}
		}
	}
	return ""
}

// pathCandidates are the strings of one argument that may name a file: the
// argument itself, the value of --opt=value, and the attached value of a
// short option (-fFILE).
func pathCandidates(a string) []string {
	out := []string{a}
	if strings.HasPrefix(a, "--") {
		if _, v, ok := strings.Cut(a, "="); ok {
			out = append(out, v)
		}
	} else if strings.HasPrefix(a, "-") && len(a) > 2 {
		out = append(out, a[2:])
	}
	return out
}

// checkPath says why p may not be passed, or "": an absolute path, or one
// whose .. components climb out of the working directory.
func checkPath(p string) string {
	if strings.HasPrefix(p, "/") || filepath.IsAbs(p) {
		return "absolute paths are refused; name files relative to the notes folder (the working directory)"
	}
	depth := 0
	for _, part := range strings.Split(filepath.ToSlash(p), "/") {
		switch part {
		case "", ".":
		case "..":
			depth--
			if depth < 0 {
				return "paths may not leave the notes folder with .."
			}
		default:
			depth++
		}
	}
	return ""
}

// rgRunsPrograms are rg's options that run another program.
var rgRunsPrograms = map[string]bool{"--pre": true, "--hostname-bin": true}

// rgValueShort are rg's short options that take a value; rgValueLong its long
// ones (as of ripgrep 14).
const rgValueShort = "ABCdEefgjMmrtT"

var rgValueLong = map[string]bool{
	"--after-context": true, "--before-context": true, "--context": true, "--color": true, "--colors": true,
	"--context-separator": true, "--dfa-size-limit": true, "--encoding": true, "--engine": true,
	"--field-context-separator": true, "--field-match-separator": true, "--file": true, "--glob": true,
	"--iglob": true, "--ignore-file": true, "--max-columns": true, "--max-count": true, "--max-depth": true,
	"--max-filesize": true, "--path-separator": true, "--pre": true, "--pre-glob": true,
	"--regex-size-limit": true, "--regexp": true, "--replace": true, "--sort": true, "--sortr": true,
	"--threads": true, "--type": true, "--type-add": true, "--type-clear": true, "--type-not": true,
	"--hyperlink-format": true, "--hostname-bin": true, "--generate": true, "--maxdepth": true,
}

// rgFileValue are the rg options whose value names a file.
var rgFileValue = map[string]bool{"--file": true, "-f": true, "--ignore-file": true}

// checkRG checks rg's file arguments: the positional arguments but the
// pattern (the first, unless -e or -f gave the patterns), and the files of -f
// and --ignore-file. Patterns, globs and other option values are not paths.
func checkRG(args []string) string {
	var positional []string
	patternsGiven := false
	check := func(opt, val string) string {
		if rgFileValue[opt] {
			if why := checkPath(val); why != "" {
				return fmt.Sprintf("%s %q: %s", opt, val, why)
			}
		}
		if opt == "-e" || opt == "--regexp" || opt == "-f" || opt == "--file" {
			patternsGiven = true
		}
		return ""
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			positional = append(positional, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a, "=")
			if rgRunsPrograms[name] {
				return fmt.Sprintf("rg %s runs another program", name)
			}
			if rgValueLong[name] {
				if !hasVal {
					if i+1 >= len(args) {
						return ""
					}
					val = args[i+1]
					i++
				}
				if why := check(name, val); why != "" {
					return why
				}
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for j := 1; j < len(a); j++ {
				if !strings.ContainsRune(rgValueShort, rune(a[j])) {
					continue
				}
				opt, val := "-"+string(a[j]), a[j+1:]
				if val == "" {
					if i+1 >= len(args) {
						return ""
					}
					val = args[i+1]
					i++
				}
				if why := check(opt, val); why != "" {
					return why
				}
				break
			}
		default:
			positional = append(positional, a)
		}
	}
	if !patternsGiven && len(positional) > 0 {
		positional = positional[1:] // the pattern
	}
	return checkPaths(positional...)
}

// checkSed refuses in-place editing (-i, --in-place), script files (-f,
// --file, which the checker cannot read) and scripts with the w, W, e, r or
// R commands or an s command's w or e flag.
func checkSed(args []string) string {
	var scripts []string
	explicit := false // a script came from -e or --expression
	var operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			operands = append(operands, args[i+1:]...)
			i = len(args)
		case a == "-e" || a == "--expression":
			if i+1 >= len(args) {
				return "sed " + a + " needs a script"
			}
			scripts = append(scripts, args[i+1])
			explicit = true
			i++
		case strings.HasPrefix(a, "--expression="):
			scripts = append(scripts, strings.TrimPrefix(a, "--expression="))
			explicit = true
		case a == "--in-place" || strings.HasPrefix(a, "--in-place="):
			return "sed -i (editing files) is refused"
		case a == "--file" || strings.HasPrefix(a, "--file="):
			return "sed -f (a script file) is refused; give the script on the command line"
		case strings.HasPrefix(a, "--"):
			// --quiet, --regexp-extended, --separate, --null-data, ...
		case strings.HasPrefix(a, "-") && len(a) > 1:
			// short options, possibly grouped: -n, -nE, -ne SCRIPT, -eSCRIPT
			for j := 1; j < len(a); j++ {
				switch a[j] {
				case 'i':
					return "sed -i (editing files) is refused"
				case 'f':
					return "sed -f (a script file) is refused; give the script on the command line"
				case 'e':
					explicit = true
					if rest := a[j+1:]; rest != "" {
						scripts = append(scripts, rest)
					} else if i+1 < len(args) {
						scripts = append(scripts, args[i+1])
						i++
					} else {
						return "sed -e needs a script"
					}
					j = len(a)
				case 'l':
					// -l N: the line wrap length
					if a[j+1:] == "" {
						i++
					}
					j = len(a)
				}
			}
		default:
			operands = append(operands, a)
		}
	}
	if !explicit && len(operands) > 0 {
		scripts = append(scripts, operands[0])
		operands = operands[1:]
	}
	if why := checkPaths(operands...); why != "" {
		return why
	}
	for _, s := range scripts {
		if why := checkSedScript(s); why != "" {
			return why
		}
	}
	return ""
}

// checkSedScript scans a sed script command by command for the ones that
// write, execute or read files. A script it cannot follow is refused.
func checkSedScript(s string) string {
	i := 0
	skipTo := func(stop string) { // to the next character of stop (not consumed) or the end
		for i < len(s) && !strings.ContainsRune(stop, rune(s[i])) {
			i++
		}
	}
	// delimited reads a part ending in the unescaped delimiter d, s[i] being
	// its first character; it returns false at the end of the script.
	delimited := func(d byte) bool {
		for i < len(s) {
			switch s[i] {
			case '\\':
				i += 2
				continue
			case d:
				i++
				return true
			}
			i++
		}
		return false
	}
	address := func() bool {
		if i >= len(s) {
			return true
		}
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '~') {
				i++
			}
		case c == '$':
			i++
		case c == '/':
			i++
			if !delimited('/') {
				return false
			}
			for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		case c == '\\':
			if i+1 >= len(s) {
				return false
			}
			d := s[i+1]
			i += 2
			if !delimited(d) {
				return false
			}
			for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		case c == '+' || c == '~':
			i++
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		}
		return true
	}
	space := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	for {
		for i < len(s) && strings.ContainsRune(" \t\n;", rune(s[i])) {
			i++
		}
		if i >= len(s) {
			return ""
		}
		if !address() {
			return "sed: cannot read this script's address"
		}
		space()
		if i < len(s) && s[i] == ',' {
			i++
			space()
			if !address() {
				return "sed: cannot read this script's address"
			}
		}
		space()
		for i < len(s) && s[i] == '!' {
			i++
			space()
		}
		if i >= len(s) {
			return "sed: a script ends without a command"
		}
		c := s[i]
		i++
		switch c {
		case '{', '}':
		case '#':
			skipTo("\n")
		case 'w', 'W':
			return "sed's w command (writing a file) is refused"
		case 'e':
			return "sed's e command (running a command) is refused"
		case 'r', 'R':
			return "sed's r command (reading another file) is refused"
		case 's':
			if i >= len(s) || s[i] == '\n' || s[i] == '\\' {
				return "sed: cannot read this s command"
			}
			d := s[i]
			i++
			// delimited reads one part each time: the pattern, then the replacement.
			pattern := delimited(d)
			if !pattern || !delimited(d) {
				return "sed: an s command is not closed"
			}
			for i < len(s) && !strings.ContainsRune(";\n}", rune(s[i])) {
				switch s[i] {
				case 'w', 'W':
					return "sed's s///w flag (writing a file) is refused"
				case 'e':
					return "sed's s///e flag (running a command) is refused"
				}
				i++
			}
		case 'y':
			if i >= len(s) {
				return "sed: cannot read this y command"
			}
			d := s[i]
			i++
			source := delimited(d)
			if !source || !delimited(d) {
				return "sed: a y command is not closed"
			}
		case 'a', 'i', 'c':
			// text to the end of the line (GNU one-liner form), or the
			// classic form's backslash-newline continuations
			for i < len(s) && s[i] != '\n' {
				if s[i] == '\\' {
					i++
				}
				i++
			}
		case ':', 'b', 't', 'T':
			skipTo(";\n")
		case 'p', 'P', 'd', 'D', 'n', 'N', 'g', 'G', 'h', 'H', 'x', 'z', '=', 'l', 'L', 'q', 'Q', 'F', 'v':
			// a command taking no file argument (l, L, q, Q: an optional number)
			skipTo(";\n}")
		default:
			return fmt.Sprintf("sed: cannot check the %q command", c)
		}
	}
}
