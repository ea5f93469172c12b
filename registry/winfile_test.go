package registry

import (
	"errors"
	"testing"
	"time"
)

func TestWindowsBusy(t *testing.T) {
	for code, want := range map[uintptr]bool{5: true, 32: true, 33: true, 2: false, 3: false, 87: false} {
		if got := windowsBusy(code); got != want {
			t.Errorf("windowsBusy(%d) = %v, want %v", code, got, want)
		}
	}
}

func TestWindowsEphemeral(t *testing.T) {
	for code, want := range map[uintptr]bool{
		2: true, 5: true, 32: true, 33: true, // not found, denied, sharing, lock
		3: false, 87: false, 112: false, // path not found, invalid parameter, disk full
	} {
		if got := windowsEphemeral(code); got != want {
			t.Errorf("windowsEphemeral(%d) = %v, want %v", code, got, want)
		}
	}
}

// A refusal that passes is retried a bounded number of times with growing
// pauses; one that does not is returned at once.
func TestRetryEphemeral(t *testing.T) {
	passing, lasting := errors.New("sharing violation"), errors.New("disk full")
	ephemeral := func(err error) bool { return err == passing }
	var pauses []time.Duration
	sleep := func(d time.Duration) { pauses = append(pauses, d) }

	calls := 0
	err := retryEphemeral(func() error {
		if calls++; calls < 4 {
			return passing
		}
		return nil
	}, ephemeral, renameAttempts, sleep)
	if err != nil || calls != 4 || len(pauses) != 3 || pauses[0] != time.Millisecond || pauses[2] != 4*time.Millisecond {
		t.Errorf("passing refusal: err %v after %d calls, pauses %v", err, calls, pauses)
	}

	calls, pauses = 0, nil
	err = retryEphemeral(func() error { calls++; return passing }, ephemeral, renameAttempts, sleep)
	var total time.Duration
	for _, p := range pauses {
		total += p
	}
	if err != passing || calls != renameAttempts || total > 2*time.Second {
		t.Errorf("refused throughout: err %v after %d calls, %s of pauses", err, calls, total)
	}

	calls = 0
	if err := retryEphemeral(func() error { calls++; return lasting }, ephemeral, renameAttempts, sleep); err != lasting || calls != 1 {
		t.Errorf("lasting refusal: err %v after %d calls", err, calls)
	}
}
