// Command binchk checks a built vault-rag binary, or the ONNX Runtime library
// shipped beside it, for the platform it is meant for, with Go's own object
// file readers (debug/elf, debug/macho, debug/pe), so the check runs on the
// build machine whatever the target:
//
//	go run ./scripts/binchk [-lib] [-glibc 2.28] [-with a.dll,b.dll] PLATFORM FILE
//
// A binary must be of the platform's format and CPU and ask the system for
// nothing a bare install of that OS lacks: on Linux only glibc's libraries
// (and no symbol version above -glibc), on macOS only /usr/lib and
// /System/Library, and carry a code signature (Apple silicon runs no
// unsigned code), on Windows only the DLLs Windows itself ships. With -lib
// the file is ONNX Runtime's library: format, CPU and kind are checked and
// its dependencies reported. It prints one line of findings and exits 1 on
// the first problem. With -floor it prints only the oldest OS release the
// file runs on, as a version (the newest glibc symbol version on Linux, the
// minimum macOS on macOS, nothing on Windows), for a package's platform tag.
package main

import (
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
)

func main() {
	lib := flag.Bool("lib", false, "FILE is the ONNX Runtime shared library, not the executable")
	glibc := flag.String("glibc", "", "the newest glibc symbol version a Linux binary may need (e.g. 2.28)")
	with := flag.String("with", "", "Windows: comma-separated DLLs the archive ships beside the program, allowed as imports")
	floor := flag.Bool("floor", false, "print only the oldest OS version the file needs: glibc X.Y (Linux), macOS X.Y (macOS), empty (Windows)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: binchk [-lib] [-glibc X.Y] [-with a.dll,b.dll] [-floor] PLATFORM FILE (PLATFORM: linux-x64 linux-arm64 macos-arm64 windows-x64)")
	}
	flag.Parse()
	if flag.NArg() != 2 {
		flag.Usage()
		os.Exit(2)
	}
	platform, path := flag.Arg(0), flag.Arg(1)
	rep, err := Check(platform, path, Options{Lib: *lib, GlibcMax: *glibc, With: strings.Split(*with, ",")})
	if err != nil {
		fmt.Fprintf(os.Stderr, "binchk: %s: %v\n", path, err)
		os.Exit(1)
	}
	if *floor {
		fmt.Println(rep.Floor)
		return
	}
	fmt.Printf("binchk: %s (%s): %s\n", path, platform, rep.Text)
}

// Report is what Check found: one line for a person, and the oldest release
// of its OS the file runs on ("" when it does not say: Windows).
type Report struct {
	Text  string
	Floor string
}

// Options say what kind of file is checked and how strictly.
type Options struct {
	Lib      bool     // the ONNX Runtime library rather than the executable
	GlibcMax string   // Linux: the newest GLIBC_ version allowed ("" = any)
	With     []string // Windows: DLLs shipped beside the program, allowed as imports
}

// Check opens path and checks it for platform.
func Check(platform, path string, o Options) (Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return Report{}, fmt.Errorf("opening the file: %w", err)
	}
	defer f.Close()
	switch platform {
	case "linux-x64":
		return checkELF(f, elf.EM_X86_64, o)
	case "linux-arm64":
		return checkELF(f, elf.EM_AARCH64, o)
	case "macos-arm64":
		return checkMachO(f, o)
	case "windows-x64":
		return checkPE(f, o)
	}
	return Report{}, fmt.Errorf("unknown platform %q", platform)
}

// glibcLibs are the libraries of glibc itself (and the GCC runtime every
// glibc system has): all a Linux binary may link.
var glibcLibs = map[string]bool{
	"libc.so.6": true, "libm.so.6": true, "libpthread.so.0": true, "libdl.so.2": true,
	"librt.so.1": true, "libresolv.so.2": true, "libgcc_s.so.1": true, "libstdc++.so.6": true,
	"ld-linux-x86-64.so.2": true, "ld-linux-aarch64.so.1": true,
}

