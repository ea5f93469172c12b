//go:build unix

package main

import (
	"os"
	"slices"
	"syscall"
	"testing"
)

// A signal the process was started ignoring is not handled: it stays
// ignored. SIGTERM is handled whatever its starter did.
func TestASignalStartedIgnoredStaysIgnored(t *testing.T) {
	for _, tc := range []struct {
		ignored []os.Signal
		want    []os.Signal
	}{
		{nil, []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP}},
		{[]os.Signal{syscall.SIGHUP}, []os.Signal{syscall.SIGTERM, syscall.SIGINT}},                  // nohup
		{[]os.Signal{syscall.SIGINT}, []os.Signal{syscall.SIGTERM, syscall.SIGHUP}},                  // sh -c 'cmd &'
		{[]os.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM}, []os.Signal{syscall.SIGTERM}}, // SIGTERM always
	} {
		got := handled(func(sig os.Signal) bool { return slices.Contains(tc.ignored, sig) })
		if !slices.Equal(got, tc.want) {
			t.Errorf("ignoring %v at start: handled %v, want %v", tc.ignored, got, tc.want)
		}
	}
}
