package proc

import (
	"errors"
	"testing"
)

// kinfo_proc values as macOS reports them: p_starttime 1764546012.345678
// for a running process (p_stat SRUN, p_flag P_LP64|P_EXEC 0x4004), one
// working on exiting (P_WEXIT among its flags) and a zombie (SZOMB).
func TestKinfoStart(t *testing.T) {
	got, err := kinfoStart(2, 0x4004, 1764546012, 345678)
	if err != nil || got != 1764546012345678 {
		t.Errorf("running: %d %v", got, err)
	}
	if start, err := kinfoStart(2, 0x4004|0x2000, 1764546012, 345678); !errors.Is(err, ErrProcessEnded) || start != 1764546012345678 {
		t.Errorf("exiting: %d, %v; want its start with ErrProcessEnded", start, err)
	}
	if _, err := kinfoStart(5, 0x4004, 1764546012, 345678); !errors.Is(err, ErrProcessEnded) {
		t.Errorf("zombie: %v, want ErrProcessEnded", err)
	}
	a, _ := kinfoStart(3, 0x4004, 1764546012, 345678)
	b, _ := kinfoStart(3, 0x4004, 1764546012, 345679)
	if a == b {
		t.Error("two starts a microsecond apart compare equal")
	}
}
