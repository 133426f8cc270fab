package mcptest

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// childEnv marks the child process of TestCloseReports: a "server" that
// writes a line that is no JSON-RPC message to stdout and one to stderr,
// reads its input to the end, and exits with status 3.
const childEnv = "VAULT_RAG_MCPTEST_CHILD"

func TestBadServerProcess(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("the child process of TestCloseReports, run by it")
	}
	fmt.Println("not a protocol message")
	fmt.Fprintln(os.Stderr, "the child's log line")
	io.Copy(io.Discard, os.Stdin)
	os.Exit(3)
}

// TestCloseReports: Close says that the server did not exit cleanly and that
// its stdout carried a line that is not JSON-RPC, and Stderr holds its log.
func TestCloseReports(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestBadServerProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	srv := StartStdio(t, cmd)
	err = srv.Close()
	if err == nil || !strings.Contains(err.Error(), "did not exit cleanly") || !strings.Contains(err.Error(), `not JSON-RPC, e.g. "not a protocol message"`) {
		t.Errorf("Close: %v, want the unclean exit and the line that is not JSON-RPC", err)
	}
	if !strings.Contains(srv.Stderr(), "the child's log line") {
		t.Errorf("Stderr: %q", srv.Stderr())
	}
	if again := srv.Close(); again == nil || again.Error() != err.Error() {
		t.Errorf("a second Close: %v, want the first's %v", again, err)
	}
}
