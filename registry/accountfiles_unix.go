//go:build unix

package registry

import (
	"fmt"
	"os"
	"sync"
	"syscall"
)

// accountFiles reads the group and passwd files at its paths (the
// system's, /etc/group and /etc/passwd, or a test's own) once, and again
// only when one of them changed: the rule runs on every election attempt
// that meets a directory its group may write, and two stats cost far less
// than reading and parsing both files.
type accountFiles struct {
	group, passwd string

	mu   sync.Mutex
	seen [2]fileStamp
	db   *accounts
}

// fileStamp tells one version of a file from the next: a file replaced
// (as vigr and usermod do) has another inode, one written in place
// another modification time.
type fileStamp struct {
	dev, ino uint64
	size     int64
	modified int64 // Unix nanoseconds
}

// stampOf stamps the file at path; ok is false when it cannot be stat'ed.
func stampOf(path string) (stamp fileStamp, ok bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, false
	}
	stamp = fileStamp{size: fi.Size(), modified: fi.ModTime().UnixNano()}
	if st, isUnix := fi.Sys().(*syscall.Stat_t); isUnix {
		stamp.dev, stamp.ino = uint64(st.Dev), uint64(st.Ino)
	}
	return stamp, true
}

// check returns the rule ([onlyOwner]) for one trust check: the files
// are stat'ed (and read again if they changed) the first time it is
// asked, and not again, so that a check sees one version of them and
// costs two stats in all. Files that cannot be read make nothing known.
func (f *accountFiles) check() ownerOnly {
	var db *accounts
	return func(gid, owner int) error {
		if db == nil {
			db = f.current()
		}
		return onlyOwner(owner, db.members(gid))
	}
}

// current returns the files' accounts, read again when either changed
// (and every time while one cannot be stat'ed).
func (f *accountFiles) current() *accounts {
	group, okGroup := stampOf(f.group)
	passwd, okPasswd := stampOf(f.passwd)
	stamps := [2]fileStamp{group, passwd}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.db == nil || stamps != f.seen || !okGroup || !okPasswd {
		f.seen, f.db = stamps, f.read()
	}
	return f.db
}

func (f *accountFiles) read() *accounts {
	group, err := os.Open(f.group)
	if err != nil {
		return &accounts{unknown: fmt.Sprintf("the group database cannot be read: %v", err)}
	}
	defer group.Close()
	passwd, err := os.Open(f.passwd)
	if err != nil {
		return &accounts{unknown: fmt.Sprintf("the user database cannot be read: %v", err)}
	}
	defer passwd.Close()
	return parseAccounts(f.group, group, f.passwd, passwd)
}
