package proc

import (
	"errors"
	"os"
	"strconv"
	"syscall"
	"testing"
)

func TestAlive_ThisProcess(t *testing.T) {
	var self struct {
		PID    int
		Start  uint64
		BootID string
	}
	var err error
	self.PID = os.Getpid()
	if self.Start, err = ProcessStart(self.PID); err != nil {
		t.Fatal(err)
	}
	if self.BootID, err = BootID(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		pid   int
		start uint64
		boot  string
		want  Liveness
	}{
		{"as recorded", self.PID, self.Start, self.BootID, OwnerAlive},
		{"another start time (a recycled pid)", self.PID, self.Start + 1, self.BootID, OwnerGone},
		{"another boot", self.PID, self.Start, "00000000-0000-0000-0000-000000000000", OwnerGone},
		{"no start time recorded", self.PID, 0, self.BootID, OwnerAlive},
		{"no boot id recorded", self.PID, self.Start, "", OwnerAlive},
		{"no pid recorded", 0, self.Start, self.BootID, OwnerUnknown},
		{"a negative pid", -1, 0, "", OwnerUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (Env{}).Alive(tt.pid, tt.start, tt.boot); got != tt.want {
				t.Errorf("Alive(%d, %d, %q) = %s, want %s", tt.pid, tt.start, tt.boot, got, tt.want)
			}
		})
	}
}

func TestAlive_ADeadChild(t *testing.T) {
	c := startChild(t, "sleep")
	c.Expect(t, "ready")
	pid := c.Cmd.Process.Pid
	start, err := ProcessStart(pid)
	if err != nil {
		t.Fatal(err)
	}
	boot, err := BootID()
	if err != nil {
		t.Fatal(err)
	}
	if got := (Env{}).Alive(pid, start, boot); got != OwnerAlive {
		t.Fatalf("a running child is %s", got)
	}
	c.Stdin.Close()
	if err := c.Cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	if got := (Env{}).Alive(pid, start, boot); got != OwnerGone {
		t.Errorf("a reaped child is %s, want gone", got)
	}
}

// goneAfter is a signal 0 that finds the process n times, then no more.
func goneAfter(n int) func(int) error {
	return func(int) error {
		if n > 0 {
			n--
			return nil
		}
		return syscall.ESRCH
	}
}

func TestEnvAlive_Fakes(t *testing.T) {
	ours := func() (string, error) { return "boot-a", nil }
	startIs := func(v uint64, err error) func(int) (uint64, error) {
		return func(int) (uint64, error) { return v, err }
	}
	tests := []struct {
		name string
		env  Env
		want Liveness
	}{
		{"exists, same start", Env{Signal0: func(int) error { return nil }, ProcessStart: startIs(7, nil), BootID: ours}, OwnerAlive},
		{"another user's process (EPERM)", Env{Signal0: func(int) error { return syscall.EPERM }, ProcessStart: startIs(7, nil), BootID: ours}, OwnerAlive},
		{"no such process", Env{Signal0: func(int) error { return syscall.ESRCH }, BootID: ours}, OwnerGone},
		{"recycled pid", Env{Signal0: func(int) error { return nil }, ProcessStart: startIs(8, nil), BootID: ours}, OwnerGone},
		{"/proc will not say", Env{Signal0: func(int) error { return syscall.EPERM }, ProcessStart: startIs(0, os.ErrNotExist), BootID: ours}, OwnerUnknown},
		{"reaped between kill and /proc", Env{Signal0: goneAfter(1), ProcessStart: startIs(0, os.ErrNotExist), BootID: ours}, OwnerGone},
		{"kill fails oddly", Env{Signal0: func(int) error { return syscall.EINVAL }, BootID: ours}, OwnerUnknown},
		{"our boot id unknown", Env{Signal0: func(int) error { return nil }, ProcessStart: startIs(7, nil), BootID: func() (string, error) { return "", errors.New("no /proc") }}, OwnerAlive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.env.Alive(42, 7, "boot-a"); got != tt.want {
				t.Errorf("Alive = %s, want %s", got, tt.want)
			}
		})
	}
	other := Env{Signal0: func(int) error { t.Error("signalled a pid of another boot"); return nil }, BootID: ours}
	if got := other.Alive(42, 7, "boot-b"); got != OwnerGone {
		t.Errorf("another boot = %s, want gone", got)
	}
}

func TestParseStat(t *testing.T) {
	fields := "S 1 2 3 4 5 4194560 7 8 9 10 11 12 13 14 15 16 17 18 987654 20 21" // field 9, the flags: a live process's
	for _, comm := range []string{"(sh)", "(a b) c)", "((x)))", "()"} {
		line := "123 " + comm + " " + fields + "\n"
		got, err := parseStat([]byte(line))
		if err != nil || got != 987654 {
			t.Errorf("parseStat(%q) = %d, %v; want 987654", line, got, err)
		}
	}
	// Read from a Go process killed -9, after its sockets were closed and
	// before it was a zombie: state R, PF_EXITING among its flags.
	exiting := "18295 (zexp) R 18164 18129 28499 0 -1 4195596 3201 0 0 0 2 4 0 0 20 0 1 0 3371537 0 0 18446744073709551615 0 0 0 0 0 0 0 0 2143420159 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 9\n"
	if start, err := parseStat([]byte(exiting)); !errors.Is(err, ErrProcessEnded) || start != 3371537 {
		t.Errorf("an exiting process: %d, %v; want its start 3371537 with ErrProcessEnded", start, err)
	}
	for _, bad := range []string{"", "1 (x) S 1 2", "1 (x) " + fields[:len(fields)-len(" 987654 20 21")] + " x 20 21"} {
		if _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q) succeeded", bad)
		}
	}
	if _, err := ProcessStart(os.Getpid()); err != nil {
		t.Errorf("ProcessStart(self): %v", err)
	}
	if _, err := ProcessStart(1 << 30); err == nil {
		t.Errorf("ProcessStart(%s) succeeded", strconv.Itoa(1<<30))
	}
}

// A pid no process can have (beyond pid_t) names no process: it must not
// be truncated to another one's (2^32+1 is pid 1 to kill(2); 2^32-1 is
// -1, every process; 2^40 is 0, this process group), whose answer would
// make a garbage lease's owner "cannot be told", so that the lease is
// waited for as busy instead of taken over as stale.
func TestAPidBeyondPidTNamesNoProcess(t *testing.T) {
	big := int64(1) << 32
	for _, p := range []int64{big + 1, big - 1, big << 8} {
		pid := int(p)
		if int64(pid) != p {
			continue // an int cannot hold it here: no lease can name it
		}
		if got := (Env{}).Presence(pid); !got.Known || got.Exists {
			t.Errorf("Presence(%d) = %+v; want known not to exist", pid, got)
		}
		if got := (Env{}).Alive(pid, 5, ""); got != OwnerGone {
			t.Errorf("Alive(%d) = %v; want gone", pid, got)
		}
	}
}
