package registry

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// childEnv selects a child role when the test binary is run again as a
// helper process (see startChild); childLease names the lease path.
const (
	childEnv   = "REGISTRY_TEST_CHILD"
	childLease = "REGISTRY_TEST_LEASE"
)

func TestMain(m *testing.M) {
	if role := os.Getenv(childEnv); role != "" {
		os.Exit(runChild(role, os.Getenv(childLease)))
	}
	goleak.VerifyTestMain(m)
}

// runChild is the body of a helper process. It speaks in lines on stdout,
// waits for "go" on stdin where a barrier is needed, and blocks on stdin
// where it must stay alive until the parent ends it.
func runChild(role, path string) int {
	in := bufio.NewReader(os.Stdin)
	say := func(format string, args ...any) { fmt.Printf(format+"\n", args...) }
	waitGo := func() bool {
		line, err := in.ReadString('\n')
		return err == nil && strings.TrimSpace(line) == "go"
	}
	self, err := Self()
	if err != nil {
		say("error: %v", err)
		return 1
	}
	doc := NewLease(self, "/checkout", "0123456789abcdef0123456789abcdef", "", "1.0.0", time.Now())
	lf := &LeaseFile{Path: path, LockWait: 10 * time.Second}

	switch role {
	case "middle":
		// A parent that starts an orphan-to-be sharing its stdin and
		// stdout, then waits to be killed.
		orphan := exec.Command(os.Args[0], "-test.run=^$")
		orphan.Env = append(os.Environ(), childEnv+"=orphan")
		orphan.Stdin, orphan.Stdout, orphan.Stderr = os.Stdin, os.Stdout, os.Stderr
		if err := orphan.Start(); err != nil {
			say("error: %v", err)
			return 1
		}
		_, _ = io.Copy(io.Discard, in)
	case "orphan":
		gone := WatchParent(context.Background())
		say("watching")
		say("orphaned: %s", <-gone)
		_, _ = io.Copy(io.Discard, in) // until the test ends
	case "sleep":
		say("ready")
		_, _ = io.Copy(io.Discard, in)
	case "lock":
		l, err := acquireLock(path, 10*time.Second)
		if err != nil {
			say("error: %v", err)
			return 1
		}
		defer l.release()
		say("locked")
		_, _ = io.Copy(io.Discard, in)
	case "acquire":
		say("ready")
		if !waitGo() {
			return 1
		}
		say("%s", acquireOutcome(lf.Acquire(doc)))
	case "takeover":
		o := &Observer{Path: path, RepositoryID: doc.RepositoryID}
		obs, err := o.Observe(context.Background())
		if err != nil || !obs.Verdict.TakeOver {
			say("error: judged %s (%v)", obs.Verdict.Class, err)
			return 1
		}
		say("ready")
		if !waitGo() {
			return 1
		}
		removed, err := lf.TakeOver(obs)
		if err != nil {
			say("error: %v", err)
			return 1
		}
		say("removed=%t %s", removed, acquireOutcome(lf.Acquire(doc)))
	default:
		say("error: unknown role %q", role)
		return 2
	}
	return 0
}

func acquireOutcome(err error) string {
	switch {
	case err == nil:
		return "won"
	case errors.Is(err, ErrLeaseExists):
		return "lost"
	default:
		return "error: " + err.Error()
	}
}

// child is a helper process running this test binary in a child role.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
}

// startChild starts the test binary in role; it is killed and reaped when
// the test ends.
func startChild(t *testing.T, role, leasePath string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+role, childLease+"="+leasePath)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, stdin: stdin, lines: make(chan string, 16)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(c.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Process.Kill()
		<-done
		_ = cmd.Wait()
	})
	return c
}

// line returns the child's next line of output, failing after 10 s.
func (c *child) line(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-c.lines:
		if !ok {
			t.Fatalf("child %d ended without a line", c.cmd.Process.Pid)
		}
		return l
	case <-time.After(10 * time.Second):
		t.Fatalf("child %d said nothing within 10s", c.cmd.Process.Pid)
	}
	return ""
}

// expect fails unless the child's next line is want.
func (c *child) expect(t *testing.T, want string) {
	t.Helper()
	if got := c.line(t); got != want {
		t.Fatalf("child %d said %q, want %q", c.cmd.Process.Pid, got, want)
	}
}

func (c *child) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(c.stdin, line+"\n"); err != nil {
		t.Fatal(err)
	}
}
