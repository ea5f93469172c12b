package proc

import (
	"strconv"
	"strings"
	"time"
)

// A boot identity is either exact (Linux's boot_id, macOS's
// kern.bootsessionuuid: a fresh UUID every boot) or a boot time computed
// as now minus the time since boot (Windows), which two readers get a few
// milliseconds apart, and which moves with every step of the system clock
// (a clock set hours right by time sync, on a machine that also boots
// another system). So a computed boot time tells nothing: two of them are
// the same boot, whatever they say. That costs nothing, for Windows gives
// a process's start as an absolute time, which still tells a recycled pid
// apart; judging two boots different would pass a live owner for gone.

// bootTimePrefix marks a computed boot time: "boot@<unix seconds>".
const bootTimePrefix = "boot@"

// bootTimeID is the boot identity of a boot that began at t.
func bootTimeID(t time.Time) string {
	return bootTimePrefix + strconv.FormatInt(t.Unix(), 10)
}

// SameBoot reports whether two boot identities name the same boot: exact
// ones are equal, and two computed boot times always are.
func SameBoot(a, b string) bool {
	return a == b || computed(a) && computed(b)
}

// computed reports whether id is a computed boot time.
func computed(id string) bool {
	s, ok := strings.CutPrefix(id, bootTimePrefix)
	_, err := strconv.ParseInt(s, 10, 64)
	return ok && err == nil
}
