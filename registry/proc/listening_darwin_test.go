package proc

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The macOS counterpart of TestListeningSeesThisProcessOnTheRealHost, with
// what only macOS's observer adds to check: the test binary stands for a
// majordomus-mcp server, and the real /usr/sbin/lsof is run.
func TestObserveListeningSeesThisProcessOnDarwin(t *testing.T) {
	loopback, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer loopback.Close()
	// ":0" is one dual-stack IPv6 socket, which lsof writes "*:port".
	wildcard, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer wildcard.Close()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	start, err := ProcessStart(os.Getpid())
	if err != nil || start == 0 {
		t.Fatalf("ProcessStart(self) = %d, %v", start, err)
	}
	got, err := ObserveListening([]string{filepath.Base(exe)})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(got.Uninspectable, os.Getpid()) {
		t.Fatalf("this process is uninspectable: %+v", got)
	}
	i := slices.IndexFunc(got.Processes, func(p ListeningProcess) bool { return p.PID == os.Getpid() })
	if i < 0 {
		t.Fatalf("this process (pid %d, listening on %s and %s) was not observed: %+v", os.Getpid(), loopback.Addr(), wildcard.Addr(), got)
	}
	p := got.Processes[i]
	want := []string{loopback.Addr().String(), wildcard.Addr().String()}
	slices.Sort(want)
	if p.Start != start || p.PPID != os.Getppid() || !slices.Equal(p.Listen, want) {
		t.Fatalf("this process observed as %+v; listening on %q, started at %d, child of %d", p, want, start, os.Getppid())
	}
	if filepath.Base(p.Executable) != filepath.Base(exe) {
		t.Errorf("executable %q, want one named %q", p.Executable, filepath.Base(exe))
	}
	if !slices.Equal(p.Args, os.Args) {
		t.Errorf("args %q, want %q", p.Args, os.Args)
	}
	// lsof gives the directory's real path; the test may run below a
	// symbolic link (/var is /private/var).
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if real, err := filepath.EvalSymlinks(wd); err == nil {
		wd = real
	}
	if p.Cwd != wd {
		t.Errorf("cwd %q, want %q", p.Cwd, wd)
	}
	t.Logf("observed %+v", p)
}

func TestObserveListeningOfNoSuchProgramOnDarwin(t *testing.T) {
	got, err := ObserveListening([]string{"no-such-majordomus-program"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Processes) != 0 || len(got.Uninspectable) != 0 {
		t.Fatalf("observed %+v for a program that does not run", got)
	}
}

// withLsof points the observer at another lsof for the test's duration.
func withLsof(t *testing.T, path string) {
	t.Helper()
	saved := darwinLsof
	darwinLsof = path
	t.Cleanup(func() { darwinLsof = saved })
}

func TestObserveListeningWithoutLsofIsUnavailable(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	withLsof(t, filepath.Join(t.TempDir(), "lsof"))
	got, err := ObserveListening([]string{filepath.Base(exe)})
	if !errors.Is(err, ErrListingUnavailable) {
		t.Fatalf("without lsof: %+v %v, want ErrListingUnavailable", got, err)
	}
}

// An lsof that answers nothing lists this process nowhere: it runs, so
// whether it serves cannot be told.
func TestObserveListeningWithSilentLsofIsInDoubt(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	silent := filepath.Join(t.TempDir(), "lsof")
	if err := os.WriteFile(silent, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	withLsof(t, silent)
	got, err := ObserveListening([]string{filepath.Base(exe)})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Processes) != 0 || !slices.Contains(got.Uninspectable, os.Getpid()) {
		t.Fatalf("with a silent lsof: %+v, want this process (pid %d) uninspectable", got, os.Getpid())
	}
}
