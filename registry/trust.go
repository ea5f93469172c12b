package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The lease directory is reached from the checkout's .ai directory through
// local/state/mcp, and none of those three is ever a symbolic link
// (docs/security.md): a link there would make this process create, judge
// and remove files outside the checkout. Above .ai, links are the user's
// business (a checkout may live under a linked home).

// linkFreePath splits the lease directory dir into the directory it is
// reached from (top) and the components below it that must not be links:
// for <root>/.ai/local/state/mcp, <root>/.ai and [local state mcp]; for
// any other directory (tests give leases paths of their own), its parent
// and its own name.
func linkFreePath(dir string) (top string, names []string) {
	dir = filepath.Clean(dir)
	below := filepath.Join("local", "state", "mcp")
	if rest, ok := strings.CutSuffix(dir, string(filepath.Separator)+below); ok && filepath.Base(rest) == ".ai" {
		return rest, strings.Split(below, string(filepath.Separator))
	}
	return filepath.Dir(dir), []string{filepath.Base(dir)}
}

// topIsThere checks that top, the directory linkFreePath reaches the
// lease directory from (a checkout's .ai), is there, and never makes it:
// a checkout or its .ai moved or removed while it was served is not made
// again at its old path, with nothing in it to serve, in the way of the
// one moved back.
func topIsThere(top string) error {
	_, err := os.Stat(top)
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if _, above := os.Stat(filepath.Dir(top)); errors.Is(above, fs.ErrNotExist) {
		return fmt.Errorf("the checkout is gone from %s (moved or removed): %w", filepath.Dir(top), err)
	}
	return fmt.Errorf("%s is gone (moved or removed): %w", top, err)
}

// CheckoutGone reports whether the checkout of the lease at path is gone
// from where it was: its .ai moved or removed, the lease with it. No
// process can make a lease there then (topIsThere), nor replace the
// one that was: its server still serves what it read.
func CheckoutGone(path string) bool {
	top, _ := linkFreePath(filepath.Dir(path))
	_, err := os.Stat(top)
	return errors.Is(err, fs.ErrNotExist)
}

// accessEntry is one entry of a Windows access control list, as
// [writersAmong] judges it.
type accessEntry struct {
	allow        bool   // an allowing entry (denying ones grant nothing)
	inheritOnly  bool   // it applies only to what is created inside
	filesInherit bool   // the files created inside inherit it (the lease among them)
	mask         uint32 // the rights it grants
	sid          string // whom to, as S-1-…
}

// windowsWrite are the rights that let a principal change a file or
// directory, or what it holds, or who may: FILE_WRITE_DATA/ADD_FILE,
// FILE_APPEND_DATA/ADD_SUBDIRECTORY, FILE_WRITE_EA, FILE_DELETE_CHILD,
// FILE_WRITE_ATTRIBUTES, DELETE, WRITE_DAC, WRITE_OWNER, GENERIC_ALL and
// GENERIC_WRITE.
const windowsWrite = 0x2 | 0x4 | 0x10 | 0x40 | 0x100 | 0x10000 | 0x40000 | 0x80000 | 0x10000000 | 0x40000000

// windowsRead are the rights that let a principal read a file's data (or
// list a directory): FILE_READ_DATA, GENERIC_ALL and GENERIC_READ.
const windowsRead = 0x1 | 0x10000000 | 0x80000000

// writersAmong returns every principal, other than the trusted ones,
// that the entries let write, each once, in the entries' order: the pure
// half of the Windows rule that nobody but the lease's user may write its
// lease directory or lease (docs/security.md).
func writersAmong(entries []accessEntry, trusted ...string) []string {
	return grantedAmong(entries, windowsWrite, trusted)
}

// readersAmong is writersAmong for reading: a lease made in the directory
// inherits its list, and holds the secret.
func readersAmong(entries []accessEntry, trusted ...string) []string {
	return grantedAmong(entries, windowsRead, trusted)
}

// grantedAmong returns every principal, other than the trusted ones, that
// the entries grant one of rights, on the object itself or on the files
// created inside it, each once, in the entries' order.
func grantedAmong(entries []accessEntry, rights uint32, trusted []string) (granted []string) {
	for _, e := range entries {
		if e.allow && (!e.inheritOnly || e.filesInherit) && e.mask&rights != 0 && !slices.Contains(trusted, e.sid) && !slices.Contains(granted, e.sid) {
			granted = append(granted, e.sid)
		}
	}
	return granted
}

// owned is who owns a directory, its group, and its mode (permissions
// and sticky bit); aclWriters are the users and groups its POSIX ACL lets
// write it but its owner and a group of the owner's alone (its group bits
// are then the ACL's mask).
type owned struct {
	uid, gid   int
	mode       fs.FileMode
	aclWriters []string
}

// ownerOnly says why the group gid may have a member other than the user
// owner, or nil when owner is its only member ([onlyOwner]), from the
// system's databases ([systemGroups]) or a test's.
type ownerOnly func(gid, owner int) error

// onTheWay says why a directory on the way to the lease (the checkout and
// every directory above it, .ai and what is below it) would let another
// user swap what comes after it, or nil: it must belong to this user (me)
// or to root, and nobody else may write it — unless it is sticky, where
// nobody can rename or remove what another made (/tmp). Its group may write
// it when that group's only member is its owner, as a user-private group's
// is (docs/design.md#sharing-heals); a root-owned directory follows the
// same rule, its group root's alone. A checked path is then reached the
// same way every time it is used by name.
func onTheWay(path string, dir owned, me int, groups ownerOnly) error {
	switch {
	case dir.uid != me && dir.uid != 0:
		return &untrustedError{fmt.Sprintf("%s, on the way to the lease, belongs to another user (uid %d; this process runs as uid %d)", path, dir.uid, me)}
	case dir.mode&fs.ModeSticky != 0:
		return nil
	case dir.mode.Perm()&0o002 != 0:
		return &untrustedError{fmt.Sprintf("%s, on the way to the lease, is writable by other users (mode %v); chmod o-w %s removes that", path, dir.mode, path)}
	}
	if err := groupMayWrite(path, dir, groups); err != nil {
		return &untrustedError{path + ", on the way to the lease, " + err.Error()}
	}
	return nil
}

// groupMayWrite says why the group of dir (at path), when it may write
// dir, lets a user other than dir's owner do so, naming the fix; or nil.
func groupMayWrite(path string, dir owned, groups ownerOnly) error {
	switch {
	case dir.mode.Perm()&0o020 == 0:
		return nil
	case len(dir.aclWriters) > 0:
		return fmt.Errorf("is writable by other users through its ACL (%s): setfacl -b %s removes it", strings.Join(dir.aclWriters, ", "), path)
	}
	if err := groups(dir.gid, dir.uid); err != nil {
		return fmt.Errorf("is writable by other users (mode %v): %w; chmod g-w %s makes it private", dir.mode, err, path)
	}
	return nil
}

// untrustedError says why a directory on the way to the lease, or the
// lease, is not used.
type untrustedError struct{ reason string }

// refused is the one error that names every directory on the way (and on
// Windows, the lease) that is not trusted, with why, so that they are fixed at once, not one a start;
// nil when reasons is empty.
func refused(reasons []string) error {
	if len(reasons) == 0 {
		return nil
	}
	return &untrustedError{strings.Join(reasons, "; ")}
}

func (e *untrustedError) Error() string { return e.reason }
