package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// A release made for the host and one other system, checked as packagers
// and users take it. One run serves every check (each run links two
// binaries).
func TestARelease(t *testing.T) {
	r := makeRelease(t)
	t.Run("archives", func(t *testing.T) { checkEachArchiveHoldsTheBinaryItsLicenseAndItsNotices(t, r) })
	t.Run("homebrew", func(t *testing.T) { checkTheFormulaPointsAtEachArchiveWithItsSum(t, r) })
	t.Run("scoop", func(t *testing.T) { checkTheScoopManifestPointsAtEachArchiveWithItsSum(t, r) })
	t.Run("npm", func(t *testing.T) { checkTheNPMPackagesNameEachPlatformsBinary(t, r) })
}

// released is one test run of the release.
type released struct {
	dir     string
	version string
	base    string
	targets []target
	sums    map[string]string // archive name → sha256, from SHA256SUMS
}

// testTargets are the host and one target of another system, so that both
// archive forms (tar.gz and zip) and both package managers' files are made.
func testTargets(t testing.TB) []target {
	host, err := parseTarget(runtime.GOOS + "/" + runtime.GOARCH)
	if err != nil {
		t.Fatalf("the host is no release target: %v", err)
	}
	other := target{"windows", "amd64"}
	if host.os == "windows" {
		other = target{"linux", "amd64"}
	}
	return []target{host, other}
}

// scratch is the package's test directory: the one release every test
// reads, and the npm prefix the npm tests install it into.
var scratch string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dist-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	scratch = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var made struct {
	sync.Once
	r   released
	err error
}

// makeRelease runs the release program's pipeline, once per test binary
// (its readers do not change it), into the package's scratch directory.
// Its builds use the go command's default flags rather than the release's
// -trimpath, whose first build compiles everything again: the binaries
// built by CI's platform step are reused, and what is
// checked — what goes into each archive and package, and what names it — is
// the same.
func makeRelease(t testing.TB) released {
	t.Helper()
	targets := testTargets(t)
	made.Do(func() { made.r, made.err = makeReleaseIn(scratch, targets) })
	if made.err != nil {
		t.Fatal(made.err)
	}
	return made.r
}

func makeReleaseIn(dir string, targets []target) (released, error) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		return released{}, err
	}
	r := released{dir: filepath.Join(dir, "dist"), version: "9.8.7", base: "https://example.invalid/download/v9.8.7", targets: targets}
	o := options{root: root, out: r.dir, version: r.version, baseURL: "https://example.invalid/download/v{version}",
		targets: r.targets, mtime: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)}
	var progress bytes.Buffer
	if err := run(o, &progress); err != nil {
		return r, fmt.Errorf("release: %w\n%s", err, progress.String())
	}
	sums, err := os.ReadFile(filepath.Join(r.dir, "SHA256SUMS"))
	if err != nil {
		return r, err
	}
	r.sums = map[string]string{}
	for line := range strings.Lines(string(sums)) {
		sum, name, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "  ")
		if !ok || len(sum) != 64 {
			return r, fmt.Errorf("SHA256SUMS line %q is not `sum  name`", line)
		}
		r.sums[name] = sum
	}
	return r, nil
}

func readFile(t *testing.T, parts ...string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(parts...))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// extract reads every member of a .tar.gz or .zip: name → content and mode.
func extract(t *testing.T, path string) (names []string, files map[string][]byte, modes map[string]os.FileMode) {
	t.Helper()
	files, modes = map[string][]byte{}, map[string]os.FileMode{}
	if strings.HasSuffix(path, ".zip") {
		zr, err := zip.OpenReader(path)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, f.Name)
			files[f.Name], modes[f.Name] = data, f.Mode().Perm()
		}
		return names, files, modes
	}
	gz, err := gzip.NewReader(bytes.NewReader(readFile(t, path)))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		files[h.Name], modes[h.Name] = data, os.FileMode(h.Mode).Perm()
	}
	return names, files, modes
}

