package proc

import (
	"testing"
	"time"
)

func TestSameBoot(t *testing.T) {
	boot := time.Date(2026, 11, 30, 23, 13, 24, 713e6, time.UTC)
	tests := []struct {
		a, b string
		want bool
	}{
		{"2c1f8a1e-0d7b-4a6e-9f1e-6f4b2d9c1a55", "2c1f8a1e-0d7b-4a6e-9f1e-6f4b2d9c1a55", true},
		{"2c1f8a1e-0d7b-4a6e-9f1e-6f4b2d9c1a55", "7d0e3b52-5c1a-4a44-8e43-1b8f0c6b2e01", false},
		// Two readers of one Windows boot, a tick apart, across a second.
		{bootTimeID(boot.Add(-500 * time.Millisecond)), bootTimeID(boot.Add(600 * time.Millisecond)), true},
		// The clock set forward by five minutes since the lease was written.
		{bootTimeID(boot), bootTimeID(boot.Add(5 * time.Minute)), true},
		// ... or by hours (time sync on a machine whose clock was off):
		// a computed boot time tells nothing, the start time decides.
		{bootTimeID(boot), bootTimeID(boot.Add(3 * time.Hour)), true},
		{bootTimeID(boot), "2c1f8a1e-0d7b-4a6e-9f1e-6f4b2d9c1a55", false},
		{"boot@x", "boot@y", false},
		{"", bootTimeID(boot), false},
	}
	for _, tt := range tests {
		if got := SameBoot(tt.a, tt.b); got != tt.want {
			t.Errorf("SameBoot(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
	if got, err := BootID(); err != nil || !SameBoot(got, got) {
		t.Errorf("BootID() = %q, %v", got, err)
	}
}
