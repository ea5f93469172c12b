//go:build unix

package proc

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runLsof is exercised with /bin/sh standing in for lsof, so that its
// handling of exit statuses is checked on every Unix.
func TestRunLsof(t *testing.T) {
	const sh = "/bin/sh"
	ok := []struct{ script, want string }{
		{`printf 'p1\nf3\n'`, "p1\nf3\n"},
		{`exit 1`, ""},                                   // nothing matched
		{`printf 'p1\nf3\n'; exit 1`, "p1\nf3\n"},        // a pid was not found, another was
		{`echo "lsof: WARNING: x" >&2; echo p1`, "p1\n"}, // exit 0 stands
		{`printf '%s|' "$@"`, "-n|-P|a b|"},              // the arguments arrive as given
	}
	for _, tt := range ok {
		out, err := runLsof(sh, 10*time.Second, "-c", tt.script, "sh", "-n", "-P", "a b")
		if err != nil || string(out) != tt.want {
			t.Errorf("%s: %q %v, want %q", tt.script, out, err, tt.want)
		}
	}
	bad := []struct{ script, mention string }{
		{`echo 'lsof: illegal option character: Q' >&2; exit 1`, "illegal option character"},
		{`echo p1; echo 'lsof: can not get PID list' >&2; exit 1`, "can not get PID list"},
		{`exit 2`, "exit status 2"},
		{`kill -9 $$`, "killed"},
	}
	for _, tt := range bad {
		out, err := runLsof(sh, 10*time.Second, "-c", tt.script)
		if !errors.Is(err, ErrListingUnavailable) || !strings.Contains(err.Error(), tt.mention) {
			t.Errorf("%s: %q %v, want ErrListingUnavailable mentioning %q", tt.script, out, err, tt.mention)
		}
	}

	begin := time.Now()
	_, err := runLsof(sh, 200*time.Millisecond, "-c", "exec sleep 30")
	if !errors.Is(err, ErrListingUnavailable) || !strings.Contains(err.Error(), "did not finish within 200ms") {
		t.Errorf("a hanging lsof: %v", err)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("a hanging lsof was waited for %s", d)
	}

	dir := t.TempDir()
	_, err = runLsof(filepath.Join(dir, "lsof"), time.Second, "-v")
	if !errors.Is(err, ErrListingUnavailable) || !strings.Contains(err.Error(), "lsof not found") {
		t.Errorf("a missing lsof: %v", err)
	}
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("not a program"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runLsof(plain, time.Second); !errors.Is(err, ErrListingUnavailable) {
		t.Errorf("an lsof that cannot be executed: %v", err)
	}
}

// FuzzParseProcArgs2 holds the parser to its word on any buffer: no panic,
