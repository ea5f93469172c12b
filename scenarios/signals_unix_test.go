//go:build unix

package scenarios

// S12: signals remove the lease before the process dies of them (R4); a
// process started with SIGHUP ignored keeps it ignored
// (docs/design.md#sharing-heals). Each child's signal dispositions are set
// by the test itself: a process inherits the signals its parent ignores
// across exec, so a test run under nohup would otherwise start every child
// with SIGHUP ignored.

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
	_ "modernc.org/sqlite"
)

// S12: SIGTERM, SIGINT and SIGHUP each remove the lease, the process dies
// of the signal, and the next client starts without a take-over. Started
// with SIGHUP ignored, a process keeps it ignored: sent SIGHUP, it keeps
// serving, until SIGTERM ends it.
func TestSignalsRemoveTheLeaseBeforeTheProcessDies(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := checkout(t)
			a := startWithSignals(t, dir, "default", "--http-port", "0")
			initialize(t, a, "claude-code")
			serverURL(t, a)
			a.Signal(sig)
			exit, err := a.Wait(ctx(t))
			if err != nil || exit.Signal != sig {
				t.Fatalf("exit %+v %v: want death by %s", exit, err, sig)
			}
			noLease(t, dir)
			next := shared(t, dir)
			serverURL(t, next)
			if next.CountLogs("taking it over") != 0 {
				t.Fatal("the next client took a lease over")
			}
		})
	}
	t.Run("SIGHUP ignored at start", func(t *testing.T) {
		dir := checkout(t)
		a := startWithSignals(t, dir, "ignore", "--http-port", "0")
		initialize(t, a, "claude-code")
		serverURL(t, a)
		a.Signal(syscall.SIGHUP)
		var report struct{ Leaseholder bool }
		if isErr, text, err := a.CallTool(ctx(t), "majordomus_server", nil, &report); err != nil || isErr || !report.Leaseholder {
			t.Fatalf("after SIGHUP, majordomus_server: %+v %s %v", report, text, err)
		}
		next := shared(t, dir)
		initialize(t, next, "codex")
		if board := peersOf(t, next); board.Count != 2 {
			t.Fatalf("after SIGHUP, the board: %+v", board)
		}
		// The other client leaves first: it would take over at once once
		// the leaseholder is gone, and the lease left would be its.
		next.CloseStdin()
		exitsWith(t, next, 0)
		// Had SIGHUP been handled, the process would be ending of it: the
		// first termination signal is the one it dies of.
		a.Signal(syscall.SIGTERM)
		exit, err := a.Wait(ctx(t))
		if err != nil || exit.Signal != syscall.SIGTERM {
			t.Fatalf("exit %+v %v: want death by SIGTERM", exit, err)
		}
		noLease(t, dir)
	})
}

// A second signal as a process ends of the first changes nothing (a
// host's SIGTERM, and a terminal's Ctrl-C a moment later): it dies of the
// first, its last lines logged. SIGINT is sent without pause from when the
// first is handled (its transition logged: two signals pending at once
// are relayed in the runtime's order, not theirs) until the process is
// gone, so that it also comes once the process no longer handles signals.
func TestASecondSignalAsTheProcessEndsChangesNothing(t *testing.T) {
	for _, role := range []string{"leaseholder", "bridge"} {
		t.Run(role, func(t *testing.T) {
			dir := checkout(t)
			p := startWithSignals(t, dir, "default", "--http-port", "0")
			initialize(t, p, "claude-code")
			serverURL(t, p)
			last := "shared server stopped"
			if role == "bridge" {
				p = startWithSignals(t, dir, "default", "--http-port", "0")
				initialize(t, p, "codex")
				attached(t, p)
				last = "bridge closed"
			}
			p.Signal(syscall.SIGTERM)
			if _, err := p.WaitLog(ctx(t), `"msg":"transition"`, `"to":"exited"`); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() {
				for {
					select {
					case <-done:
						return
					default:
						p.Signal(syscall.SIGINT) // an error once it is gone
					}
				}
			}()
			exit, err := p.Wait(ctx(t))
			close(done)
			if err != nil || exit.Signal != syscall.SIGTERM || p.CountLogs(last) != 1 {
				t.Fatalf("exit %+v %v, %d lines %q: want death by SIGTERM, the line logged", exit, err, p.CountLogs(last), last)
			}
		})
	}
}

