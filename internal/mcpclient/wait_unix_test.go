//go:build unix

package mcpclient

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// A wait for a line the process will never log ends as soon as that is
// certain, never at the wait's bound: when the process logged the line
// that rules it out (a process served alone while a test waits for it to
// share), or when it exited. The bound here is far longer than the test.
func TestAWaitEndsWhenItsLineCanNoLongerCome(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		wait         func(context.Context, *Process) (string, error)
		want         string
	}{
		{"served alone", `echo '{"msg":"cannot use the shared server: here: there; serving this client alone"}' >&2; exec cat`,
			func(ctx context.Context, p *Process) (string, error) {
				return p.WaitLogUnless(ctx, "cannot use the shared server", "shared server listening on")
			}, `the process logged instead: {"msg":"cannot use the shared server: here: there; serving this client alone"}`},
		{"exited, WaitLog", `echo 'the last words' >&2; exit 3`,
			func(ctx context.Context, p *Process) (string, error) {
				return p.WaitLog(ctx, "shared server listening on")
			},
			"the process exited (exit status 3); its last log line: the last words"},
		{"exited, WaitLogAny", `exit 0`,
			func(ctx context.Context, p *Process) (string, error) { return p.WaitLogAny(ctx, "a", "b") },
			"the process exited (exit status 0); its last log line: (nothing on stderr)"},
		{"exited, WaitFrame", `echo '{"jsonrpc":"2.0"}'; exit 1`,
			func(ctx context.Context, p *Process) (string, error) {
				f, err := p.WaitFrame(ctx, "an answer", func(f []byte) bool { return strings.Contains(string(f), `"id"`) })
				return string(f), err
			}, "waiting for an answer: the process exited (exit status 1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Start("/bin/sh", []string{"-c", tc.script}, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Kill(context.Background()) })
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			line, err := tc.wait(ctx, p)
			if err == nil || errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("the wait ended with %q, %v; want an error with %q", line, err, tc.want)
			}
		})
	}
}

// A line that came is found whatever came before or after it: the line
// that would rule it out does not, once it is there.
func TestAWaitFindsItsLineBesideTheOneThatWouldRuleItOut(t *testing.T) {
	p, err := Start("/bin/sh", []string{"-c", `echo 'shared server listening on x' >&2; echo 'cannot use the shared server' >&2; exit 0`}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Kill(context.Background()) })
	if _, err := p.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if line, err := p.WaitLogUnless(context.Background(), "cannot use the shared server", "shared server listening on"); err != nil || line != "shared server listening on x" {
		t.Fatalf("%q %v", line, err)
	}
}
