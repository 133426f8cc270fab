package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vault-rag/vault-rag/internal/clientconfig"
)

// The bundle is found in a checkout's dist/, beside the extracted archive,
// or in the archive's folder: the newest when there are several.
func TestFindBundle(t *testing.T) {
	dir := t.TempDir()
	mk := func(rel string, age time.Duration) string {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		when := time.Now().Add(-age)
		if err := os.Chtimes(p, when, when); err != nil {
			t.Fatal(err)
		}
		return p
	}
	checkoutExe := mk("checkout/bin/vault-rag", 0)
	mk("checkout/dist/vault-rag-v1.mcpb", 2*time.Hour)
	newest := mk("checkout/dist/vault-rag-v2.mcpb", time.Hour)
	mk("checkout/dist/other.mcpb", 0) // not ours
	downloadsExe := mk("Downloads/vault-rag/bin/vault-rag.exe", 0)
	beside := mk("Downloads/vault-rag-1.0.0.mcpb", 0)
	inside := mk("opt/vault-rag/vault-rag-1.0.0.mcpb", 0)
	optExe := mk("opt/vault-rag/bin/vault-rag", 0)
	bareExe := mk("bare/vault-rag/bin/vault-rag", 0)
	mk("bare/vault-rag/bin/vault-rag-0.mcpb/keep", 0) // a folder, not a bundle
	for _, tc := range []struct{ exe, want string }{
		{checkoutExe, newest},
		{downloadsExe, beside},
		{optExe, inside},
		{bareExe, ""},
		{"", ""},
	} {
		if got := findBundle(tc.exe); got != tc.want {
			t.Errorf("findBundle(%s) = %q, want %q", tc.exe, got, tc.want)
		}
	}
}

// connect claude-desktop names the bundle as the one-click route when there
// is one, else where to get it, and on Linux that Claude Desktop has no
// build there.
func TestBundleRoute(t *testing.T) {
	for _, tc := range []struct {
		bundle, goos string
		want         []string
		not          []string
	}{
		{"/x/vault-rag-1.0.0.mcpb", "darwin", []string{"open /x/vault-rag-1.0.0.mcpb with Claude Desktop", "vault folder", "Or by hand:"}, []string{"Linux"}},
		{`C:\dl\vault-rag-1.0.0.mcpb`, "windows", []string{`open C:\dl\vault-rag-1.0.0.mcpb`}, []string{"Linux"}},
		{"", "windows", []string{"vault-rag-VERSION.mcpb", "make mcpb", "Or by hand:"}, nil},
		{"/x/vault-rag-1.0.0.mcpb", "linux", []string{"open /x/vault-rag-1.0.0.mcpb", "no official Linux build"}, nil},
	} {
		got := bundleRoute(tc.bundle, clientconfig.Host{GOOS: tc.goos, Env: func(string) string { return "" }})
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("bundleRoute(%q, %s) does not say %q:\n%s", tc.bundle, tc.goos, w, got)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(got, w) {
				t.Errorf("bundleRoute(%q, %s) says %q:\n%s", tc.bundle, tc.goos, w, got)
			}
		}
	}
}
