//go:build npm && unix

// The npm route as a host takes it, on Unix: `npx majordomus-mcp` spawned
// with real pipes in a checkout, its processes found with ps.

package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/example"
	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// Through npx, as directly, the first process in a checkout becomes the
// leaseholder and a second attaches to it: the second's client is answered
// by the first's server, over the bridge; both end with 0 on stdin's end.
func TestThroughNPXTheFirstLeasesAndTheSecondAttaches(t *testing.T) {
	_, _, _, prefix := installNPM(t)
	checkout := newCheckout(t)
	first := startNPX(t, prefix, checkout)
	waitLog(t, first, `"msg":"transition"`, `"to":"leaseholder"`)
	second := startNPX(t, prefix, checkout)
	waitLog(t, second, `"msg":"transition"`, `"from":"electing","to":"attached"`)
	if _, err := second.Initialize(ctx(t), "npx-second", "2025-11-25"); err != nil {
		t.Fatalf("the attached client's initialize: %v", err)
	}
	// The leaseholder's server answers the attached client's session.
	waitLog(t, first, `"msg":"session opened"`, `"transport":"http"`)
	r, err := second.Call(ctx(t), "tools/list", map[string]any{})
	if err != nil || r.Error != nil || !strings.Contains(string(r.Result), `"tools"`) {
		t.Fatalf("tools/list through the bridge: %v %v %s", err, r.Error, r.Result)
	}
	for _, p := range []*mcpclient.Process{second, first} {
		if err := p.CloseStdin(); err != nil {
			t.Fatal(err)
		}
		if exit, err := p.Wait(ctx(t)); err != nil || exit != (mcpclient.Exit{}) {
			t.Errorf("after stdin's end npx ended %+v (%v), want 0", exit, err)
		}
	}
}

