// Package testchild runs a test binary again as a helper process in a
// named role, for tests that need real processes (a lock holder, a
// zombie, an orphan). The child speaks in lines on stdout; it is killed
// and reaped when the test ends.
package testchild

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// RoleEnv names the role a test binary runs as; its TestMain dispatches on
// it (see [Role]).
const RoleEnv = "MAJORDOMUS_TEST_CHILD"

// Role returns the role this process was started in, "" for the test
// binary itself.
func Role() string { return os.Getenv(RoleEnv) }

// Child is a helper process running the test binary in a role.
type Child struct {
	Cmd   *exec.Cmd
	Stdin io.WriteCloser
	lines chan string
}

// Start starts the test binary in role, with env added to its environment.
func Start(t *testing.T, role string, env ...string) *Child {
	t.Helper()
	return StartCmd(t, exec.Command(os.Args[0], "-test.run=^$"), role, env...)
}

// RanAlone runs t itself again in a test binary of its own, in role, for
// a test that changes what is the whole process's (a resource limit): it
// reports true once t passed there (the caller returns), and fails t when
// it failed there. In that binary, it reports false: t goes on.
func RanAlone(t *testing.T, role string) bool {
	t.Helper()
	if Role() == role {
		return false
	}
	c := StartCmd(t, exec.Command(os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$"), role)
	var said []string
	for {
		line := c.Line(t)
		said = append(said, line)
		switch {
		case line == "PASS":
			return true
		case strings.HasPrefix(line, "FAIL"):
			t.Fatalf("in a test binary of its own:\n%s", strings.Join(said, "\n"))
		}
	}
}

// StartAt starts the test binary at exe (a copy: see [Copy]) in role.
func StartAt(t *testing.T, exe, role string, env ...string) *Child {
	t.Helper()
	return StartCmd(t, exec.Command(exe, "-test.run=^$"), role, env...)
}

// StartCmd starts cmd, a test binary (a copy, a user of its own), in role.
func StartCmd(t *testing.T, cmd *exec.Cmd, role string, env ...string) *Child {
	t.Helper()
	cmd.Env = append(append(os.Environ(), RoleEnv+"="+role), env...)
	cmd.Stderr = os.Stderr
	stdin, stdout, err := start(cmd)
	if err != nil {
		// Under wine, creating a process fails now and then on a loaded
		// machine ("Internal error"): no test here proves that a process
		// starts, so the start is tried once more, as a command of its own.
		again := exec.Command(cmd.Path, cmd.Args[1:]...)
		again.Env, again.Dir, again.SysProcAttr, again.Stderr = cmd.Env, cmd.Dir, cmd.SysProcAttr, cmd.Stderr
		cmd = again
		if stdin, stdout, err = start(cmd); err != nil {
			t.Fatal(err)
		}
	}
	c := &Child{Cmd: cmd, Stdin: stdin, lines: make(chan string, 16)}
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

// start starts cmd with pipes to its stdin and from its stdout.
func start(cmd *exec.Cmd) (io.WriteCloser, io.ReadCloser, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	return stdin, stdout, cmd.Start()
}

// Line returns the child's next line of output, failing after 10 s.
func (c *Child) Line(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-c.lines:
		if !ok {
			t.Fatalf("child %d ended without a line", c.Cmd.Process.Pid)
		}
		return l
	case <-time.After(10 * time.Second):
		t.Fatalf("child %d said nothing within 10s", c.Cmd.Process.Pid)
	}
	return ""
}

// Expect fails unless the child's next line is want.
func (c *Child) Expect(t *testing.T, want string) {
	t.Helper()
	if got := c.Line(t); got != want {
		t.Fatalf("child %d said %q, want %q", c.Cmd.Process.Pid, got, want)
	}
}

// Send writes one line to the child's stdin.
func (c *Child) Send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(c.Stdin, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// Copy writes a copy of this test binary at path with mode, for a child
// that must run as another user (who cannot reach the build's cache) or
// under another name.
func Copy(t *testing.T, path string, mode os.FileMode) string {
	t.Helper()
	b, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	return path
}
