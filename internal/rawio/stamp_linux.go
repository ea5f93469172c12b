package rawio

import (
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Stamp is what a file's metadata says of which file it is and of its
// last change: device, inode, size and modification time.
type Stamp struct {
	devMajor, devMinor uint32
	ino, size          uint64
	mtime              unix.StatxTimestamp
}

// Same reports whether s and t are stamps of the same file, unchanged.
func (s Stamp) Same(t Stamp) bool { return s == t }

// stampMask is what Lstat asks statx(2) for.
const stampMask = unix.STATX_INO | unix.STATX_SIZE | unix.STATX_MTIME

// Lstat stamps the file at path (a symbolic link itself, not what it
// names), with statx(2) called raw; where statx is refused (an old
// kernel, a filter), with os.Lstat. Only for a file stamped again and
// again, whose inode stays cached: doc.go says what it costs otherwise.
func Lstat(path string) (Stamp, error) {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return Stamp{}, err
	}
	var st unix.Statx_t
	dirfd := unix.AT_FDCWD
	_, _, e := unix.RawSyscall6(unix.SYS_STATX, uintptr(dirfd), uintptr(unsafe.Pointer(p)),
		unix.AT_SYMLINK_NOFOLLOW|unix.AT_STATX_SYNC_AS_STAT, stampMask, uintptr(unsafe.Pointer(&st)), 0)
	switch {
	case e == unix.ENOSYS || e == unix.EPERM:
		return lstat(path)
	case e != 0:
		return Stamp{}, &os.PathError{Op: "lstat", Path: path, Err: e}
	}
	return Stamp{st.Dev_major, st.Dev_minor, st.Ino, st.Size, st.Mtime}, nil
}

// lstat is Lstat through os.
func lstat(path string) (Stamp, error) {
	info, err := os.Lstat(path)
	if err != nil {
		return Stamp{}, err
	}
	st := info.Sys().(*syscall.Stat_t)
	return Stamp{unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), uint64(st.Ino), uint64(st.Size),
		unix.StatxTimestamp{Sec: int64(st.Mtim.Sec), Nsec: uint32(st.Mtim.Nsec)}}, nil
}
