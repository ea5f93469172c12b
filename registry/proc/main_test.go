package proc

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"testing"

	"go.uber.org/goleak"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testchild"
)

func TestMain(m *testing.M) {
	if role := testchild.Role(); role != "" {
		os.Exit(runChild(role))
	}
	goleak.VerifyTestMain(m)
}

// runChild is the body of a helper process: it speaks in lines on stdout
// and lives until its stdin ends (or it is killed).
func runChild(role string) int {
	say := func(format string, args ...any) { fmt.Printf(format+"\n", args...) }
	switch role {
	case "sleep":
		say("ready")
	case "middle":
		// A parent that starts an orphan-to-be sharing its stdin and
		// stdout, then waits to be killed.
		orphan := exec.Command(os.Args[0], "-test.run=^$")
		orphan.Env = append(os.Environ(), testchild.RoleEnv+"=orphan")
		orphan.Stdin, orphan.Stdout, orphan.Stderr = os.Stdin, os.Stdout, os.Stderr
		if err := orphan.Start(); err != nil {
			say("error: %v", err)
			return 1
		}
	case "orphan":
		gone := WatchParent(context.Background())
		say("watching")
		say("orphaned: %s", <-gone)
	case "launcher":
		// A launcher that starts a process sharing its stdin and stdout,
		// and exits at once.
		late := exec.Command(os.Args[0], "-test.run=^$")
		late.Env = append(os.Environ(), testchild.RoleEnv+"=late-orphan")
		late.Stdin, late.Stdout, late.Stderr = os.Stdin, os.Stdout, os.Stderr
		if err := late.Start(); err != nil {
			say("error: %v", err)
			return 1
		}
		say("launched")
		return 0
	case "late-orphan":
		// Its parent is gone by the time it watches it (the test says
		// "go" once it has seen the launcher exit).
		in := bufio.NewReader(os.Stdin)
		if line, err := in.ReadString('\n'); err != nil || line != "go\n" {
			say("error: %q %v", line, err)
			return 1
		}
		select {
		case reason := <-WatchParent(context.Background()):
			say("orphaned: %s", reason)
		default:
			say("watching")
		}
		_, _ = io.Copy(io.Discard, in)
		say("stdin ended")
		return 0
	case "listen":
		// A server: a socket listening on loopback.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			say("error: %v", err)
			return 1
		}
		defer l.Close()
		say("ready")
	case "scan":
		// What this process's user sees of its majordomus-mcp servers.
		got, err := ObserveListening([]string{"majordomus-mcp"})
		if err != nil {
			say("error: %v", err)
			return 1
		}
		out, _ := json.Marshal(got)
		say("%s", out)
		return 0
	default:
		say("error: unknown role %q", role)
		return 2
	}
	_, _ = io.Copy(io.Discard, os.Stdin) // until the test ends
	return 0
}

// startChild runs this test binary in role.
func startChild(t *testing.T, role string) *testchild.Child {
	t.Helper()
	return testchild.Start(t, role)
}
