package layer

import "syscall"

// statTimes returns a file's change and modification times, in nanoseconds.
func statTimes(st *syscall.Stat_t) (ctime, mtime int64) { return st.Ctim.Nano(), st.Mtim.Nano() }
