//go:build unix

package scenarios

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A stopped process (SIGSTOP, which Windows does not have) is silent but
// alive: its lease is busy, not stale.

// A stopped leaseholder (SIGSTOP: a laptop lid, a debugger) is silent but
// alive. A new client judges its lease busy, waits out the busy grace on
// its own clock, and takes it over through the machine's busy edge (R1);
// the stopped process, continued, finds its lease lost and ends with its
// client.
func TestAStoppedLeaseholderIsTakenOverAfterTheBusyGrace(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	if err := a.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	continued := false
	t.Cleanup(func() {
		if !continued {
			a.Signal(syscall.SIGCONT)
		}
	})

	const grace = time.Second
	b := shared(t, dir, "--busy-grace", grace.String(), "--log-level", "debug")
	initialize(t, b, "codex")
	firstBusy, err := b.WaitLog(ctx(t), "waiting for the lease", `"class":"busy"`)
	if err != nil {
		t.Fatal(err)
	}
	takeOver, err := b.WaitLog(ctx(t), "busy lease:", "its owner", "is alive", "taking it over", `"class":"busy"`)
	if err != nil {
		t.Fatal(err)
	}
	if waited := logTime(t, takeOver).Sub(logTime(t, firstBusy)); waited < grace {
		t.Fatalf("taken over %s after the first busy judgement, before the busy grace of %s", waited, grace)
	}
	if _, err := b.WaitLog(ctx(t), `"msg":"transition"`, `"from":"electing","to":"leaseholder"`); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.Join(b.Logs(), "\n"), "stale lease") {
		t.Fatalf("the stopped owner's lease was judged stale, not waited out as busy:\n%s", strings.Join(b.Logs(), "\n"))
	}
	if readLease(t, dir)["url"] != serverURL(t, b) {
		t.Fatal("the lease does not name B's server")
	}

	continued = true
	if err := a.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if _, err := a.WaitLog(ctx(t), "the lease is no longer this server's"); err != nil {
		t.Fatal(err)
	}
	a.CloseStdin()
	exitsWith(t, a, 0)
	if readLease(t, dir)["url"] != serverURL(t, b) {
		t.Fatal("the continued process touched B's lease")
	}
}

// logTime is the time stamp of a JSON log line.
func logTime(t *testing.T, line string) time.Time {
	t.Helper()
	var entry struct{ TS string }
	if err := json.Unmarshal([]byte(line), &entry); err != nil {
		t.Fatalf("a log line that is not JSON: %s", line)
	}
	ts, err := time.Parse(time.RFC3339Nano, entry.TS)
	if err != nil {
		t.Fatalf("the log line's time %q: %v", entry.TS, err)
	}
	return ts
}
