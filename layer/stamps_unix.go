//go:build linux || darwin

package layer

import (
	"io/fs"
	"syscall"
)

// stampOf returns fi's stamp, or false where the system does not give one.
func stampOf(fi fs.FileInfo) (stamp, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return stamp{}, false
	}
	ctime, mtime := statTimes(st)
	return stamp{dev: uint64(st.Dev), ino: st.Ino, size: st.Size, ctime: ctime, mtime: mtime}, true
}
