package proc

import (
	"errors"
	"syscall"
	"testing"
)

// The codes OpenProcess fails with, as Windows documents them, mean what
// the Signal0 contract says: 87 no such pid (gone), 5 another user's
// process (exists), anything else nothing.
func TestOpenProcessMeaning(t *testing.T) {
	cause := errors.New("recorded")
	tests := []struct {
		code          uintptr
		gone, foreign bool
	}{
		{87, true, false},
		{5, false, true},
		{6, false, false}, // ERROR_INVALID_HANDLE
		{0x57 + 1, false, false},
	}
	for _, tt := range tests {
		err := openProcessMeaning(tt.code, cause)
		if errors.Is(err, syscall.ESRCH) != tt.gone || errors.Is(err, syscall.EPERM) != tt.foreign {
			t.Errorf("code %d: %v; want gone=%v, another user's=%v", tt.code, err, tt.gone, tt.foreign)
		}
		if !tt.gone && !tt.foreign && err != cause {
			t.Errorf("code %d: %v, want the cause unchanged", tt.code, err)
		}
		// The judgement the registry builds on it.
		env := Env{Signal0: func(int) error { return err }, ProcessStart: func(int) (uint64, error) { return 7, nil }, BootID: func() (string, error) { return "b", nil }}
		want := map[bool]Liveness{true: OwnerGone}[tt.gone]
		if tt.foreign {
			want = OwnerAlive
		}
		if got := env.Alive(42, 7, "b"); got != want {
			t.Errorf("code %d: owner %s, want %s", tt.code, got, want)
		}
	}
}

// A FILETIME recorded from a Windows process (2026-11-30 23:40:12.3456789
// UTC) is one absolute instant: a pid recycled a moment later differs.
func TestFiletimeTicks(t *testing.T) {
	const high, low = 0x01dd6251, 0x3cf2a9c5
	if got := filetimeTicks(high, low); got != 0x01dd62513cf2a9c5 {
		t.Errorf("filetimeTicks = %#x", got)
	}
	if filetimeTicks(high, low) == filetimeTicks(high, low+1) {
		t.Error("two creation times 100 ns apart compare equal")
	}
}

// A process's parent started before it; a process holding the parent's pid
// that started after it holds a recycled pid.
func TestParentReplaced(t *testing.T) {
	self := filetimeTicks(0x01dd6251, 0x3cf2a9c5)
	if parentReplaced(self-1, self) {
		t.Error("a parent that started earlier is judged replaced")
	}
	if !parentReplaced(self+1, self) {
		t.Error("a pid holder that started later is judged the parent")
	}
}
