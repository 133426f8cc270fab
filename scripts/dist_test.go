package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDistRefusesOtherPlatforms: dist.sh builds every platform's archive on
// Linux x86_64, the machine its pinned cross compiler runs on, and says so in
// one line anywhere else, before it builds anything. uname is stubbed to
// answer for the machine under test.
func TestDistRefusesOtherPlatforms(t *testing.T) {
	for _, p := range [][2]string{{"Linux", "aarch64"}, {"Darwin", "arm64"}, {"Darwin", "x86_64"}, {"FreeBSD", "amd64"}} {
		stub := t.TempDir()
		script := "#!/bin/sh\ncase \"$1\" in -s) echo " + p[0] + ";; -m) echo " + p[1] + ";; esac\n"
		if err := os.WriteFile(filepath.Join(stub, "uname"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("bash", "dist.sh")
		cmd.Env = append(os.Environ(), "PATH="+stub+string(os.PathListSeparator)+os.Getenv("PATH"), "DATA="+t.TempDir())
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		want := "dist: archives are built on Linux x86_64; this machine is " + p[0] + " " + p[1] + "\n"
		if err == nil || stderr.String() != want || stdout.Len() != 0 {
			t.Errorf("%s %s: err %v, stdout %q, stderr %q; want exit 1 and %q", p[0], p[1], err, stdout.String(), stderr.String(), want)
		}
	}
}
