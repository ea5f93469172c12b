package scenarios

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

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

// A host that stopped reading the server's stdout (stopped, wedged) ends
// it with a signal all the same: the process dies of it at once, whatever
// it was answering. (Served alone, it waited for its answers under way,
// each waiting on the full pipe, and lived on until SIGKILL.)
func TestAServerWhoseStdoutIsFullEndsOnASignal(t *testing.T) {
	dir := checkout(t)
	for _, args := range [][]string{{"--http-port", "0"}, {"--standalone"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			stdout := fullPipe(t)
			cmd := exec.Command(bin, args...)
			cmd.Dir, cmd.Stdout = dir, stdout
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			stdout.Close()
			answering := make(chan struct{})
			go func() {
				sc := bufio.NewScanner(stderr)
				for sc.Scan() {
					if strings.Contains(sc.Text(), "peer initialized") { // its answer is written next
						close(answering)
						break
					}
				}
				io.Copy(io.Discard, stderr)
			}()
			exited, waitErr := awaitExit(t, cmd)
			fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"stopped","version":"1"}}}`)
			select {
			case <-answering:
			case <-time.After(wait):
				t.Fatal("the server never answered initialize")
			}
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
				var exit *exec.ExitError
				if !errors.As(*waitErr, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
					t.Fatalf("the server ended with %v, want SIGTERM", *waitErr)
				}
			case <-time.After(wait):
				t.Fatalf("the server lives on %s after SIGTERM while its stdout is full", wait)
			}
		})
	}
}

// fullPipe is the write end of a pipe that nobody reads, full already: a
// host that stopped reading.
func fullPipe(t *testing.T) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	raw, err := w.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	err = raw.Control(func(fd uintptr) {
		if err = syscall.SetNonblock(int(fd), true); err != nil {
			return
		}
		for _, chunk := range [][]byte{make([]byte, 4096), {0}} {
			for {
				if _, err = syscall.Write(int(fd), chunk); err != nil {
					break
				}
			}
		}
		if errors.Is(err, syscall.EAGAIN) {
			err = syscall.SetNonblock(int(fd), false)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// A demo that cannot end of a signal (its stdout full: it waits to write
// what nobody reads) ends at once of a second, dying of the first. It
// once caught every later signal and lived on until SIGKILL.
func TestADemoStuckOnItsStdoutEndsOfASecondSignal(t *testing.T) {
	tmp, err := os.MkdirTemp("", "majordomus-demo-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) }) // what a demo ended at once leaves; its servers end with it
	stdout := fullPipe(t)
	cmd := exec.Command(bin, "demo")
	cmd.Env, cmd.Stdout = append(os.Environ(), "TMPDIR="+tmp), stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdout.Close()
	exited, waitErr := awaitExit(t, cmd)
	for made := false; !made; { // its signals are handled by then
		left, err := os.ReadDir(tmp)
		if err != nil {
			t.Fatal(err)
		}
		made = len(left) > 0
	}
	timeout := time.After(wait)
	for {
		cmd.Process.Signal(syscall.SIGTERM) // again and again, until it is gone
		select {
		case <-exited:
			var exit *exec.ExitError
			if !errors.As(*waitErr, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
				t.Fatalf("the demo ended with %v, want SIGTERM", *waitErr)
			}
			return
		case <-timeout:
			t.Fatalf("the demo lives on %s after SIGTERMs while its stdout is full", wait)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// awaitExit waits for the started cmd in the background: exited is closed
// once it has, and err then says how. The test's end kills it, if need be.
func awaitExit(t *testing.T, cmd *exec.Cmd) (exited <-chan struct{}, err *error) {
	done, waitErr := make(chan struct{}), new(error)
	go func() {
		*waitErr = cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	return done, waitErr
}

// A demo whose reader had enough (`demo | head -1`) stops, cleans up and
// exits 0, with no error: nobody reading is no failure of its.
func TestADemoWhoseReaderLeftEndsQuietly(t *testing.T) {
	tmp, err := os.MkdirTemp("", "majordomus-demo-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	var stderr strings.Builder
	cmd := exec.Command(bin, "demo")
	cmd.Env, cmd.Stderr = append(os.Environ(), "TMPDIR="+tmp), &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	out.Close() // as head does once it has its line
	if err := cmd.Wait(); err != nil || strings.Contains(stderr.String(), `"level":"error"`) {
		t.Fatalf("the demo ended with %v; stderr:\n%s", err, stderr.String())
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the demo left %v", left)
	}
}