func checkELF(r io.ReaderAt, machine elf.Machine, o Options) (Report, error) {
	f, err := elf.NewFile(r)
	if err != nil {
		return Report{}, fmt.Errorf("not an ELF file: %w", err)
	}
	if f.Machine != machine {
		return Report{}, fmt.Errorf("ELF for %v, want %v", f.Machine, machine)
	}
	want := elf.ET_EXEC
	if o.Lib {
		want = elf.ET_DYN
	}
	// A position-independent executable is ET_DYN too.
	if f.Type != want && !(f.Type == elf.ET_DYN && !o.Lib) {
		return Report{}, fmt.Errorf("ELF type %v, want %v", f.Type, want)
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		return Report{}, fmt.Errorf("reading the needed libraries: %w", err)
	}
	sort.Strings(libs)
	var bad []string
	for _, l := range libs {
		if !glibcLibs[l] {
			bad = append(bad, l)
		}
	}
	if len(bad) > 0 && !o.Lib {
		return Report{}, fmt.Errorf("needs libraries outside glibc: %s", strings.Join(bad, ", "))
	}
	syms, err := f.ImportedSymbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return Report{}, fmt.Errorf("reading the imported symbols: %w", err)
	}
	newest := ""
	for _, s := range syms {
		if v, ok := strings.CutPrefix(s.Version, "GLIBC_"); ok && versionLess(newest, v) {
			newest = v
		}
	}
	if o.GlibcMax != "" && versionLess(o.GlibcMax, newest) {
		return Report{}, fmt.Errorf("needs glibc %s, newer than the floor %s", newest, o.GlibcMax)
	}
	interp := ""
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b, _ := io.ReadAll(p.Open())
			interp = strings.TrimRight(string(b), "\x00")
		}
	}
	rep := fmt.Sprintf("ELF %v %v; needs %s; glibc %s or later", f.Machine, f.Type, strings.Join(libs, " "), orNone(newest))
	if interp != "" {
		rep += "; interpreter " + interp
	}
	return Report{Text: rep, Floor: newest}, nil
}

