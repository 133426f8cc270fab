package main

import (
	"bytes"
	"debug/macho"
	"debug/pe"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// build compiles an empty Go program for goos/goarch without cgo: a small
// real executable of each format, linked by Go's own linker (which signs
// Mach-O arm64 ad hoc, as Apple silicon requires).
func build(t *testing.T, goos, goarch string, ldflags ...string) []byte {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module fixture\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"build", "-o", "out"}
	if len(ldflags) > 0 {
		args = append(args, "-ldflags="+strings.Join(ldflags, " "))
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the %s/%s fixture: %v\n%s", goos, goarch, err, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func check(t *testing.T, platform string, b []byte, o Options) (string, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
	rep, err := Check(platform, path, o)
	return rep.Text, err
}

// replace swaps one byte string for another of the same length, once.
func replace(t *testing.T, b []byte, old, new string) []byte {
	t.Helper()
	if len(old) != len(new) || bytes.Count(b, []byte(old)) == 0 {
		t.Fatalf("cannot patch %q in the fixture", old)
	}
	return bytes.Replace(bytes.Clone(b), []byte(old), []byte(new), 1)
}

func wantErr(t *testing.T, err error, part string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), part) {
		t.Errorf("err %v, want one saying %q", err, part)
	}
}

func TestMachO(t *testing.T) {
	exe := build(t, "darwin", "arm64")
	rep, err := check(t, "macos-arm64", exe, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{"Mach-O arm64 Exec", "ad-hoc signed", "/usr/lib/libSystem.B.dylib"} {
		if !strings.Contains(rep, part) {
			t.Errorf("report %q lacks %q", rep, part)
		}
	}
	_, err = check(t, "macos-arm64", exe, Options{Lib: true})
	wantErr(t, err, "want Dylib")

	// A library outside the system folders.
	_, err = check(t, "macos-arm64", replace(t, exe, "/usr/lib/libSystem", "/opt/lib/libSystem"), Options{})
	wantErr(t, err, "/opt/lib/libSystem.B.dylib, which is not a system library")

	// No signature: the load command renumbered (LC_CODE_SIGNATURE, 0x1d,
	// becomes an unknown 0x7d, which macho.NewFile keeps raw).
	unsigned := bytes.Clone(exe)
	found := false
	for off := 32; off+8 <= len(unsigned) && off < 32+int(binary.LittleEndian.Uint32(exe[20:])); {
		cmd, size := binary.LittleEndian.Uint32(unsigned[off:]), binary.LittleEndian.Uint32(unsigned[off+4:])
		if cmd == lcCodeSignature {
			binary.LittleEndian.PutUint32(unsigned[off:], 0x7d)
			found = true
		}
		off += int(size)
	}
	if !found {
		t.Fatal("the fixture has no LC_CODE_SIGNATURE to remove")
	}
	_, err = check(t, "macos-arm64", unsigned, Options{})
	wantErr(t, err, "no LC_CODE_SIGNATURE")

	_, err = check(t, "windows-x64", exe, Options{})
	wantErr(t, err, "not a PE file")
	_, err = check(t, "linux-arm64", exe, Options{})
	wantErr(t, err, "not an ELF file")

	// The header's CPU type (offset 4) made x86-64's.
	amd := bytes.Clone(exe)
	binary.LittleEndian.PutUint32(amd[4:], uint32(macho.CpuAmd64))
	_, err = check(t, "macos-arm64", amd, Options{})
	wantErr(t, err, "want arm64")
}

func TestCodeDirectory(t *testing.T) {
	blob := func(flags uint32) []byte {
		be := binary.BigEndian
		b := make([]byte, 12+8+16)
		be.PutUint32(b, csMagicEmbedded)
		be.PutUint32(b[8:], 1)
		be.PutUint32(b[16:], 20)
		be.PutUint32(b[20:], csMagicCodeDir)
		be.PutUint32(b[32:], flags)
		return b
	}
	if adhoc, err := codeDirectoryAdhoc(blob(csAdhoc)); err != nil || !adhoc {
		t.Errorf("ad hoc flags: %v %v", adhoc, err)
	}
	if adhoc, err := codeDirectoryAdhoc(blob(0)); err != nil || adhoc {
		t.Errorf("certificate flags: %v %v", adhoc, err)
	}
	if _, err := codeDirectoryAdhoc([]byte("not a signature")); err == nil {
		t.Error("garbage taken for a signature")
	}
	b := blob(csAdhoc)
	binary.BigEndian.PutUint32(b[20:], 0x12345678)
	if _, err := codeDirectoryAdhoc(b); err == nil {
		t.Error("a superblob without a code directory taken for a signature")
	}
}

func TestPE(t *testing.T) {
	exe := build(t, "windows", "amd64")
	rep, err := check(t, "windows-x64", exe, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep, "PE x86-64 console executable") || !strings.Contains(rep, "kernel32.dll") {
		t.Errorf("report %q", rep)
	}
	_, err = check(t, "windows-x64", exe, Options{Lib: true})
	wantErr(t, err, "DLL: false, want true")

	foreign := replace(t, exe, "kernel32.dll", "kernelzz.dll")
	_, err = check(t, "windows-x64", foreign, Options{})
	wantErr(t, err, "imports DLLs Windows does not ship: kernelzz.dll")
	if _, err := check(t, "windows-x64", foreign, Options{With: []string{"kernelzz.dll"}}); err != nil {
		t.Errorf("a DLL shipped beside the program is refused: %v", err)
	}

	gui := build(t, "windows", "amd64", "-H", "windowsgui")
	_, err = check(t, "windows-x64", gui, Options{})
	wantErr(t, err, "want the console")

	// The COFF header's machine (after the "PE\0\0" the offset at 0x3c
	// points to) made ARM64's.
	arm := bytes.Clone(exe)
	binary.LittleEndian.PutUint16(arm[binary.LittleEndian.Uint32(exe[0x3c:])+4:], pe.IMAGE_FILE_MACHINE_ARM64)
	_, err = check(t, "windows-x64", arm, Options{})
	wantErr(t, err, "want x86-64")
}

func TestELF(t *testing.T) {
	exe := build(t, "linux", "arm64")
	rep, err := check(t, "linux-arm64", exe, Options{GlibcMax: "2.28"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep, "EM_AARCH64") || !strings.Contains(rep, "glibc (none)") {
		t.Errorf("report %q", rep)
	}
	_, err = check(t, "linux-x64", exe, Options{})
	wantErr(t, err, "want EM_X86_64")

	// A dynamically linked glibc program of this machine's.
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return
	}
	sys, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Fatalf("reading /bin/true: %v", err)
	}
	rep, err = check(t, "linux-x64", sys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep, "libc.so.6") || !strings.Contains(rep, "glibc 2.") {
		t.Errorf("report %q", rep)
	}
	_, err = check(t, "linux-x64", sys, Options{GlibcMax: "2.0"})
	wantErr(t, err, "newer than the floor 2.0")
	_, err = check(t, "linux-x64", replace(t, sys, "libc.so.6", "libz.so.6"), Options{})
	wantErr(t, err, "needs libraries outside glibc: libz.so.6")
}