// Servers of two profiles that one host launched through npx are of one
// cohort, the host's, as they are when it spawns the binary itself: each
// binary's parent is a launcher of its own, which names the host instead.
func TestThroughNPXOneHostsServersAreOneCohort(t *testing.T) {
	_, _, _, prefix := installNPM(t)
	checkout, registry := newCheckout(t), filepath.Join(t.TempDir(), "runtimes.db")
	for _, profile := range []string{"author", "review"} {
		p := start(t, exec.Command("npx", "--offline", "--prefix", prefix, "majordomus-mcp", "--profile", profile, "--registry", registry), checkout)
		waitLog(t, p, "registered this server in the fleet registry")
	}
	out, err := output(checkout, "npx", "--offline", "--prefix", prefix, "majordomus-mcp", "fleet", "--roster", "author,review", "--registry", registry)
	if err != nil {
		t.Fatalf("the fleet's gate is not open: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `"mixed_cohort": false`) || !strings.Contains(string(out), `"env:host:`+strconv.Itoa(os.Getpid())+`@`) {
		t.Fatalf("the fleet of one host's two servers:\n%s", out)
	}
}

// kill -9 of the process the host spawned (npx) with its stdin still open
// leaves no process behind: npm's shell and the launcher end, and the
// binary sees its parent go and ends as it does then (the client left,
// R5); at most a stale lease stays, which the next process takes over.
// With bash as npm's shell, which execs the launcher, the launcher is
// npm's child, sees it go and ends the binary with SIGTERM (R4). (kill -9
// of the host itself: TestEveryNPMWayServesUntilItsHostEndsIt.)
func TestKillingNPXHardLeavesNoProcess(t *testing.T) {
	_, _, _, prefix := installNPM(t)
	for _, c := range []struct {
		name, ending string
		args         []string
	}{
		{"npx with npm's shell", `"trigger":"client-left","rule":"R5"`, nil},
		{"npx with bash", `"trigger":"signal","rule":"R4"`, []string{"--script-shell=/bin/bash"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkout := newCheckout(t)
			p := startNPX(t, prefix, checkout, c.args...)
			waitLog(t, p, `"msg":"transition"`, `"to":"leaseholder"`)
			chain := processChain(t, p.Cmd.Process.Pid)
			t.Logf("spawned: %v", chain)
			if err := p.Cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			for _, proc := range chain[1:] {
				waitFor(t, func() bool { return ended(proc.pid) }, fmt.Sprintf("%s (pid %d) to end", proc.comm, proc.pid))
			}
			if _, err := p.Wait(ctx(t)); err != nil {
				t.Fatal(err)
			}
			if p.CountLogs(`"msg":"transition"`, c.ending) == 0 {
				t.Errorf("the binary did not end on %s:\n%s", c.ending, strings.Join(p.Logs(), "\n"))
			}
			next := startNPX(t, prefix, checkout)
			waitLog(t, next, `"msg":"transition"`, `"to":"leaseholder"`)
			if err := next.CloseStdin(); err != nil {
				t.Fatal(err)
			}
			if _, err := next.Wait(ctx(t)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// What npx puts between the host and the binary: npm, the shell npm runs
// every command through (unless it execs the command, as bash does),
// the launcher (node, which cannot exec), then the binary. A SIGINT to
// npx reaches the binary when the shell is bash: npm passes SIGINT and
// SIGTERM on to its child, and the launcher passes them on to the binary.
// (dash, Debian's and Ubuntu's sh, keeps a SIGINT while it waits for its
// command, as POSIX shells may: the README says so.)
func TestThroughNPXTheProcessTree(t *testing.T) {
	_, host, _, prefix := installNPM(t)
	checkout := newCheckout(t)
	p := startNPX(t, prefix, checkout, "--script-shell=/bin/bash")
	waitLog(t, p, `"msg":"transition"`, `"to":"leaseholder"`)
	chain := processChain(t, p.Cmd.Process.Pid)
	t.Logf("under npx --script-shell=/bin/bash: %v", chain)
	if len(chain) != 3 || chain[1].comm != "node" || chain[2].comm != host.binaryName() {
		t.Errorf("under npx with bash: %v, want npm, node (the launcher), %s", chain, host.binaryName())
	}
	if err := p.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	exit, err := p.Wait(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if exit != (mcpclient.Exit{Code: -1, Signal: syscall.SIGINT}) {
		t.Errorf("after SIGINT npx ended %+v, want by SIGINT, as the binary did", exit)
	}
	if p.CountLogs(`"msg":"transition"`, `"trigger":"signal","rule":"R4"`) == 0 {
		t.Errorf("the binary did not end on the SIGINT (R4):\n%s", strings.Join(p.Logs(), "\n"))
	}
	if _, err := os.Stat(leaseOf(checkout)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the lease is still there after SIGINT (%v)", err)
	}

	q := startNPX(t, prefix, checkout)
	waitLog(t, q, `"msg":"transition"`, `"to":"leaseholder"`)
	chain = processChain(t, q.Cmd.Process.Pid)
	t.Logf("under npx: %v", chain)
	if n := len(chain); n < 3 || n > 4 || chain[n-2].comm != "node" || chain[n-1].comm != host.binaryName() {
		t.Errorf("under npx: %v, want npm, perhaps a shell, node (the launcher), %s", chain, host.binaryName())
	}
	if err := q.CloseStdin(); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Wait(ctx(t)); err != nil {
		t.Fatal(err)
	}
}

func newCheckout(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := example.WriteCheckout(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func leaseOf(checkout string) string {
	return filepath.Join(checkout, ".ai", "local", "state", "mcp", "server.json")
}

// startNPX spawns `npx majordomus-mcp` in dir as a host does, with the
// prefix the packages were installed into; args go to npx.
func startNPX(t *testing.T, prefix, dir string, args ...string) *mcpclient.Process {
	t.Helper()
	args = append(append([]string{"--offline"}, args...), "--prefix", prefix, "majordomus-mcp")
	return start(t, exec.Command("npx", args...), dir)
}

// start starts cmd in dir; whatever it leaves running when the test ends
// is killed.
func start(t *testing.T, cmd *exec.Cmd, dir string) *mcpclient.Process {
	t.Helper()
	cmd.Dir = dir
	p, err := mcpclient.StartCmd(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, proc := range append(seen[cmd.Process.Pid], processChain(t, cmd.Process.Pid)...) {
			if !ended(proc.pid) && commOf(proc.pid) == proc.comm { // not a pid reused since
				syscall.Kill(proc.pid, syscall.SIGKILL)
			}
		}
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		p.Kill(c)
	})
	return p
}

// seen is every chain processChain found, by its first pid, for the
// cleanup of a test that failed after killing that first process.
var seen = map[int][]process{}

type process struct {
	pid  int
	comm string
}

func (p process) String() string { return fmt.Sprintf("%s(%d)", p.comm, p.pid) }

// processChain is pid and its descendants, each the only child of the one
// before, as ps lists them now; a process with more children ends it.
func processChain(t *testing.T, pid int) []process {
	t.Helper()
	out, err := exec.Command("ps", "-A", "-o", "pid=", "-o", "ppid=", "-o", "stat=", "-o", "comm=").Output()
	if err != nil {
		t.Fatalf("ps: %v", err)
	}
	children := map[int][]process{}
	comm := map[int]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) < 4 || strings.HasPrefix(f[2], "Z") {
			continue
		}
		p, _ := strconv.Atoi(f[0])
		pp, _ := strconv.Atoi(f[1])
		name := filepath.Base(strings.Join(f[3:], " "))
		comm[p] = name
		children[pp] = append(children[pp], process{p, name})
	}
	chain := []process{{pid, comm[pid]}}
	for kids := children[pid]; len(kids) == 1; kids = children[kids[0].pid] {
		chain = append(chain, kids[0])
	}
	seen[pid] = append(seen[pid], chain...)
	return chain
}

// ended says whether pid has ended: gone, or a zombie nobody has reaped
// yet (an orphan's adopter may be slow to).
func ended(pid int) bool {
	out, err := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(pid)).Output()
	stat := strings.TrimSpace(string(out))
	return err != nil || stat == "" || strings.HasPrefix(stat, "Z")
}

func commOf(pid int) string {
	out, _ := exec.Command("ps", "-o", "comm=", "-p", strconv.Itoa(pid)).Output()
	return filepath.Base(strings.TrimSpace(string(out)))
}

func waitLog(t *testing.T, p *mcpclient.Process, parts ...string) {
	t.Helper()
	if _, err := p.WaitLog(ctx(t), parts...); err != nil {
		t.Fatalf("%v\n%s", err, strings.Join(p.Logs(), "\n"))
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}