// versionLess compares dotted versions numerically; "" is below all.
func versionLess(a, b string) bool {
	if a == "" {
		return b != ""
	}
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// Mach-O load commands and code signature magics debug/macho has no names
// for (<mach-o/loader.h>, <kern/cs_blobs.h>).
const (
	lcCodeSignature = 0x1d
	lcBuildVersion  = 0x32
	csMagicEmbedded = 0xfade0cc0
	csMagicCodeDir  = 0xfade0c02
	csAdhoc         = 0x2
)

func checkMachO(r io.ReaderAt, o Options) (Report, error) {
	f, err := macho.NewFile(r)
	if err != nil {
		return Report{}, fmt.Errorf("not a thin Mach-O file: %w", err)
	}
	if f.Cpu != macho.CpuArm64 {
		return Report{}, fmt.Errorf("Mach-O for %v, want arm64", f.Cpu)
	}
	want := macho.TypeExec
	if o.Lib {
		want = macho.TypeDylib
	}
	if f.Type != want {
		return Report{}, fmt.Errorf("Mach-O type %v, want %v", f.Type, want)
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		return Report{}, fmt.Errorf("reading the linked libraries: %w", err)
	}
	sort.Strings(libs)
	for _, l := range libs {
		if !strings.HasPrefix(l, "/usr/lib/") && !strings.HasPrefix(l, "/System/Library/") {
			return Report{}, fmt.Errorf("links %s, which is not a system library (only /usr/lib and /System/Library are on every Mac)", l)
		}
	}
	minos := ""
	var sig []byte
	for _, l := range f.Loads {
		raw := l.Raw()
		if len(raw) < 16 {
			continue
		}
		switch f.ByteOrder.Uint32(raw) {
		case lcBuildVersion:
			v := f.ByteOrder.Uint32(raw[12:])
			minos = fmt.Sprintf("%d.%d", v>>16, v>>8&0xff)
		case lcCodeSignature:
			off, size := f.ByteOrder.Uint32(raw[8:]), f.ByteOrder.Uint32(raw[12:])
			sig = make([]byte, size)
			if _, err := r.ReadAt(sig, int64(off)); err != nil {
				return Report{}, fmt.Errorf("reading the code signature: %w", err)
			}
		}
	}
	signed := "unsigned"
	if sig != nil {
		adhoc, err := codeDirectoryAdhoc(sig)
		if err != nil {
			return Report{}, err
		}
		signed = "signed"
		if adhoc {
			signed = "ad-hoc signed"
		}
	} else if !o.Lib {
		return Report{}, errors.New("no LC_CODE_SIGNATURE: macOS on Apple silicon kills unsigned executables")
	}
	return Report{Text: fmt.Sprintf("Mach-O arm64 %v, macOS %s or later, %s; links %s", f.Type, orNone(minos), signed, strings.Join(libs, " ")), Floor: minos}, nil
}

// codeDirectoryAdhoc reads an embedded signature superblob (big-endian) and
// reports whether its code directory is ad hoc (no certificate).
func codeDirectoryAdhoc(sig []byte) (bool, error) {
	be := binary.BigEndian
	if len(sig) < 12 || be.Uint32(sig) != csMagicEmbedded {
		return false, errors.New("the code signature is not an embedded signature superblob")
	}
	n := be.Uint32(sig[8:])
	for i := uint32(0); i < n; i++ {
		at := 12 + 8*int(i)
		if at+8 > len(sig) {
			break
		}
		off := int(be.Uint32(sig[at+4:]))
		if off+16 > len(sig) || be.Uint32(sig[off:]) != csMagicCodeDir {
			continue
		}
		return be.Uint32(sig[off+12:])&csAdhoc != 0, nil
	}
	return false, errors.New("the code signature has no code directory")
}

// windowsDLLs are the DLLs of Windows itself that a Go or mingw program
// imports. The api-ms-win-crt-* sets are the Universal C Runtime, part of
// Windows since 10.
var windowsDLLs = map[string]bool{
	"kernel32.dll": true, "ntdll.dll": true, "advapi32.dll": true, "user32.dll": true,
	"ws2_32.dll": true, "winmm.dll": true, "shell32.dll": true, "ole32.dll": true,
	"oleaut32.dll": true, "bcrypt.dll": true, "bcryptprimitives.dll": true, "crypt32.dll": true,
	"secur32.dll": true, "iphlpapi.dll": true, "dbghelp.dll": true, "setupapi.dll": true,
	"shlwapi.dll": true, "userenv.dll": true, "powrprof.dll": true, "msvcrt.dll": true,
	"ucrtbase.dll": true, "netapi32.dll": true, "mswsock.dll": true, "dnsapi.dll": true,
	"synchronization.dll": true, "dxgi.dll": true, "d3d12.dll": true, "version.dll": true,
}

func checkPE(r io.ReaderAt, o Options) (Report, error) {
	f, err := pe.NewFile(r)
	if err != nil {
		return Report{}, fmt.Errorf("not a PE file: %w", err)
	}
	if f.Machine != pe.IMAGE_FILE_MACHINE_AMD64 {
		return Report{}, fmt.Errorf("PE for machine %#x, want x86-64", f.Machine)
	}
	isDLL := f.Characteristics&pe.IMAGE_FILE_DLL != 0
	if isDLL != o.Lib {
		return Report{}, fmt.Errorf("PE is a DLL: %v, want %v", isDLL, o.Lib)
	}
	oh, ok := f.OptionalHeader.(*pe.OptionalHeader64)
	if !ok {
		return Report{}, errors.New("no PE32+ optional header")
	}
	if !o.Lib && oh.Subsystem != pe.IMAGE_SUBSYSTEM_WINDOWS_CUI {
		return Report{}, fmt.Errorf("subsystem %d, want the console (%d): an MCP server talks over stdio", oh.Subsystem, pe.IMAGE_SUBSYSTEM_WINDOWS_CUI)
	}
	// debug/pe's ImportedLibraries is unimplemented; each imported symbol
	// reads "name:dll".
	syms, err := f.ImportedSymbols()
	if err != nil {
		return Report{}, fmt.Errorf("reading the imported symbols: %w", err)
	}
	set := map[string]bool{}
	for _, s := range syms {
		if _, dll, ok := strings.Cut(s, ":"); ok {
			set[strings.ToLower(dll)] = true
		}
	}
	var names, bad []string
	for l := range set {
		names = append(names, l)
		if !windowsDLLs[l] && !strings.HasPrefix(l, "api-ms-win-") && !slices.Contains(o.With, l) {
			bad = append(bad, l)
		}
	}
	sort.Strings(names)
	sort.Strings(bad)
	if len(bad) > 0 {
		return Report{}, fmt.Errorf("imports DLLs Windows does not ship: %s", strings.Join(bad, ", "))
	}
	kind := "console executable"
	if o.Lib {
		kind = "DLL"
	}
	return Report{Text: fmt.Sprintf("PE x86-64 %s; imports %s", kind, strings.Join(names, " "))}, nil
}