// The fleet registry is the user's, shared by every checkout's servers: one
// of them may hold it locked for seconds. That holds up neither the
// lease's release after SIGTERM nor the take-over of the bridge beside:
// the leaseholder removes its row after, and only then dies of the signal.
func TestALockedRegistryHoldsNoReleaseUp(t *testing.T) {
	dir := checkout(t)
	reg := filepath.Join(t.TempDir(), "registry.db")
	a := start(t, dir, "--registry", reg)
	initialize(t, a, "claude-code")
	if _, err := a.WaitLog(ctx(t), "registered this server in the fleet registry"); err != nil {
		t.Fatal(err)
	}
	b := shared(t, dir, "--registry", reg, "--log-level", "debug")
	initialize(t, b, "codex")
	attached(t, b)
	// its call below is resent to whoever takes over only once it knows
	// the tool is read-only, which it learns as the client is initialized
	if _, err := b.WaitLog(ctx(t), "learned from the server which tools may be resent"); err != nil {
		t.Fatal(err)
	}

	db, err := sql.Open("sqlite", "file:"+reg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	locked, err := db.Conn(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	defer locked.Close()
	if _, err := locked.ExecContext(ctx(t), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	a.Signal(syscall.SIGTERM)
	peersOf(t, b) // answered once b took the lease over
	if n := a.CountLogs("cannot remove this server's row"); n != 0 {
		t.Fatal("the lease was released only once the registry gave up waiting for its lock")
	}
	if _, err := locked.ExecContext(ctx(t), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.WaitLog(ctx(t), "removed this server's row from the fleet registry"); err != nil {
		t.Fatal(err)
	}
	if exit, err := a.Wait(ctx(t)); err != nil || exit.Signal != syscall.SIGTERM {
		t.Fatalf("exit %+v %v: want death by SIGTERM", exit, err)
	}
}

// signalsEnv, in a helper process of this test binary, says what to do
// with SIGHUP and SIGINT before it becomes majordomus-mcp (exec): "default"
// restores their default action, "ignore" ignores them.
const signalsEnv = "MAJORDOMUS_SCENARIO_SIGNALS"

// startWithSignals starts majordomus-mcp with args in dir, its SIGHUP and
// SIGINT set as dispositions says, whatever this test binary was started
// with: a helper process of the test binary sets them and becomes
// majordomus-mcp, keeping its pid.
func startWithSignals(t *testing.T, dir, dispositions string, args ...string) *mcpclient.Process {
	t.Helper()
	trackSources()
	p, err := mcpclient.Start(os.Args[0], append([]string{bin}, args...), dir, append(os.Environ(), signalsEnv+"="+dispositions))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Kill(context.Background())
		if t.Failed() {
			t.Logf("stderr of majordomus-mcp %s:\n%s", strings.Join(args, " "), strings.Join(p.Logs(), "\n"))
		}
	})
	return p
}

// init makes a helper process started by startWithSignals into
// majordomus-mcp, before anything of the test binary runs. A signal
// caught (Notify) is reset to its default action by exec; one ignored
// stays ignored.
func init() {
	dispositions, ok := os.LookupEnv(signalsEnv)
	if !ok {
		return
	}
	os.Unsetenv(signalsEnv)
	switch dispositions {
	case "default":
		signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP, syscall.SIGINT)
	case "ignore":
		signal.Ignore(syscall.SIGHUP, syscall.SIGINT)
	default:
		fmt.Fprintf(os.Stderr, "%s=%q: want default or ignore\n", signalsEnv, dispositions)
		os.Exit(2)
	}
	err := syscall.Exec(os.Args[1], os.Args[1:], os.Environ())
	fmt.Fprintln(os.Stderr, "exec majordomus-mcp:", err)
	os.Exit(2)
}

// A signal ends the demo as it ends a server: the processes it started are
// stopped and its directory removed, then it dies of the signal, having
// logged no failure (its step was cut off, not failed).
func TestASignalEndsTheDemoAndLeavesNothing(t *testing.T) {
	tmp := t.TempDir()
	cmd := exec.CommandContext(ctx(t), bin, "demo")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	for lines.Scan() && !strings.Contains(lines.Text(), ": initialize") { // a child serves by now
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, out)
	diesLeavingNothing(t, cmd, tmp, &stderr)
}

// A signal the moment the demo has made its directory ends it as well:
// the demo makes nothing it must remove before its signals are handled.
func TestASignalAsTheDemoStartsLeavesNothing(t *testing.T) {
	tmp := t.TempDir()
	cmd := exec.CommandContext(ctx(t), bin, "demo")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for made := false; !made; {
		left, err := os.ReadDir(tmp)
		if err != nil {
			t.Fatal(err)
		}
		made = len(left) > 0
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	diesLeavingNothing(t, cmd, tmp, &stderr)
}

// diesLeavingNothing waits for the demo to die of SIGTERM, and checks
// that it left nothing in tmp and logged no failure.
func diesLeavingNothing(t *testing.T, cmd *exec.Cmd, tmp string, stderr *strings.Builder) {
	t.Helper()
	err := cmd.Wait()
	if status, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !status.Signaled() || status.Signal() != syscall.SIGTERM {
		t.Errorf("the demo ended %v: want death by SIGTERM", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the demo left %v in its temporary directory", left)
	}
	if strings.Contains(stderr.String(), `"level":"error"`) {
		t.Errorf("the demo ended by a signal logged a failure:\n%s", stderr.String())
	}
}

// A bridge whose server froze (SIGSTOP) ends at once of a signal: the
// DELETE that ends its session there, a courtesy to a live server, is not
// waited on for the probe timeout (ten minutes here), which a host
// waiting for the process to exit would wait too.
func TestABridgeOfAFrozenServerEndsAtOnceOfASignal(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	b := bridged(t, dir, "codex", "--probe-timeout", "10m", "--busy-grace", "20m", "--election-bound", "30m")
	stop(t, a)
	b.Signal(syscall.SIGTERM)
	if exit, err := b.Wait(ctx(t)); err != nil || exit.Signal != syscall.SIGTERM {
		t.Fatalf("exit %+v %v: want death by SIGTERM", exit, err)
	}
}
