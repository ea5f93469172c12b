package proc

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestListeningSeesThisProcessOnTheRealHost(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	got, err := ObserveListening([]string{filepath.Base(exe)})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range got.Processes {
		if p.PID != os.Getpid() {
			continue
		}
		start, _ := ProcessStart(p.PID)
		if p.Start != start || p.PPID != os.Getppid() || len(p.Listen) == 0 || p.Listen[0] != ln.Addr().String() {
			t.Fatalf("this process observed as %+v; listening on %s", p, ln.Addr())
		}
		return
	}
	t.Fatalf("this process (pid %d, listening on %s) was not observed: %+v", os.Getpid(), ln.Addr(), got)
}

func TestPresence(t *testing.T) {
	env := func(sig error, start uint64, startErr error) Env {
		return Env{
			Signal0:      func(int) error { return sig },
			ProcessStart: func(int) (uint64, error) { return start, startErr },
		}
	}
	tests := []struct {
		name string
		env  Env
		want Presence
	}{
		{"no such pid", env(syscall.ESRCH, 0, nil), Presence{Known: true}},
		{"a process", env(nil, 77, nil), Presence{Known: true, Exists: true, Start: 77}},
		{"another user's process", env(syscall.EPERM, 77, nil), Presence{Known: true, Exists: true, Start: 77}},
		{"signal 0 fails otherwise", env(syscall.EINVAL, 0, nil), Presence{}},
		{"a process whose start /proc hides", env(nil, 0, os.ErrPermission), Presence{Exists: true}},
		{"a process ended, not yet reaped", env(nil, 0, ErrProcessEnded), Presence{Known: true}},
	}
	for _, tt := range tests {
		if got := tt.env.Presence(12345); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
	if got := (Env{}).Presence(os.Getpid()); !got.Known || !got.Exists || got.Start == 0 {
		t.Errorf("this process: %+v", got)
	}
}
