package scenarios

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// A host that closed its end of the server's stderr gets its server all
// the same: a log line meeting the closed pipe before the process handles
// SIGPIPE fails, and only the line is lost. (Go kills a process whose
// write to descriptor 2 meets a closed pipe while SIGPIPE is not handled;
// on one processor the first log line always came first, and the process
// died of SIGPIPE before it answered anything.)
func TestAClosedStderrCostsTheClientNothing(t *testing.T) {
	dir := checkout(t)
	for _, args := range [][]string{{"--http-port", "0"}, {"--standalone"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			r.Close() // nobody reads the server's stderr
			defer w.Close()
			var out bytes.Buffer
			cmd := exec.Command(bin, args...)
			cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &out, w
			cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"quiet","version":"1"}}}` + "\n")
			err = onOneProcessor(t, cmd.Run)
			var exit *exec.ExitError
			if errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signaled() {
				t.Fatalf("the server died of %v; it wrote %q", exit.Sys().(syscall.WaitStatus).Signal(), out.String())
			}
			if !strings.Contains(out.String(), `"id":1,"result"`) {
				t.Fatalf("initialize not answered (%v): %q", err, out.String())
			}
		})
	}
}

// onOneProcessor runs start, which starts a process, from a thread bound
// to one processor, so that the process runs on that one alone.
func onOneProcessor(t *testing.T, start func() error) error {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var all, one unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		t.Fatal(err)
	}
	for cpu := 0; ; cpu++ {
		if all.IsSet(cpu) {
			one.Set(cpu)
			break
		}
	}
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		t.Fatal(err)
	}
	defer unix.SchedSetaffinity(0, &all)
	return start()
}