// Each target's archive is in SHA256SUMS with its real sum, and holds the
// binary (executable), README.md, LICENSE, NOTICE and the notices of every
// module the binary's own build information says it links; the host's
// binary runs and says the release's version.
func checkEachArchiveHoldsTheBinaryItsLicenseAndItsNotices(t *testing.T, r released) {
	if len(r.sums) != len(r.targets) {
		t.Fatalf("SHA256SUMS lists %d archives, want %d: %v", len(r.sums), len(r.targets), r.sums)
	}
	for i, tg := range r.targets {
		name := tg.archiveName(r.version)
		path := filepath.Join(r.dir, name)
		got := sha256.Sum256(readFile(t, path))
		if hex.EncodeToString(got[:]) != r.sums[name] {
			t.Errorf("%s: SHA256SUMS says %q, the file's sum is %x", name, r.sums[name], got)
		}
		names, files, modes := extract(t, path)
		want := []string{tg.binaryName(), "README.md", "LICENSE", "NOTICE", "THIRD_PARTY_NOTICES"}
		if !slices.Equal(names, want) {
			t.Fatalf("%s holds %v, want %v", name, names, want)
		}
		if modes[tg.binaryName()] != 0o755 {
			t.Errorf("%s: the binary's mode is %v, want 0755", name, modes[tg.binaryName()])
		}
		for _, f := range []string{"README.md", "LICENSE", "NOTICE"} {
			if !bytes.Equal(files[f], readFile(t, "../../..", f)) {
				t.Errorf("%s: %s is not the repository's", name, f)
			}
		}
		if !bytes.Contains(files["LICENSE"], []byte("Apache License\n                           Version 2.0, January 2004")) ||
			!bytes.Contains(files["LICENSE"], []byte("APPENDIX: How to apply the Apache License")) {
			t.Errorf("%s: LICENSE is not the full Apache License 2.0", name)
		}
		bin := filepath.Join(t.TempDir(), tg.binaryName())
		if err := os.WriteFile(bin, files[tg.binaryName()], 0o755); err != nil {
			t.Fatal(err)
		}
		checkNotices(t, name, bin, string(files["THIRD_PARTY_NOTICES"]))
		if i == 0 { // the host's
			out, err := exec.Command(bin, "version").Output()
			if err != nil || !strings.HasPrefix(string(out), "majordomus-mcp ") {
				t.Errorf("%s: its binary's version printed %q (%v)", name, out, err)
			}
		}
	}
}

// checkNotices checks that notices lists and carries a license for the Go
// standard library and for every module `go version -m` reads from the
// binary itself.
func checkNotices(t *testing.T, archive, bin, notices string) {
	t.Helper()
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	deps := 0
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != "dep" {
			continue
		}
		deps++
		if !strings.Contains(notices, "\n  "+f[1]+" "+f[2]+"\n") {
			t.Errorf("%s: THIRD_PARTY_NOTICES does not list %s %s", archive, f[1], f[2])
		}
		if !strings.Contains(notices, "\n"+f[1]+" "+f[2]+": LICENSE") && !strings.Contains(notices, "\n"+f[1]+" "+f[2]+": COPYING") {
			t.Errorf("%s: THIRD_PARTY_NOTICES carries no license text of %s %s", archive, f[1], f[2])
		}
	}
	if deps < 5 {
		t.Fatalf("%s: go version -m lists %d modules; the reading is wrong:\n%s", archive, deps, out)
	}
	if !regexp.MustCompile(`\nGo standard library go[0-9.]+: LICENSE\n`).MatchString(notices) ||
		!strings.Contains(notices, "Copyright 2009 The Go Authors") {
		t.Errorf("%s: THIRD_PARTY_NOTICES lacks the Go standard library's license", archive)
	}
}

