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
	"strconv"
	"strings"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/release"
)

func main() {
	var o options
	flag.StringVar(&o.out, "out", "dist", "directory to make (emptied first)")
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
// and ignored Go files, which a build compiles all the same), or whose
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
	if len(changed) > 0 {
		return fmt.Errorf("the tree has changes no commit holds; commit or stash them first:\n%s", strings.Join(changed, ""))
	}
	return nil
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
