package registry

import "errors"

// systemGroups returns, for one trust check, the rule for a directory its
// group may write. macOS
// keeps its users and groups in Open Directory, which only its C library
// (or dscl) reads, not in /etc/group: so there a directory its group may
// write is never trusted, as before user-private groups were.
func systemGroups() ownerOnly {
	return func(gid, owner int) error {
		return errors.New("on macOS its group's members are not read (they are Open Directory's)")
	}
}
