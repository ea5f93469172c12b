package proc

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The process half of the Windows observation, given a socket table that
// says this process listens (TestListeningSeesThisProcessOnTheRealHost
// reads the real table): the test binary stands for a majordomus-mcp
// server, named as given, and as a caller naming it without ".exe" in
// another case would.
func TestObserveProcessesOnWindows(t *testing.T) {
	const addr = "127.0.0.1:8741"
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Base(exe)
	start, err := ProcessStart(os.Getpid())
	if err != nil || start == 0 {
		t.Fatalf("ProcessStart(self) = %d, %v", start, err)
	}
	sockets := map[uint32][]string{uint32(os.Getpid()): {addr}}
	for _, names := range [][]string{{base}, {strings.ToUpper(strings.TrimSuffix(base, ".exe"))}} {
		got, err := observeProcesses(names, sockets)
		if err != nil {
			t.Fatalf("observeProcesses(%q): %v", names, err)
		}
		i := slices.IndexFunc(got.Processes, func(p ListeningProcess) bool { return p.PID == os.Getpid() })
		if i < 0 {
			t.Fatalf("observeProcesses(%q): this process (pid %d) was not observed: %+v", names, os.Getpid(), got)
		}
		p := got.Processes[i]
		if p.Start != start || p.PPID != os.Getppid() || !slices.Equal(p.Listen, []string{addr}) ||
			!strings.EqualFold(filepath.Clean(p.Executable), filepath.Clean(exe)) {
			t.Fatalf("observeProcesses(%q): this process observed as %+v; started at %d, child of %d, running %s",
				names, p, start, os.Getppid(), exe)
		}
		// The command line is best effort, but where it is read it is ours.
		if len(p.Args) > 0 && !slices.Equal(p.Args, os.Args) {
			t.Errorf("observeProcesses(%q): args %q, want %q", names, p.Args, os.Args)
		}
	}
}

func TestObserveListeningOfNoSuchProgramOnWindows(t *testing.T) {
	got, err := ObserveListening([]string{"no-such-majordomus-program.exe"})
	if err != nil {
		if errors.Is(err, ErrListingUnavailable) {
			t.Fatalf("the host's sockets cannot be listed: %v", err)
		}
		t.Fatal(err)
	}
	if len(got.Processes) != 0 || len(got.Uninspectable) != 0 {
		t.Fatalf("observed %+v for a program that does not run", got)
	}
}
