package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// An -out that is the checkout, or holds it, however it is named, is
// refused before anything is emptied. (`-out ..` deleted the checkout,
// .git included.)
func TestAnOutThatHoldsTheCheckoutIsRefused(t *testing.T) {
	top := testtemp.Dir(t)
	root := filepath.Join(top, "..cache", "checkout")
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(top, "..cache"), filepath.Join(top, "link")); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{root, filepath.Dir(root), top, root + "/.", filepath.Join(top, "link")} {
		if err := run(options{root: root, out: out}, nil); err == nil || !strings.Contains(err.Error(), "holds the checkout") {
			t.Errorf("-out %s: %v", out, err)
		}
	}
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		t.Fatalf("the checkout is gone: %v", err)
	}
	if err := outside(root, filepath.Join(root, "dist")); err != nil {
		t.Errorf("dist inside the checkout: %v", err)
	}
	if err := outside(root, root+"-dist"); err != nil {
		t.Errorf("a sibling named like the checkout: %v", err)
	}
}

// An -out that holds what no release makes, or is a file, is refused
// before anything is emptied; an earlier release's directory is emptied.
// (-out ~/bin deleted the user's programs.)
func TestAnOutHoldingWhatNoReleaseMakesIsRefused(t *testing.T) {
	top := testtemp.Dir(t)
	root, kept := filepath.Join(top, "checkout"), filepath.Join(top, "bin")
	for _, dir := range []string{root, kept} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	keep := filepath.Join(kept, "tool")
	if err := os.WriteFile(keep, []byte("a program of the user's"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{kept, keep} {
		if err := run(options{root: root, out: out}, nil); err == nil || !strings.Contains(err.Error(), "-out "+out) {
			t.Errorf("-out %s: %v", out, err)
		}
	}
	if data, err := os.ReadFile(keep); err != nil || string(data) != "a program of the user's" {
		t.Fatalf("the user's file is gone: %q %v", data, err)
	}
	earlier := filepath.Join(top, "dist")
	for _, name := range []string{"npm", "bin", "SHA256SUMS", "majordomus-mcp.rb", "majordomus-mcp.json", "majordomus-mcp_1.0.0_linux_amd64.tar.gz", "majordomus-mcp_1.0.0_windows_arm64.zip"} {
		if err := os.MkdirAll(filepath.Join(earlier, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := onlyReleased(earlier); err != nil {
		t.Errorf("an earlier release's directory: %v", err)
	}
}

// A target's build asks for every processor of its architecture, whatever
// the packager's environment says: the last setting is the one go reads.
func TestTheBuildIgnoresThePackagersProcessorLevel(t *testing.T) {
	t.Setenv("GOAMD64", "v3")
	t.Setenv("GOEXPERIMENT", "nosynchashtriemap")
	t.Setenv("GOFIPS140", "latest")
	env := target{"linux", "amd64"}.env()
	last := func(key string) string {
		for j := len(env) - 1; j >= 0; j-- {
			if v, ok := strings.CutPrefix(env[j], key+"="); ok {
				return v
			}
		}
		return "(unset)"
	}
	if got := last("GOAMD64"); got != "v1" {
		t.Errorf("GOAMD64 is %s", got)
	}
	if got := last("GOEXPERIMENT"); got != "" {
		t.Errorf("GOEXPERIMENT is %s", got)
	}
	if got := last("GOFIPS140"); got != "off" {
		t.Errorf("GOFIPS140 is %s", got)
	}
}

// A tree with changes no commit holds is not released: its archives would
// carry the commit's version with other bytes.
func TestAChangedTreeIsNotReleased(t *testing.T) {
	root := testtemp.Dir(t)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q")
	git("config", "status.showUntrackedFiles", "no") // a setting that hides what the build takes
	write(".gitignore", "/dist/\n")
	write("go.mod", "module example.com/m\n")
	write("main.go", "package main\n")
	git("add", ".")
	git("commit", "-qm", "first")
	if err := os.Mkdir(filepath.Join(root, "dist"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := committed(root); err != nil {
		t.Fatalf("a committed tree (an ignored dist/ beside it): %v", err)
	}
	write("main.go", "package main // changed\n")
	if err := committed(root); err == nil || !strings.Contains(err.Error(), "main.go") {
		t.Errorf("a changed file: %v", err)
	}
	git("checkout", "--", "main.go")
	write("extra.go", "package main\n")
	if err := committed(root); err == nil || !strings.Contains(err.Error(), "extra.go") {
		t.Errorf("an untracked file: %v", err)
	}
	if err := os.WriteFile(filepath.Join(root, ".git", "info", "exclude"), []byte("extra.go\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := committed(root); err == nil || !strings.Contains(err.Error(), "extra.go") {
		t.Errorf("an ignored Go file: %v", err)
	}
	if err := os.Remove(filepath.Join(root, "extra.go")); err != nil {
		t.Fatal(err)
	}
	git("update-index", "--assume-unchanged", "main.go")
	write("main.go", "package main // hidden\n")
	if err := committed(root); err == nil || !strings.Contains(err.Error(), "main.go") {
		t.Errorf("a change git was told not to look at: %v", err)
	}
}

// A file a package embeds is released only as committed, even where git
// ignores it: a global excludes file's .DS_Store, or an ignored directory,
// under an all: directory the build embeds. (The archive carried it, its
// binary claiming the commit's clean revision.)
func TestAnIgnoredFileTheBuildEmbedsIsNotReleased(t *testing.T) {
	root := testtemp.Dir(t)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, text string) {
		t.Helper()
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q")
	write("go.mod", "module example.com/m\n\ngo 1.22\n")
	write("main.go", "package main\n\nimport \"embed\"\n\n//go:embed all:layer\nvar layer embed.FS\n\nfunc main() { _ = layer }\n")
	write("layer/rule.md", "a rule\n")
	git("add", ".")
	git("commit", "-qm", "first")
	write(".git/info/exclude", ".DS_Store\nlocal/\nnotes.txt\n")
	write("notes.txt", "not built\n")
	if err := committed(root); err != nil {
		t.Fatalf("a committed tree (an ignored file the build does not take beside it): %v", err)
	}
	write("layer/.DS_Store", "finder state")
	if err := committed(root); err == nil || !strings.Contains(err.Error(), "layer/.DS_Store") {
		t.Errorf("an ignored file the build embeds: %v", err)
	}
	if err := os.Remove(filepath.Join(root, "layer", ".DS_Store")); err != nil {
		t.Fatal(err)
	}
	write("layer/local/state.json", "{}")
	if err := committed(root); err == nil || !strings.Contains(err.Error(), "layer/local/state.json") {
		t.Errorf("a file of an ignored directory the build embeds: %v", err)
	}
}
