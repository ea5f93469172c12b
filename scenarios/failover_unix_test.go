//go:build unix

package scenarios

import (
	"os"
	"syscall"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// A leaseholder killed -9 is torn down over tens of milliseconds (each of
// its inotify instances waits out a grace period of the kernel's), and on
// current Linux kernels its listener, among the last of its descriptors to
// go, takes connections until then and answers none. A bridge whose server's owner has begun to exit
// leaves it unprobed, and so does the election: here the owner stays a
// zombie, its parent stopped, so that it is exiting for as long as the
// test looks.
func TestABridgeLeavesAServerWhoseOwnerIsExitingUnprobed(t *testing.T) {
	dir := checkout(t)
	args := []string{"-c", `"$0" "$@"; exit $?`, bin, "--http-port", "0"}
	parent, err := mcpclient.Start("sh", args, dir, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	killedAtEnd(t, parent, "sh", args)
	initialize(t, parent, "claude-code")
	serverURL(t, parent)
	b := bridged(t, dir, "codex")
	owner := int(readLease(t, dir)["pid"].(float64))

	if err := parent.Signal(syscall.SIGSTOP); err != nil { // it cannot reap its child
		t.Fatal(err)
	}
	if err := syscall.Kill(owner, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, said := range [][]string{
		{"the shared server is gone", "has begun to exit"},
		{"stale lease", "not probed: its owner has begun to exit"},
		{"took over as the shared server"},
	} {
		if _, err := b.WaitLog(ctx(t), said...); err != nil {
			t.Fatal(err)
		}
	}
	if isErr, text, err := b.CallTool(ctx(t), "majordomus_repository", nil, nil); err != nil || isErr {
		t.Fatalf("the first call after the take-over: %v %s", err, text)
	}
}
