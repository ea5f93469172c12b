//go:build unix

package scenarios

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// serve runs until a signal whatever its parent does
// (docs/design.md#sharing-heals): started by a shell that exits once serve
// serves, it keeps serving past a session that opens after the shell is
// gone and expires (2 s, longer than a parent watch takes to notice: a
// process whose parent changed ends with its last session), and SIGTERM
// still ends it and removes the lease.
func TestServeOutlivesTheProcessThatStartedIt(t *testing.T) {
	t.Parallel()
	dir := checkout(t)
	logFile := filepath.Join(t.TempDir(), "serve.log")
	trackSources()
	// The shell starts serve, says its pid, and exits when told.
	launcher := exec.CommandContext(ctx(t), "sh", "-c", `"$0" "$@" </dev/null >/dev/null 2>&1 & echo $!; read _ || true`,
		bin, "serve", "--http-port", "0", "--idle-timeout", "2s", "--heartbeat", "1s", "--log-file", logFile)
	launcher.Dir = dir
	tell, err := launcher.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	said, err := launcher.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := launcher.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(said).ReadString('\n')
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("the launching shell said %q", line)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the log of serve:\n%s", readFile(t, logFile))
		}
	})
	waitFileLine(t, logFile, "it serves until a signal")
	tell.Close()
	if err := launcher.Wait(); err != nil { // the parent is gone, and reaped
		t.Fatalf("the launching shell: %v", err)
	}

	server := connect(t, dir)
	openPlainSession(t, server)
	waitFileLine(t, logFile, `"reason":"idle"`)
	if id := identity(t, server); id["leaseholder"] != true {
		t.Fatalf("serve stopped serving once its parent was gone: %v", id)
	}
	if log := readFile(t, logFile); strings.Contains(log, "the client left") || strings.Contains(log, "owner-left") {
		t.Fatalf("serve took its parent's end for a client's:\n%s", log)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitGone(t, leasePath(dir)) // it is not this test's child: its exit cannot be waited for
}

// waitGone waits until nothing is at path. It looks again every few
// milliseconds: a removal says nothing to whoever does not watch.
func waitGone(t *testing.T, path string) {
	t.Helper()
	c := ctx(t)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			return
		}
		select {
		case <-tick.C:
		case <-c.Done():
			t.Fatalf("%s is still there", path)
		}
	}
}