func TestVersionLess(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"", "2.2.5", true}, {"2.2.5", "", false}, {"2.17", "2.28", true}, {"2.28", "2.3", false},
		{"2.3", "2.28", true}, {"2.28", "2.28", false}, {"2.28", "2.28.1", true},
	} {
		if got := versionLess(tc.a, tc.b); got != tc.want {
			t.Errorf("versionLess(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
}

func TestUnknownPlatform(t *testing.T) {
	_, err := Check("plan9-x64", os.Args[0], Options{})
	wantErr(t, err, `unknown platform "plan9-x64"`)
}

// TestFloor checks the oldest OS release reported for a package's tag: the
// newest glibc symbol version of a Linux program, the minimum macOS of a
// Mach-O one (Go's linker writes its own minimum, 11 or later for
// darwin/arm64), none for Windows.
func TestFloor(t *testing.T) {
	write := func(b []byte) string {
		path := filepath.Join(t.TempDir(), "bin")
		if err := os.WriteFile(path, b, 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	rep, err := Check("macos-arm64", write(build(t, "darwin", "arm64")), Options{})
	if err != nil || rep.Floor == "" || versionLess(rep.Floor, "11.0") || !strings.Contains(rep.Text, "macOS "+rep.Floor+" or later") {
		t.Errorf("macOS floor %q (%v), want 11.0 or later, as the report %q says", rep.Floor, err, rep.Text)
	}
	rep, err = Check("windows-x64", write(build(t, "windows", "amd64")), Options{})
	if err != nil || rep.Floor != "" {
		t.Errorf("Windows floor %q (%v), want none", rep.Floor, err)
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return
	}
	rep, err = Check("linux-x64", "/bin/true", Options{})
	if err != nil || !strings.HasPrefix(rep.Floor, "2.") {
		t.Fatalf("/bin/true floor %q (%v), want 2.x", rep.Floor, err)
	}
	if !strings.Contains(rep.Text, "glibc "+rep.Floor+" or later") {
		t.Errorf("floor %q disagrees with the report %q", rep.Floor, rep.Text)
	}
}
