package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// defaultBaseURL is where GitHub serves a release's assets.
const defaultBaseURL = "https://github.com/majordomus-mcp/majordomus-mcp/releases/download/v{version}"

// releaseBuildFlags are the go build flags of a release binary: no build
// machine paths in it, the commit stamped (what `version` prints), and no
// DWARF or symbol table, which stack traces do not need (a tenth less CPU).
// -c=1 keeps each compile on one thread: buildAll runs two builds at once,
// which keeps the cores busy more cheaply.
var releaseBuildFlags = []string{"-trimpath", "-buildvcs=true", "-ldflags=-s -w", "-gcflags=all=-dwarf=false -c=1"}

type options struct {
	root       string // the module's root
	out        string
	version    string
	baseURL    string
	targets    []target
	buildFlags []string
	mtime      time.Time
}

// outside refuses an out that is, or holds, the checkout at root, which
// emptying it would delete: judged by the directories themselves
// (os.SameFile), whatever links or letter case name them.
func outside(root, out string) error {
	o, err := os.Stat(out)
	if err != nil {
		return nil // nothing there to empty
	}
	r, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	if real, err := filepath.EvalSymlinks(r); err == nil {
		r = real
	}
	for d := r; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && os.SameFile(fi, o) {
			return fmt.Errorf("-out %s holds the checkout, which emptying it would delete", out)
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}

// onlyReleased refuses an out that is not a directory, or that holds
// anything a release does not make: emptying it would delete what the
// packager keeps there (a mistyped -out ~/bin). An earlier release's
// directory, or one a failed run left, is emptied.
func onlyReleased(out string) error {
	fi, err := os.Stat(out)
	if err != nil {
		return nil // nothing there to empty
	}
	if !fi.IsDir() {
		return fmt.Errorf("-out %s is not a directory", out)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		return fmt.Errorf("read -out %s: %w", out, err)
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == "bin" || name == "npm" || name == "SHA256SUMS" || name == "majordomus-mcp.rb" || name == "majordomus-mcp.json":
		case strings.HasPrefix(name, "majordomus-mcp_") && (strings.HasSuffix(name, ".tar.gz") || strings.HasSuffix(name, ".zip")):
		default:
			return fmt.Errorf("-out %s holds %s, which no release makes: emptying it would delete it; name a new or a release's directory", out, name)
		}
	}
	return nil
}

// artifact is one target's archive, as the formula and manifest name it.
type artifact struct {
	target target
	name   string // file name in out
	sha256 string
}

// run makes the whole release into o.out.
func run(o options, progress io.Writer) error {
	if err := outside(o.root, o.out); err != nil {
		return err
	}
	if err := onlyReleased(o.out); err != nil {
		return err
	}
	if err := os.RemoveAll(o.out); err != nil {
		return fmt.Errorf("empty %s: %w", o.out, err)
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return fmt.Errorf("make %s: %w", o.out, err)
	}
	common, err := readCommon(o.root)
	if err != nil {
		return err
	}
	bins := filepath.Join(o.out, "bin")
	if err := buildAll(o, bins); err != nil {
		return err
	}
	var arts []artifact
	for _, t := range o.targets {
		bin := filepath.Join(bins, t.String(), t.binaryName())
		notices, err := thirdPartyNotices(o.root, t, o.version, bin)
		if err != nil {
			return err
		}
		exe, err := os.ReadFile(bin)
		if err != nil {
			return fmt.Errorf("read the %s binary: %w", t, err)
		}
		files := append([]member{{name: t.binaryName(), mode: 0o755, data: exe}}, common...)
		files = append(files, member{name: "THIRD_PARTY_NOTICES", mode: 0o644, data: notices})
		name := t.archiveName(o.version)
		sum, err := writeArchive(filepath.Join(o.out, name), t.os == "windows", files, o.mtime)
		if err != nil {
			return err
		}
		arts = append(arts, artifact{target: t, name: name, sha256: sum})
		if err := writeNPMPlatform(filepath.Join(o.out, "npm"), t, o.version, exe, common, notices); err != nil {
			return err
		}
		fmt.Fprintf(progress, "%s: %s\n", t, name)
	}
	base := strings.ReplaceAll(o.baseURL, "{version}", o.version)
	writes := []struct {
		name string
		data []byte
	}{
		{"SHA256SUMS", sha256Sums(arts)},
		{"majordomus-mcp.rb", homebrewFormula(o.version, base, arts)},
		{"majordomus-mcp.json", scoopManifest(o.version, o.baseURL, arts)},
	}
	for _, w := range writes {
		if err := os.WriteFile(filepath.Join(o.out, w.name), w.data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", w.name, err)
		}
	}
	if err := writeNPMMain(filepath.Join(o.out, "npm"), o.version, o.targets, common); err != nil {
		return err
	}
	if err := os.RemoveAll(bins); err != nil {
		return fmt.Errorf("remove the build directory: %w", err)
	}
	return nil
}

// readCommon reads the files every archive and package carries besides the
// binary and its notices.
func readCommon(root string) ([]member, error) {
	var m []member
	for _, name := range []string{"README.md", "LICENSE", "NOTICE"} {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		m = append(m, member{name: name, mode: 0o644, data: data})
	}
	return m, nil
}
