// Command dist makes what packagers and users take from a release, into one
// directory (dist/ by default): per target a .tar.gz (Linux, macOS)
// or .zip (Windows) holding the binary, README.md, LICENSE, NOTICE and
// THIRD_PARTY_NOTICES (the licenses of the modules that target's binary
// links); SHA256SUMS over the archives; a Homebrew formula and a Scoop
// manifest that carry those sums; and the npm packages for
// `npx -y majordomus-mcp`. Everything is written by Go itself, so a machine
// with only Go and git makes it, and the archives are byte-for-byte the
// same from the same commit and Go release, whatever GOAMD64, GOARM64 or
// GOEXPERIMENT the environment sets (not what `go env -w` wrote: an
// empty GOEXPERIMENT is read as unset) or GOFIPS140. It refuses a tree
// with changes no commit holds. Its version is the one the binary
// says it is (internal/release.Number).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/release"
)

func main() {
	var o options
	flag.StringVar(&o.out, "out", "dist", "directory to make (an earlier release's is emptied first; one holding anything else is refused)")
	flag.StringVar(&o.baseURL, "base-url", defaultBaseURL, "where the archives are downloaded from; {version} is replaced")
	targets := flag.String("targets", "all", "comma-separated os/arch list, or all")
	flag.Parse()
	o.root = "."
	if err := committed(o.root); err != nil {
		fmt.Fprintln(os.Stderr, "dist:", err)
		os.Exit(1)
	}
	o.version = release.Number // what the binary says it is (internal/release)
	o.buildFlags = releaseBuildFlags
	o.mtime = sourceDate()
	if *targets == "all" {
		o.targets = allTargets
	} else {
		for _, t := range strings.Split(*targets, ",") {
			tg, err := parseTarget(t)
			if err != nil {
				fmt.Fprintln(os.Stderr, "dist:", err)
				os.Exit(2)
			}
			o.targets = append(o.targets, tg)
		}
	}
	if err := run(o, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "dist:", err)
		os.Exit(1)
	}
}

// committed refuses a tree that git sees changed (untracked files too,
// and ignored Go files, which a build compiles all the same, and ignored
// files a package embeds, which a build takes all the same), or whose
// files git was told not to look at (assume-unchanged, skip-worktree): its
// archives would carry the commit's version and time, but not the
// commit's bytes.
func committed(root string) error {
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("git %s: %w", args[0], err)
		}
		return string(out), nil
	}
	embeds, err := embedded(root)
	if err != nil {
		return err
	}
	tracked, err := git(append([]string{"--literal-pathspecs", "ls-files", "-z", "--"}, embeds...)...)
	if err != nil {
		return err
	}
	status, err := git("status", "--porcelain", "--untracked-files=all", "--ignore-submodules=none", "--ignored=matching")
	if err != nil {
		return err
	}
	listed, err := git("ls-files", "-v")
	if err != nil {
		return err
	}
	var changed []string
	for line := range strings.Lines(status) {
		if name, ignored := strings.CutPrefix(line, "!! "); !ignored || strings.HasSuffix(strings.TrimSpace(name), ".go") {
			changed = append(changed, line)
		}
	}
	for line := range strings.Lines(listed) {
		if tag := line[0]; tag == 'S' || 'a' <= tag && tag <= 'z' {
			changed = append(changed, "unwatched "+line[2:])
		}
	}
	known := strings.Split(tracked, "\x00")
	for _, name := range embeds {
		if !slices.Contains(known, name) {
			changed = append(changed, "embedded, not committed "+name+"\n")
		}
	}
	if len(changed) > 0 {
		return fmt.Errorf("the tree has changes no commit holds; commit or stash them first:\n%s", strings.Join(changed, ""))
	}
	return nil
}

// embedded lists the files the module's packages embed (go:embed) for any
// target system, relative to root (the module's root) with forward
// slashes: git may ignore them (a global excludes file's .DS_Store or
// editor swap file under an all: directory), but a build takes them.
func embedded(root string) ([]string, error) {
	var files []string
	for _, goos := range []string{"linux", "darwin", "windows"} {
		cmd := exec.Command("go", "list", "-e", "-f", `{{if and .Module .Module.Main}}{{range .EmbedFiles}}{{$.Module.Dir}}{{"\t"}}{{$.Dir}}{{"\t"}}{{.}}{{"\n"}}{{end}}{{end}}`, "./...")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOOS="+goos)
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("go list the embedded files for %s: %w", goos, err)
		}
		for line := range strings.Lines(string(out)) {
			mod, rest, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
			dir, name, _ := strings.Cut(rest, "\t")
			rel, err := filepath.Rel(mod, filepath.Join(dir, filepath.FromSlash(name)))
			if err != nil {
				return nil, fmt.Errorf("an embedded file outside the module: %w", err)
			}
			if rel = filepath.ToSlash(rel); !slices.Contains(files, rel) {
				files = append(files, rel)
			}
		}
	}
	return files, nil
}

// sourceDate is the time every archive member carries, so that archives are
// reproducible: SOURCE_DATE_EPOCH when set, else the commit's time.
func sourceDate() time.Time {
	n, err := strconv.ParseInt(os.Getenv("SOURCE_DATE_EPOCH"), 10, 64)
	if err != nil {
		var out []byte
		if out, err = exec.Command("git", "log", "-1", "--format=%ct").Output(); err == nil {
			n, err = strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
		}
	}
	if err != nil {
		return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return time.Unix(n, 0).UTC()
}
