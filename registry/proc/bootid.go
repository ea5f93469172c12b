package proc

import (
	"strconv"
	"strings"
	"time"
)

// A boot identity is either exact (Linux's boot_id, macOS's
// kern.bootsessionuuid: a fresh UUID every boot) or a boot time computed
// as now minus the time since boot (Windows), which two readers get a few
// milliseconds apart, and which moves with a step of the system clock.

// bootTimePrefix marks a computed boot time: "boot@<unix seconds>".
const bootTimePrefix = "boot@"

// bootTimeSlack is how far two computed boot times of one boot may differ.
// Judging another boot "the same" costs nothing where a process's start
// is an absolute time (Windows): the pid's start time still decides. The
// reverse would pass a live owner for gone, so the slack is generous: it
// also absorbs the clock being set by minutes.
const bootTimeSlack = 10 * time.Minute

// bootTimeID is the boot identity of a boot that began at t.
func bootTimeID(t time.Time) string {
	return bootTimePrefix + strconv.FormatInt(t.Unix(), 10)
}

// SameBoot reports whether two boot identities name the same boot: exact
// ones are equal, computed boot times lie within bootTimeSlack.
func SameBoot(a, b string) bool {
	if a == b {
		return true
	}
	ta, oka := bootTime(a)
	tb, okb := bootTime(b)
	return oka && okb && (time.Duration(ta-tb)*time.Second).Abs() <= bootTimeSlack
}

func bootTime(id string) (int64, bool) {
	s, ok := strings.CutPrefix(id, bootTimePrefix)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}
