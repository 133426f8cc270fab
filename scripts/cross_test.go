package scripts

import (
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

// TestCrossEnv runs scripts/cross.sh env over every release platform: the Go
// target, and for the cross ones zig's target and the sqlite3.h folder. No
// tool is installed by `env`, so this runs without zig.
func TestCrossEnv(t *testing.T) {
	tools := "/opt/t"
	zig := tools + "/zig-0.17.1"
	cross := func(goos, goarch, target, exe string) map[string]string {
		return map[string]string{"GOOS": goos, "GOARCH": goarch, "CGO_ENABLED": "1",
			"CC": zig + "/bin/cc-" + target, "CXX": zig + "/bin/c++-" + target,
			"CGO_CFLAGS": "-O2 -g -I" + zig + "/sqlite3-include", "CGO_LDFLAGS": "", "VR_EXE": exe}
	}
	for _, tc := range []struct {
		platform string
		want     map[string]string // nil: refused
	}{
		{"linux-x64", map[string]string{"GOOS": "linux", "GOARCH": "amd64", "CGO_ENABLED": "1", "VR_EXE": ""}},
		{"linux-arm64", cross("linux", "arm64", "aarch64-linux-gnu.2.28", "")},
		{"macos-arm64", func() map[string]string {
			m := cross("darwin", "arm64", "aarch64-macos.11.0", "")
			m["CGO_LDFLAGS"] = "-F" + zig + "/macos-stubs/Frameworks -L" + zig + "/macos-stubs/lib"
			return m
		}()},
		{"windows-x64", cross("windows", "amd64", "x86_64-windows-gnu", ".exe")},
		{"macos-x64", nil},
		{"linux", nil},
		{"", nil},
	} {
		t.Run(tc.platform, func(t *testing.T) {
			cmd := exec.Command("bash", "cross.sh", "env", tc.platform)
			// A clean environment: the native platform must not pass on a
			// CC or GOOS of the caller's as its own.
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "VR_TOOLS=" + tools}
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if tc.want == nil {
				if err == nil || stdout.Len() != 0 || !strings.HasPrefix(stderr.String(), "cross: unknown platform '"+tc.platform+"'") {
					t.Errorf("err %v, stdout %q, stderr %q: want a one-line refusal", err, stdout.String(), stderr.String())
				}
				return
			}
			if err != nil {
				t.Fatalf("%v: %s", err, stderr.String())
			}
			// Read the exports back the way a shell would.
			sh := exec.Command("bash", "-c", stdout.String()+"\nfor k in GOOS GOARCH CGO_ENABLED CC CXX CGO_CFLAGS CGO_LDFLAGS VR_EXE; do [ -n \"${!k+x}\" ] && printf '%s=%s\\n' \"$k\" \"${!k}\"; done; true")
			sh.Env = []string{"PATH=" + os.Getenv("PATH")}
			out, err := sh.Output()
			if err != nil {
				t.Fatalf("evaluating %q: %v", stdout.String(), err)
			}
			got := map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				k, v, _ := strings.Cut(line, "=")
				got[k] = v
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %v\nwant %v", got, tc.want)
			}
		})
	}
}
