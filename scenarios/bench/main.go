// Command bench measures majordomus-mcp side by side with baselines taken
// in the same run (issue 5, docs/architecture.md#tests): attach (B1),
// bridge overhead (B2), other bridges (B3), take-over (B4), a storm of
// clients (B5), memory (B6), layer scale (B7), a flood (B8), a frozen
// leaseholder replaced (B9), a new client's first answers while the
// owner cannot take it (B10) and the wake-ups of idle processes (B11). It
// builds the binary, runs every measure several times after a warm-up,
// prints a Markdown table and writes a JSON file.
//
//	go run ./scenarios/bench [-quick] [-out FILE] [-only B1,B4] [-peers DIR] [-profile DIR]
//
// It is not a test: `go test ./...` compiles it and runs nothing. Every
// process it starts is a child on loopback, every wait is bounded, and the
// whole run is bounded by -timeout.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// options are the command's flags.
type options struct {
	quick, noPeers                      bool
	out, only, peers, rev, bin, profile string
	timeout, soak                       time.Duration
	soakClients                         int
}

func main() {
	var o options
	flag.BoolVar(&o.quick, "quick", false, "fewer repetitions (a smoke run of about a minute)")
	flag.StringVar(&o.out, "out", "", "the JSON file to write, relative to the module root (default scenarios/bench/results.json, or soak.json)")
	flag.StringVar(&o.only, "only", "", "run only these measures, comma-separated (B1,…,B11; B6 needs B2 and B5)")
	flag.StringVar(&o.peers, "peers", "", "an npm prefix that already holds mcp-remote and supergateway (default: install into a temporary one)")
	flag.BoolVar(&o.noPeers, "no-peers", false, "skip B3's npm bridges")
	flag.StringVar(&o.rev, "rev", "", "build this commit (git archive into a temporary directory) instead of the working tree")
	flag.StringVar(&o.bin, "bin", "", "measure this majordomus-mcp binary instead of building one (to compare builds)")
	flag.DurationVar(&o.timeout, "timeout", 15*time.Minute, "bound on the whole run (a soak's is its length plus this)")
	flag.StringVar(&o.profile, "profile", "", "write a CPU profile of every majordomus-mcp process into this directory (cpu-<pid>.pprof)")
	flag.DurationVar(&o.soak, "soak", 0, "instead of the measures, run the chaos soak for this long (task soak)")
	flag.IntVar(&o.soakClients, "soak-clients", 8, "clients in the soak")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	started := time.Now()
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	if o.profile != "" {
		dir, err := filepath.Abs(o.profile)
		if err == nil {
			err = os.MkdirAll(dir, 0o755)
		}
		if err != nil {
			return err
		}
		os.Setenv("MAJORDOMUS_MCP_CPUPROFILE", dir) // every process inherits it
	}
	tmp, err := os.MkdirTemp("", "majordomus-bench-")
	if err != nil {
		return err
	}
	// The servers it starts register in a fleet registry of the run's own,
	// never in the user's (runtimes.RegistryEnv).
	os.Setenv("MAJORDOMUS_MCP_REGISTRY", filepath.Join(tmp, "registry.db"))
	defer os.RemoveAll(tmp)
	b := &bench{tmp: tmp, bin: o.bin, runs: 40, warm: 3, calls: 2000, storm: 32}
	if o.quick {
		b.runs, b.warm, b.calls = 5, 1, 200
	}
	b.mem.bridge, b.mem.standalone, b.mem.leaseholder = newSeries("MiB"), newSeries("MiB"), newSeries("MiB")
	b.mem.bridgePSS, b.mem.standalonePSS = newSeries("MiB"), newSeries("MiB")
	defer b.cleanup()
	timeout := o.timeout + o.soak
	watchdog := time.AfterFunc(timeout, func() {
		fmt.Fprintf(os.Stderr, "bench: the run passed -timeout %s; ending it\n", timeout)
		b.cleanup()
		os.Exit(1)
	})
	defer watchdog.Stop()

	rep := &Report{Schema: "majordomus-bench/v1", Started: started.UTC().Format(time.RFC3339), Quick: o.quick,
		Command: strings.TrimSpace("go run ./scenarios/bench " + strings.Join(os.Args[1:], " ")),
		Machine: machine(), Settings: Settings{Runs: b.runs, Warmup: b.warm, Calls: b.calls, Storm: b.storm}}
	rep.Commit, rep.Dirty = commit(root)
	if b.bin != "" {
		b.note("measured the prebuilt binary %s, not a build of this checkout", b.bin)
	} else if err := b.build(root, o.rev, rep); err != nil {
		return err
	}
	path := func(name string) string {
		switch {
		case o.out == "":
			return filepath.Join(root, "scenarios/bench", name)
		case filepath.IsAbs(o.out):
			return o.out
		}
		return filepath.Join(root, o.out)
	}
	if o.soak > 0 {
		progress(fmt.Sprintf("soaking %d clients for %s", o.soakClients, o.soak))
		srep, err := b.soak(o.soak, o.soakClients, rep.Commit)
		if err != nil {
			return err
		}
		printSoak(os.Stdout, srep)
		return writeJSON(path("soak.json"), srep)
	}
	b.measureAll(o, rep)
	rep.Machine.LoadAfter = loadavg()
	rep.Notes = append(rep.Notes, b.notes...)
	rep.Seconds = time.Since(started).Round(time.Second).Seconds()
	printTable(os.Stdout, rep)
	if err := writeJSON(path("results.json"), rep); err != nil {
		return err
	}
	fmt.Printf("\nwrote %s (%.0f s)\n", path("results.json"), rep.Seconds)
	if len(rep.Errors) > 0 {
		return fmt.Errorf("%d measure(s) failed", len(rep.Errors))
	}
	return nil
}

