package proc

import (
	"errors"
	"testing"
)

// kinfo_proc values as macOS reports them: p_starttime 1764546012.345678
// for a running process (p_stat SRUN) and for a zombie (SZOMB).
func TestKinfoStart(t *testing.T) {
	got, err := kinfoStart(2, 1764546012, 345678)
	if err != nil || got != 1764546012345678 {
		t.Errorf("running: %d %v", got, err)
	}
	if _, err := kinfoStart(5, 1764546012, 345678); !errors.Is(err, ErrProcessEnded) {
		t.Errorf("zombie: %v, want ErrProcessEnded", err)
	}
	a, _ := kinfoStart(3, 1764546012, 345678)
	b, _ := kinfoStart(3, 1764546012, 345679)
	if a == b {
		t.Error("two starts a microsecond apart compare equal")
	}
}
