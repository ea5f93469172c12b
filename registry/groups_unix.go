//go:build unix && !darwin

package registry

// systemGroups returns, for one trust check, the rule for a directory its group may write
// ([onlyOwner]), from the system's own user and group files, read in pure
// Go without the C library's name service: a group that only a network
// directory knows (LDAP, SSSD) is not in /etc/group and so not trusted,
// and a NIS line (+…) in either file makes every group unknown. The files
// are read again when they change.
func systemGroups() ownerOnly { return etcAccounts.check() }

var etcAccounts = &accountFiles{group: "/etc/group", passwd: "/etc/passwd"}
