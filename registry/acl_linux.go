package registry

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"
)

// aclWriters names the users and groups, but owner and a group of its
// alone (groups), that the POSIX access ACL of the directory fd (or path,
// when fd < 0) lets write it; none without an ACL.
func aclWriters(fd int, path string, owner int, groups ownerOnly) []string {
	get := func(buf []byte) (int, error) {
		if fd >= 0 {
			return unix.Fgetxattr(fd, "system.posix_acl_access", buf)
		}
		return unix.Lgetxattr(path, "system.posix_acl_access", buf)
	}
	n, err := get(nil)
	if err != nil {
		return nil // ENODATA: no ACL; ENOTSUP: none on this file system
	}
	buf := make([]byte, n)
	if n, err = get(buf); err != nil || n < 4 {
		return []string{"an ACL that cannot be read"}
	}
	// A version, then entries of a tag, permissions and an id.
	const user, group, mask = 0x02, 0x08, 0x10
	masked, writers := uint16(7), []string(nil)
	for e := buf[4:n]; len(e) >= 8; e = e[8:] {
		tag, perm, id := binary.LittleEndian.Uint16(e), binary.LittleEndian.Uint16(e[2:]), int(binary.LittleEndian.Uint32(e[4:]))
		switch {
		case tag == mask:
			masked = perm
		case perm&2 == 0:
		case tag == user && id != owner && id != 0:
			writers = append(writers, fmt.Sprintf("user %d", id))
		case tag == group && groups(id, owner) != nil:
			writers = append(writers, fmt.Sprintf("group %d", id))
		}
	}
	if masked&2 == 0 {
		return nil
	}
	return writers
}
