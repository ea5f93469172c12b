//go:build windows

package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Trusted says why the lease at leasePath must not be used, or nil
// (docs/security.md). Each directory is checked on its opened handle, not
// only by name:
//   - no component from .ai\local down to the lease directory is a
//     reparse point (a symbolic link or a junction);
//   - the lease directory, when it exists, is owned by this process's
//     user, and its access control list lets nobody else write it (the
//     user, SYSTEM and the Administrators may);
//   - so is the lease in it, when there is one.
//
// A lease another user could write or wrote is never judged, taken over or
// attached to, and nothing is made or removed through a link: the client
// is served alone with the reason. What cannot be read is left to the
// election, which says why in its own words; but a lease directory that
// cannot be checked while its lease can be read is not trusted.
func Trusted(leasePath string) error {
	dir := filepath.Dir(leasePath)
	h, err := openLinkFree(dir, false)
	var linked *linkedError
	switch {
	case errors.As(err, &linked):
		return err
	case err != nil:
		// The lease is read by its name, never through the directory's
		// handle: a directory whose access control list denies this user
		// reading who owns it and who may write it, but lets it reach the
		// lease, would hand the election a lease nobody checked.
		if lease, lerr := openNoFollow(leasePath); lerr == nil {
			lease.Close()
			return refused([]string{fmt.Sprintf("the lease directory %s cannot be checked (%v), and its lease is not used", dir, err)})
		}
		return nil // unreadable, its lease too: the election says why
	case h == windows.InvalidHandle:
		return nil // missing: this process creates it, privately
	}
	defer windows.CloseHandle(h)
	reasons := ownedPrivately(h, "the lease directory "+dir, true)
	if lease, err := openNoFollow(leasePath); err == nil { // else none, or a link, which the judge calls corrupt and removes itself, never its target
		defer lease.Close()
		reasons = append(reasons, ownedPrivately(windows.Handle(lease.Fd()), "the lease "+leasePath, false)...)
	}
	return refused(reasons) // every one to fix, at once
}

// makeLeaseDir creates the lease directory dir and what is missing below
// .ai\local, each component checked for a reparse point before the next
// is made in it. The lease directory itself gets an access control list
// of its own (not inherited): its user, SYSTEM and the Administrators, so
// that a checkout under a directory other users may write (C:\ lets every
// authenticated user modify what is made in it) still keeps its lease
// private.
//
// It gets its .gitignore (ignore.go) when it has none.
func makeLeaseDir(dir string) error {
	h, err := openLinkFree(dir, true)
	if err != nil {
		return err
	}
	_ = ignoreIn(dir) // best effort (ignore.go)
	return windows.CloseHandle(h)
}

