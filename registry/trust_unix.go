//go:build unix

package registry

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Trusted says why the lease at leasePath must not be used, or nil
// (docs/security.md). It checks the directories themselves, each opened
// from the one above without following a link, not only their names:
//   - no component from .ai/local down to the lease directory is a
//     symbolic link;
//   - every directory on the way, from / down, is this user's or root's
//     and nobody else may write it unless it is sticky ([onTheWay]), so
//     that no other user can swap what a checked path names;
//   - the lease directory, when it exists, is this process's user's and
//     nobody else may write it;
//   - a directory's group may write it when that group's only member is
//     its owner, as the system's user and group databases say
//     ([systemGroups]; on macOS never);
//   - the lease in it, when there is one, was written by this user;
//   - the path still names the directory that was checked.
//
// A lease another user could write or wrote is never judged, taken over or
// attached to, and nothing is made or removed through a link: the client
// is served alone with the reason. What cannot be read is left to the
// election, which says why in its own words.
func Trusted(leasePath string) error { return trustedWith(leasePath, systemGroups()) }

// trustedWith is Trusted with the groups' members from groups.
func trustedWith(leasePath string, groups ownerOnly) error {
	dir := filepath.Dir(leasePath)
	above := ancestorsRefused(dir, groups)
	fd, err := openLinkFree(dir, false, groups)
	if fd >= 0 {
		defer unix.Close(fd)
	}
	var linked *linkedError
	var untrusted *untrustedError
	switch {
	case errors.As(err, &linked):
		return err
	case errors.As(err, &untrusted):
		return refused(append(above, untrusted.reason)) // every directory to fix, at once
	case len(above) > 0:
		return refused(above)
	case err != nil || fd < 0:
		return nil // missing (this process creates it, 0700), or unreadable
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil
	}
	me := os.Geteuid()
	if int(st.Uid) != me {
		return fmt.Errorf("the lease directory %s belongs to another user (uid %d; this process runs as uid %d)", dir, st.Uid, me)
	}
	perm := fs.FileMode(st.Mode & 0o777)
	if perm&0o002 != 0 {
		return fmt.Errorf("the lease directory %s is writable by other users (mode %v); chmod o-w %s removes that", dir, perm, dir)
	}
	if err := groupMayWrite(dir, ownedOf(st, func() []string { return aclWriters(fd, "", int(st.Uid), groups) }), groups); err != nil {
		return fmt.Errorf("the lease directory %s %w", dir, err)
	}
	var byName unix.Stat_t
	if err := unix.Stat(dir, &byName); err != nil || byName.Dev != st.Dev || byName.Ino != st.Ino {
		return fmt.Errorf("the lease directory %s was replaced while it was checked", dir)
	}
	lease, err := unix.Openat(fd, filepath.Base(leasePath), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil // none, or a link, which the judge calls corrupt and removes itself, never its target
	}
	defer unix.Close(lease)
	var ls unix.Stat_t
	if unix.Fstat(lease, &ls) != nil || ls.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil
	}
	if int(ls.Uid) != me {
		return fmt.Errorf("the lease %s was written by another user (uid %d; this process runs as uid %d)", leasePath, ls.Uid, me)
	}
	if perm := fs.FileMode(ls.Mode & 0o777); perm&0o002 != 0 {
		return fmt.Errorf("the lease %s is writable by other users (mode %v)", leasePath, perm)
	}
	return nil
}

// ancestorsRefused says, with onTheWay, why each of the directory the
// link-free components of the lease directory dir are reached from (.ai)
// and the directories above it, their links resolved, is not trusted,
// from / down; openLinkFree checks those below, on what it opened.
//
// When .ai is a link, the directories that hold it (the checkout and those
// above it, by the name the lease is reached by) are on the way too:
// whoever may write the checkout may put another .ai there between the
// check and the use.
func ancestorsRefused(dir string, groups ownerOnly) (reasons []string) {
	top, _ := linkFreePath(dir)
	real, err := filepath.EvalSymlinks(top)
	if err != nil {
		return nil // missing or unreadable: the election says why
	}
	me := os.Geteuid()
	seen := map[string]bool{}
	check := func(p string) {
		if seen[p] {
			return
		}
		seen[p] = true
		var st unix.Stat_t
		// a link's own mode means nothing: the directory holding it is checked
		if err := unix.Lstat(p, &st); err == nil && st.Mode&unix.S_IFMT != unix.S_IFLNK {
			if err := onTheWay(p, ownedOf(st, func() []string { return aclWriters(-1, p, int(st.Uid), groups) }), me, groups); err != nil {
				reasons = append(reasons, err.Error())
			}
		}
	}
	// every directory a name is looked up in on the way, link after link
	// (the checkout holding a linked .ai among them), from / down; then
	// where the links end, and those above it
	for _, p := range lookedUpIn(top) {
		check(p)
	}
	var above []string
	for p := real; ; p = filepath.Dir(p) {
		above = append([]string{p}, above...)
		if filepath.Dir(p) == p {
			break
		}
	}
	for _, p := range above {
		check(p)
	}
	return reasons
}

// ownedOf is a stat's owner, group, permissions and sticky bit, and whom
// its ACL lets write it (acl), asked only when its group bits allow
// writing.
func ownedOf(st unix.Stat_t, acl func() []string) owned {
	mode := fs.FileMode(st.Mode & 0o777)
	if st.Mode&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	o := owned{uid: int(st.Uid), gid: int(st.Gid), mode: mode}
	if mode&0o020 != 0 {
		o.aclWriters = acl()
	}
	return o
}

