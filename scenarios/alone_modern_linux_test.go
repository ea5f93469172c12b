//go:build linux

package scenarios

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// A 2026-07-28 client served alone that made a call there — neither an
// announcement nor server/discover, so it said who it is only in that
// call's _meta — joins the shared server once it can, its call brought
// into the checkout's history, rather than being refused there for having
// no initialize and staying alone for good.
func TestAModernClientServedAloneJoinsWithTheCallsItMadeThere(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"majordomus_peers", "majordomus_repository"} {
		t.Run(tool, func(t *testing.T) {
			dir := checkout(t)
			a := shared(t, dir)
			initialize(t, a, "claude-code")
			serverURL(t, a)
			// A file takes the lease directory's place while the
			// leaseholder is frozen, and gives it back before it is
			// continued: it never knew, and serves on.
			leaseDir := filepath.Dir(leasePath(dir))
			if err := os.WriteFile(leaseDir+".block", []byte("not a directory"), 0o600); err != nil {
				t.Fatal(err)
			}
			exchange := func() {
				t.Helper()
				if err := unix.Renameat2(unix.AT_FDCWD, leaseDir+".block", unix.AT_FDCWD, leaseDir, unix.RENAME_EXCHANGE); err != nil {
					t.Fatal(err)
				}
			}
			stop(t, a)
			exchange()
			m := shared(t, dir, "--log-level", "debug")
			if r, err := m.Call(ctx(t), "tools/call", withMeta(map[string]any{"name": tool, "arguments": map[string]any{}}, "modern-agent")); err != nil || r.Error != nil {
				t.Fatalf("%s: %+v %v", tool, r.Error, err)
			}
			if _, err := m.WaitLog(ctx(t), servedAlone); err != nil {
				t.Fatal(err)
			}
			exchange()
			if err := a.Signal(syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
			peer := logField(t, m, "joined the checkout's shared server", "peer")
			n := 0
			for _, x := range executionsOf(t, a) {
				if x.Peer == peer && x.Tool == tool {
					n++
				}
			}
			if n != 1 {
				t.Errorf("the %s the client made alone is in the checkout's history %d times, want once", tool, n)
			}
		})
	}
}
