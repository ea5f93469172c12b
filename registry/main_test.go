package registry

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/majordomus-mcp/majordomus-mcp/internal/testchild"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// childLease names the lease path of a helper process (startChild).
const childLease = "REGISTRY_TEST_LEASE"

func TestMain(m *testing.M) {
	if role := testchild.Role(); role != "" {
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
	case "lock":
		l, err := lockFile(context.Background(), LockPath(path), 10*time.Second)
		if err != nil {
			say("error: %v", err)
			return 1
		}
		defer l.Close()
		say("locked")
		_, _ = io.Copy(io.Discard, in)
	case "acquire":
		say("ready")
		if !waitGo() {
			return 1
		}
		say("%s", acquireOutcome(lf.Acquire(doc)))
	case "takeover":
		o := &Observer{Path: path}
		obs, err := o.Observe(context.Background())
		if err != nil || !obs.Verdict.Class.TakesOver() {
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
	case "watch":
		// Watches the lease (file events only: the fallback is an hour
		// away) and says what each Change holds, until it is killed.
		changes, err := Watch(context.Background(), path, 10*time.Millisecond, time.Hour)
		if err != nil {
			say("error: %v", err)
			return 1
		}
		for c := range changes {
			say("change %s %q", c.Found, c.Raw)
		}
	case "draw":
		// Draws peer numbers until it is killed.
		say("drawing")
		for {
			if _, err := NextPeer(path, 0); err != nil {
				say("error: %v", err)
				return 1
			}
		}
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

// startChild runs this test binary in role, on the lease at leasePath.
func startChild(t *testing.T, role, leasePath string) *testchild.Child {
	t.Helper()
	return testchild.Start(t, role, childLease+"="+leasePath)
}