// build builds majordomus-mcp from the working tree, or from commit rev,
// as the release is built (Taskfile's build).
func (b *bench) build(root, rev string, rep *Report) error {
	src := root
	if rev != "" {
		var err error
		if src, rep.Commit, err = exportRev(root, rev, filepath.Join(b.tmp, "src")); err != nil {
			return err
		}
		rep.Dirty = false
	}
	progress("building majordomus-mcp in " + src)
	b.bin = filepath.Join(b.tmp, "majordomus-mcp")
	build := exec.Command("go", "build", "-o", b.bin, "./cmd/majordomus-mcp")
	build.Dir, build.Stdout, build.Stderr = src, os.Stderr, os.Stderr
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if err := build.Run(); err != nil {
		return fmt.Errorf("building majordomus-mcp: %w", err)
	}
	return nil
}

// measureAll runs the measures -only names (all by default) into rep; a
// measure that fails is reported as an error and the others still run.
func (b *bench) measureAll(o options, rep *Report) {
	want := func(id string) bool { return o.only == "" || strings.Contains(","+o.only+",", ","+id+",") }
	b.noPeers = "not run: -no-peers or -only"
	if want("B3") && !o.noPeers {
		var err error
		if b.peers, rep.Peers, err = installPeers(b.tmp, o.peers); err != nil {
			b.noPeers = err.Error()
		}
	}
	if b.peers == "" {
		b.note("B3's npm bridges: %s", b.noPeers)
	}
	measure := func(id string, wanted bool, f func() ([]Figure, error)) {
		if !wanted {
			return
		}
		progress("measuring " + id)
		figs, err := f()
		if err != nil {
			rep.Errors = append(rep.Errors, err.Error())
			figs = append(figs, Figure{ID: id, Measure: "(failed: see errors)", Result: "error", Note: err.Error()})
		}
		rep.Figures = append(rep.Figures, figs...)
	}
	measure("B1", want("B1"), b.b1)
	measure("B2", want("B2") || want("B3"), b.b2b3) // B3 bridges to B2's server
	measure("B4", want("B4"), b.b4)
	b.runs, b.warm = map[bool]int{false: 10, true: 3}[o.quick], 1 // storms
	measure("B5", want("B5"), b.b5)
	measure("B6", want("B6"), func() ([]Figure, error) { return b.b6(), nil })
	b.runs, b.warm = rep.Settings.Runs, rep.Settings.Warmup
	measure("B7", want("B7"), b.b7)
	measure("B8", want("B8"), b.b8)
	measure("B9", want("B9"), func() ([]Figure, error) { return b.b9(map[bool]int{false: 5, true: 1}[o.quick]) })
	measure("B10", want("B10"), func() ([]Figure, error) { return b.b10(map[bool]int{false: 10, true: 3}[o.quick]) })
	measure("B11", want("B11"), b.b11)
	b.cleanup()
}

func progress(what string) { fmt.Fprintf(os.Stderr, "bench: %s …\n", what) }

// moduleRoot is the directory of the main module's go.mod.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("run the harness inside the majordomus-mcp module")
	}
	return filepath.Dir(gomod), nil
}

// commit is HEAD and whether tracked files differ from it.
func commit(root string) (string, bool) {
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown", false
	}
	// The results of an earlier run are not a change to what is measured.
	status, _ := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no",
		"--", ".", ":!scenarios/bench/results.json").Output()
	return strings.TrimSpace(string(head)), len(strings.TrimSpace(string(status))) > 0
}

// exportRev writes the tree of commit rev into dir and returns dir and the
// full commit id.
func exportRev(root, rev, dir string) (string, string, error) {
	full, err := exec.Command("git", "-C", root, "rev-parse", "--verify", rev+"^{commit}").Output()
	if err != nil {
		return "", "", fmt.Errorf("git rev-parse %s: %w", rev, err)
	}
	id := strings.TrimSpace(string(full))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	tarball := dir + ".tar"
	for _, cmd := range []*exec.Cmd{
		exec.Command("git", "-C", root, "archive", "--format=tar", "-o", tarball, id),
		exec.Command("tar", "-x", "-f", tarball, "-C", dir),
	} {
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("%s: %w: %s", strings.Join(cmd.Args, " "), err, out)
		}
	}
	return dir, id, nil
}

// installPeers returns the npm prefix holding mcp-remote and supergateway:
// the one given, or one installed now under tmp when npm exists.
func installPeers(tmp, given string) (string, []PeerPkg, error) {
	prefix := given
	if prefix == "" {
		if _, err := exec.LookPath("npm"); err != nil {
			return "", nil, errors.New("npm is not on PATH: mcp-remote and supergateway were not installed")
		}
		prefix = filepath.Join(tmp, "npm")
		progress("installing mcp-remote and supergateway with npm into " + prefix)
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "npm", "install", "--prefix", prefix, "--no-audit", "--no-fund",
			"--loglevel=error", "mcp-remote", "supergateway")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return "", nil, fmt.Errorf("npm install mcp-remote supergateway failed (%v)", err)
		}
	}
	var pkgs []PeerPkg
	for _, name := range []string{"mcp-remote", "supergateway"} {
		pkgs = append(pkgs, PeerPkg{Name: name, Version: packageVersion(prefix, name)})
	}
	return prefix, pkgs, nil
}
