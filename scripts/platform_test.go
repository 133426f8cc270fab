// Package scripts holds no Go code: this test runs scripts/platform.sh, the
// platform choice of setup.sh, over a table of `uname -s`/`uname -m` answers,
// so the platforms that cannot run here are tested at least for the files they
// would fetch.
package scripts

import (
	"os/exec"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/models"
)

func TestPlatformChoice(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatalf("bash is needed to run setup.sh: %v", err)
	}
	type files = map[string]string
	linuxX64 := files{"VR_PLATFORM": "linux-x64", "VR_ORT_LIB": "libonnxruntime.so",
		"VR_ORT_ARCHIVE": "onnxruntime-linux-x64-1.24.1.tgz", "VR_ORT_MEMBER": "onnxruntime-linux-x64-1.24.1/lib/libonnxruntime.so.1.24.1",
		"VR_ORT_NPM": "package/bin/napi-v6/linux/x64/libonnxruntime.so.1"}
	linuxArm := files{"VR_PLATFORM": "linux-arm64", "VR_ORT_LIB": "libonnxruntime.so",
		"VR_ORT_ARCHIVE": "onnxruntime-linux-aarch64-1.24.1.tgz", "VR_ORT_MEMBER": "onnxruntime-linux-aarch64-1.24.1/lib/libonnxruntime.so.1.24.1",
		"VR_ORT_NPM": "package/bin/napi-v6/linux/arm64/libonnxruntime.so.1"}
	macArm := files{"VR_PLATFORM": "macos-arm64", "VR_ORT_LIB": "libonnxruntime.dylib",
		"VR_ORT_ARCHIVE": "onnxruntime-osx-arm64-1.24.1.tgz", "VR_ORT_MEMBER": "onnxruntime-osx-arm64-1.24.1/lib/libonnxruntime.1.24.1.dylib",
		"VR_ORT_NPM": "package/bin/napi-v6/darwin/arm64/libonnxruntime.1.24.1.dylib"}
	windows := files{"VR_PLATFORM": "windows-x64", "VR_ORT_LIB": "onnxruntime.dll",
		"VR_ORT_ARCHIVE": "onnxruntime-win-x64-1.24.1.zip", "VR_ORT_MEMBER": "onnxruntime-win-x64-1.24.1/lib/onnxruntime.dll",
		"VR_ORT_NPM": ""}
	for _, tc := range []struct {
		os, arch string
		want     files  // nil: refused
		refusal  string // in the one line a refusal prints
	}{
		{"Linux", "x86_64", linuxX64, ""},
		{"Linux", "amd64", linuxX64, ""},
		{"Linux", "aarch64", linuxArm, ""},
		{"Linux", "arm64", linuxArm, ""},
		{"Darwin", "arm64", macArm, ""},
		{"Darwin", "x86_64", nil, "no ONNX Runtime 1.24.1 build"},
		{"Linux", "armv7l", nil, "no ONNX Runtime builds for Linux armv7l"},
		{"Linux", "riscv64", nil, "Linux riscv64"},
		{"MINGW64_NT-10.0-19045", "x86_64", windows, ""},
		{"MSYS_NT-10.0-22631", "x86_64", windows, ""},
		{"CYGWIN_NT-10.0-19045", "x86_64", windows, ""},
		{"MINGW64_NT-10.0-22631", "aarch64", nil, "MINGW64_NT-10.0-22631 aarch64"},
		{"FreeBSD", "amd64", nil, "FreeBSD"},
	} {
		t.Run(tc.os+"/"+tc.arch, func(t *testing.T) {
			cmd := exec.Command("bash", "platform.sh", tc.os, tc.arch)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if tc.want == nil {
				lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
				if err == nil || len(lines) != 1 || !strings.HasPrefix(lines[0], "setup: ") || !strings.Contains(lines[0], tc.refusal) {
					t.Errorf("err %v, stderr %q: want exit 1 and one line with %q", err, stderr.String(), tc.refusal)
				}
				if stdout.Len() != 0 {
					t.Errorf("a refused platform printed a choice: %q", stdout.String())
				}
				return
			}
			if err != nil {
				t.Fatalf("%v: %s", err, stderr.String())
			}
			got := files{}
			for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
				k, v, _ := strings.Cut(line, "=")
				got[k] = v
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %v\nwant %v", got, tc.want)
			}
		})
	}
}

// The library file setup.sh installs is the one the Go code loads.
func TestPlatformLibraryNameMatchesGo(t *testing.T) {
	for goos, uname := range map[string]string{"linux": "Linux", "darwin": "Darwin"} {
		out, err := exec.Command("bash", "-c", `. ./platform.sh && vr_platform "$0" arm64 && echo "$VR_ORT_LIB"`, uname).Output()
		if err != nil {
			t.Fatalf("%s: %v", uname, err)
		}
		if got, want := strings.TrimSpace(string(out)), models.RuntimeLibraryName(goos); got != want {
			t.Errorf("%s: setup installs %s, the Go code loads %s", uname, got, want)
		}
	}
	if runtime.GOOS == "linux" || runtime.GOOS == "darwin" {
		out, err := exec.Command("bash", "platform.sh").Output()
		if err != nil {
			t.Fatalf("this machine (%s/%s) is refused: %v", runtime.GOOS, runtime.GOARCH, err)
		}
		if !strings.Contains(string(out), "VR_ORT_LIB="+models.RuntimeLibraryName(runtime.GOOS)) {
			t.Errorf("this machine's choice %q does not name %s", out, models.RuntimeLibraryName(runtime.GOOS))
		}
	}
}