// The Homebrew formula names, per system and processor, the URL of that
// archive under the base URL with the sum SHA256SUMS gives it.
func checkTheFormulaPointsAtEachArchiveWithItsSum(t *testing.T, r released) {
	formula := string(readFile(t, r.dir, "majordomus-mcp.rb"))
	block := regexp.MustCompile(`(?s)  (on_macos|on_linux) do\n(.*?)\n  end\n`)
	arch := regexp.MustCompile(`(?s)    (on_arm|on_intel) do\n      url "([^"]+)"\n      sha256 "([0-9a-f]{64})"\n    end`)
	osOf := map[string]string{"on_macos": "darwin", "on_linux": "linux"}
	archOf := map[string]string{"on_arm": "arm64", "on_intel": "amd64"}
	named := 0
	for _, b := range block.FindAllStringSubmatch(formula, -1) {
		for _, a := range arch.FindAllStringSubmatch(b[2], -1) {
			name := target{osOf[b[1]], archOf[a[1]]}.archiveName(r.version)
			if a[2] != r.base+"/"+name {
				t.Errorf("%s/%s: url %s, want %s", b[1], a[1], a[2], r.base+"/"+name)
			}
			if a[3] != r.sums[name] {
				t.Errorf("%s/%s: sha256 %s, SHA256SUMS says %s", b[1], a[1], a[3], r.sums[name])
			}
			named++
		}
	}
	want := 0
	for _, tg := range r.targets {
		if tg.os != "windows" {
			want++
		}
	}
	if named != want {
		t.Errorf("the formula names %d archives, want %d:\n%s", named, want, formula)
	}
	for _, line := range []string{"class MajordomusMcp < Formula", `  version "9.8.7"`, `  license "Apache-2.0"`, `    bin.install "majordomus-mcp"`} {
		if !strings.Contains(formula, line+"\n") {
			t.Errorf("the formula lacks %q:\n%s", line, formula)
		}
	}
}

// The npm packages: majordomus-mcp's bin is its launcher and its optional
// dependencies are exactly the platform packages made, each of which is
// for its own os and cpu and holds that target's binary, the archive's.
func checkTheNPMPackagesNameEachPlatformsBinary(t *testing.T, r released) {
	npm := filepath.Join(r.dir, "npm")
	var main packageJSON
	if err := json.Unmarshal(readFile(t, npm, "majordomus-mcp", "package.json"), &main); err != nil {
		t.Fatal(err)
	}
	if main.Name != "majordomus-mcp" || main.Version != r.version || main.License != "Apache-2.0" {
		t.Errorf("package.json: name %q version %q license %q", main.Name, main.Version, main.License)
	}
	launcherPath := filepath.Join(npm, "majordomus-mcp", filepath.FromSlash(main.Bin["majordomus-mcp"]))
	if data := readFile(t, launcherPath); !bytes.HasPrefix(data, []byte("#!/usr/bin/env node\n")) {
		t.Errorf("the bin %s is not a node script", launcherPath)
	}
	if len(main.OptionalDependencies) != len(r.targets) {
		t.Errorf("optionalDependencies %v, want one per target %v", main.OptionalDependencies, r.targets)
	}
	for _, tg := range r.targets {
		goos, cpu := npmPlatform(tg)
		if v := main.OptionalDependencies[npmScope+"/"+goos+"-"+cpu]; v != r.version {
			t.Errorf("optionalDependencies[%s/%s-%s] = %q, want %q", npmScope, goos, cpu, v, r.version)
		}
		dir := filepath.Join(npm, goos+"-"+cpu)
		var p packageJSON
		if err := json.Unmarshal(readFile(t, dir, "package.json"), &p); err != nil {
			t.Fatal(err)
		}
		if p.Name != npmScope+"/"+goos+"-"+cpu || p.Version != r.version || !slices.Equal(p.OS, []string{goos}) || !slices.Equal(p.CPU, []string{cpu}) {
			t.Errorf("%s: package.json name %q version %q os %v cpu %v", dir, p.Name, p.Version, p.OS, p.CPU)
		}
		_, files, _ := extract(t, filepath.Join(r.dir, tg.archiveName(r.version)))
		if !bytes.Equal(readFile(t, dir, "bin", tg.binaryName()), files[tg.binaryName()]) {
			t.Errorf("%s: bin/%s is not the archive's binary", dir, tg.binaryName())
		}
		if fi, err := os.Stat(filepath.Join(dir, "bin", tg.binaryName())); err != nil || fi.Mode().Perm()&0o111 == 0 {
			t.Errorf("%s: the binary is not executable (%v)", dir, err)
		}
	}
}