// ignoreIn writes the .gitignore of the lease directory dir, just checked
// by openLinkFree, when nothing is at its name, as a lease is created: a
// temporary file linked into place (createComplete). Its access control
// list is the one the private directory passes on.
func ignoreIn(dir string) error {
	path := filepath.Join(dir, ignoreName)
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		return err // there already, whatever it is, or unreadable
	}
	f, err := os.CreateTemp(dir, "."+ignoreName+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := writeSynced(f, []byte(ignoreText)); err != nil {
		return err
	}
	if err := createComplete(os.Link, f.Name(), path, []byte(ignoreText)); !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// linkedError says that a component of the lease directory's path is a
// reparse point.
type linkedError struct{ path string }

func (e *linkedError) Error() string {
	return e.path + " is a symbolic link or junction, which is never followed"
}

// openLinkFree opens dir through the components linkFreePath names,
// refusing any that is a reparse point, creating those missing when create
// is set (the last with a private access control list). It returns the
// directory's handle; or InvalidHandle and nil when a component is missing
// and create is not set; or an error, a *linkedError for a reparse point.
func openLinkFree(dir string, create bool) (windows.Handle, error) {
	top, names := linkFreePath(dir)
	if create {
		// above .ai\local, links are the user's business (see linkFreePath)
		if err := topIsThere(top); err != nil {
			return windows.InvalidHandle, err
		}
	}
	at := top
	for i, name := range names {
		at = filepath.Join(at, name)
		h, err := openDir(at)
		if errors.Is(err, fs.ErrNotExist) && create {
			if err := makeDir(at, i == len(names)-1); err != nil && !errors.Is(err, fs.ErrExist) {
				return windows.InvalidHandle, err
			}
			h, err = openDir(at)
		}
		switch {
		case errors.Is(err, fs.ErrNotExist) && !create:
			return windows.InvalidHandle, nil
		case err != nil:
			return windows.InvalidHandle, err
		}
		if i == len(names)-1 {
			return h, nil
		}
		windows.CloseHandle(h)
	}
	return windows.InvalidHandle, fmt.Errorf("no lease directory in %s", dir)
}

// openDir is openDirHandle; a test makes it fail as Windows does where an
// access control list denies this user (wine enforces none).
var openDir = openDirHandle

// openDirHandle opens the directory at path itself, never what a reparse
// point there names, and refuses one.
func openDirHandle(path string) (windows.Handle, error) {
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return windows.InvalidHandle, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	const share = windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE
	h, err := windows.CreateFile(name, windows.READ_CONTROL|windows.FILE_READ_ATTRIBUTES, share, nil, windows.OPEN_EXISTING,
		windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return windows.InvalidHandle, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		windows.CloseHandle(h)
		return windows.InvalidHandle, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	switch {
	case info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0:
		windows.CloseHandle(h)
		return windows.InvalidHandle, &linkedError{path: path}
	case info.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY == 0:
		windows.CloseHandle(h)
		return windows.InvalidHandle, &fs.PathError{Op: "open", Path: path, Err: syscall.ENOTDIR}
	}
	return h, nil
}

// makeDir creates the directory path; private, it allows only this user,
// SYSTEM and the Administrators, and inherits nothing.
func makeDir(path string, private bool) error {
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return &fs.PathError{Op: "mkdir", Path: path, Err: err}
	}
	var sa *windows.SecurityAttributes
	if private {
		me, err := currentUser()
		if err != nil {
			return &fs.PathError{Op: "mkdir", Path: path, Err: err}
		}
		sd, err := windows.SecurityDescriptorFromString("D:P(A;OICI;FA;;;" + me.String() + ")(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)")
		if err != nil {
			return &fs.PathError{Op: "mkdir", Path: path, Err: err}
		}
		sa = &windows.SecurityAttributes{Length: uint32(unsafe.Sizeof(windows.SecurityAttributes{})), SecurityDescriptor: sd}
	}
	if err := windows.CreateDirectory(name, sa); err != nil {
		if errors.Is(err, windows.ERROR_ALREADY_EXISTS) {
			return &fs.PathError{Op: "mkdir", Path: path, Err: fs.ErrExist}
		}
		return &fs.PathError{Op: "mkdir", Path: path, Err: err}
	}
	return nil
}

// ownedPrivately says why the file open at h, named what, is not this
// user's alone, every reason, or none: its owner is another user, or
// its access control list lets other principals write it, or, for the
// lease directory (leaseDir), read it or what is made in it: the lease
// inherits that list, and holds the secret.
func ownedPrivately(h windows.Handle, what string, leaseDir bool) (reasons []string) {
	sd, err := windows.GetSecurityInfo(h, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION|windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return []string{fmt.Sprintf("%s: who may write it cannot be read: %v", what, err)}
	}
	me, err := currentUser()
	if err != nil {
		return []string{fmt.Sprintf("%s: this process's user cannot be read: %v", what, err)}
	}
	system, _ := windows.CreateWellKnownSid(windows.WinLocalSystemSid)
	admins, _ := windows.CreateWellKnownSid(windows.WinBuiltinAdministratorsSid)
	if owner, _, err := sd.Owner(); err == nil && owner != nil && !owner.Equals(me) && !(owner.Equals(admins) && isAdmin(admins)) {
		reasons = append(reasons, fmt.Sprintf("%s belongs to another user (owner %s; this process runs as %s)", what, owner, me))
	}
	dacl, _, err := sd.DACL()
	if err != nil || dacl == nil { // none at all lets everyone in
		return append(reasons, what+" is writable by other users (it has no access control list)")
	}
	entries := make([]accessEntry, 0, dacl.AceCount)
	for i := range uint32(dacl.AceCount) {
		var ace *windows.ACCESS_ALLOWED_ACE
		if windows.GetAce(dacl, i, &ace) != nil {
			continue
		}
		e := accessEntry{
			allow:        allowing(ace.Header.AceType),
			inheritOnly:  ace.Header.AceFlags&windows.INHERIT_ONLY_ACE != 0,
			filesInherit: ace.Header.AceFlags&windows.OBJECT_INHERIT_ACE != 0,
			mask:         uint32(ace.Mask),
			sid:          "an object or conditional entry", // never a trusted principal
		}
		if ace.Header.AceType == windows.ACCESS_ALLOWED_ACE_TYPE {
			e.sid = (*windows.SID)(unsafe.Pointer(&ace.SidStart)).String()
		}
		entries = append(entries, e)
	}
	// CREATOR OWNER, in an entry the files made inside inherit, is their
	// maker: this user
	trusted := []string{me.String(), system.String(), admins.String(), creatorOwner}
	if writers := writersAmong(entries, trusted...); len(writers) > 0 {
		reasons = append(reasons, fmt.Sprintf("%s is writable by other users (%s may write it); remove it, and the next client makes it anew, private", what, strings.Join(writers, ", ")))
	}
	if readers := readersAmong(entries, trusted...); leaseDir && len(readers) > 0 {
		reasons = append(reasons, fmt.Sprintf("%s is readable by other users (%s may read it, and so the lease's secret); remove it, and the next client makes it anew, private", what, strings.Join(readers, ", ")))
	}
	return reasons
}

// creatorOwner is the SID CREATOR OWNER, which an inherited entry names
// its object's maker by.
const creatorOwner = "S-1-3-0"

// allowing reports whether an entry of this type grants rights: the plain,
// compound, object and conditional (callback) allowing entries.
func allowing(aceType uint8) bool {
	switch aceType {
	case windows.ACCESS_ALLOWED_ACE_TYPE, 4, 5, 9, 11: // ACCESS_ALLOWED_{COMPOUND,OBJECT,CALLBACK,CALLBACK_OBJECT}_ACE_TYPE
		return true
	}
	return false
}

// currentUser is the SID of this process's user.
func currentUser() (*windows.SID, error) {
	u, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return nil, err
	}
	return u.User.Sid, nil
}

// isAdmin reports whether this process acts as an Administrator: what an
// elevated process creates is owned by the Administrators group.
func isAdmin(admins *windows.SID) bool {
	// CheckTokenMembership needs an impersonation token: 0 has it make
	// one from this thread's primary token.
	ok, err := windows.Token(0).IsMember(admins)
	return err == nil && ok
}