// makeLeaseDir creates the lease directory dir and what is missing below
// .ai/local (0700), each component made and opened from the one above
// without following a link: nothing is ever created through one. The
// directory gets its .gitignore (ignore.go) when it has none.
func makeLeaseDir(dir string) error {
	fd, err := openLinkFree(dir, true, systemGroups())
	if err != nil {
		return err
	}
	_ = ignoreAt(fd) // best effort (ignore.go)
	return unix.Close(fd)
}

// ignoreAt writes the .gitignore of the lease directory open at fd when
// nothing is at its name: into a temporary file made in that directory,
// then linked into place (created exclusively where there are no hard
// links), never through a link.
func ignoreAt(fd int) error {
	var st unix.Stat_t
	if err := unix.Fstatat(fd, ignoreName, &st, unix.AT_SYMLINK_NOFOLLOW); !errors.Is(err, unix.ENOENT) {
		return err // there already, whatever it is, or unreadable
	}
	const create = unix.O_WRONLY | unix.O_CREAT | unix.O_EXCL | unix.O_NOFOLLOW | unix.O_CLOEXEC
	tmp := "." + ignoreName + "." + rand.Text() + ".tmp"
	tfd, err := unix.Openat(fd, tmp, create, 0o600)
	if err != nil {
		return err
	}
	defer unix.Unlinkat(fd, tmp, 0)
	if err := writeSynced(os.NewFile(uintptr(tfd), tmp), []byte(ignoreText)); err != nil {
		return err
	}
	err = unix.Linkat(fd, tmp, fd, ignoreName, 0)
	if err == nil || errors.Is(err, unix.EEXIST) {
		return nil
	}
	ifd, err := unix.Openat(fd, ignoreName, create, 0o600)
	if err != nil {
		return err
	}
	if err := writeSynced(os.NewFile(uintptr(ifd), ignoreName), []byte(ignoreText)); err != nil {
		_ = unix.Unlinkat(fd, ignoreName, 0)
		return err
	}
	return nil
}

// linkedError says that a component of the lease directory's path is a
// symbolic link.
type linkedError struct{ path string }

func (e *linkedError) Error() string {
	return e.path + " is a symbolic link, which is never followed"
}

// openLinkFree opens dir through the components linkFreePath names, each
// from the one above with O_NOFOLLOW, creating those missing (0700) when
// create is set, and checks each but dir itself (whose rule is stricter)
// with onTheWay, groups saying who is in a group, on what it opened. It returns the directory's descriptor;
// or -1 and nil when a component is missing and create is not set; or an
// error: a *linkedError when a component is a link, an *untrustedError
// naming every one that fails onTheWay (nothing is made below one).
func openLinkFree(dir string, create bool, groups ownerOnly) (int, error) {
	top, names := linkFreePath(dir)
	if create {
		// above .ai/local, links are the user's business (see linkFreePath)
		if err := topIsThere(top); err != nil {
			return -1, err
		}
	}
	fd, err := unix.Open(top, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: top, Err: err}
	}
	at := top
	var reasons []string // of the components that failed onTheWay
	for i, name := range names {
		at = filepath.Join(at, name)
		next, err := openDirAt(fd, name)
		if errors.Is(err, unix.ENOENT) && create && reasons == nil {
			if err := unix.Mkdirat(fd, name, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
				unix.Close(fd)
				return -1, &fs.PathError{Op: "mkdir", Path: at, Err: err}
			}
			next, err = openDirAt(fd, name)
		}
		linked := err != nil && isLinkAt(fd, name)
		unix.Close(fd)
		switch {
		case err == nil:
			fd = next
			if i < len(names)-1 {
				var untrusted *untrustedError
				if err := onTheWayAt(fd, at, groups); errors.As(err, &untrusted) {
					reasons = append(reasons, untrusted.reason)
				} else if err != nil {
					unix.Close(fd)
					return -1, err
				}
			}
		case linked:
			return -1, &linkedError{path: at}
		case reasons != nil:
			return -1, refused(reasons)
		case errors.Is(err, unix.ENOENT) && !create:
			return -1, nil
		default:
			return -1, &fs.PathError{Op: "open", Path: at, Err: err}
		}
	}
	if reasons != nil {
		unix.Close(fd)
		return -1, refused(reasons)
	}
	return fd, nil
}

// onTheWayAt is onTheWay for the opened directory fd, named at.
func onTheWayAt(fd int, at string, groups ownerOnly) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &fs.PathError{Op: "stat", Path: at, Err: err}
	}
	return onTheWay(at, ownedOf(st, func() []string { return aclWriters(fd, "", int(st.Uid), groups) }), os.Geteuid(), groups)
}

func openDirAt(fd int, name string) (int, error) {
	for {
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if !errors.Is(err, unix.EINTR) {
			return next, err
		}
	}
}

// isLinkAt reports whether name in the directory fd is a symbolic link
// (systems differ in the error O_NOFOLLOW gives for one).
func isLinkAt(fd int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}

// lookedUpIn is every directory a name of path is looked up in when path
// is resolved, links followed one by one, in order; what cannot be read
// ends it.
func lookedUpIn(path string) []string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil
	}
	sep := string(filepath.Separator)
	rest := strings.Split(strings.TrimPrefix(abs, sep), sep)
	cur := sep
	dirs := []string{cur}
	for hops := 0; len(rest) > 0; {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		var st unix.Stat_t
		if unix.Lstat(next, &st) != nil {
			return dirs
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			if hops++; hops > 255 {
				return dirs
			}
			target, err := os.Readlink(next)
			if err != nil {
				return dirs
			}
			if filepath.IsAbs(target) {
				cur = sep
			}
			rest = append(strings.Split(strings.TrimPrefix(target, sep), sep), rest...)
			continue
		}
		cur = next
		if len(rest) > 0 {
			dirs = append(dirs, cur)
		}
	}
	return dirs
}
