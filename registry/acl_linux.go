package registry

import "golang.org/x/sys/unix"

// accessACL reports whether the directory fd (or path, when fd < 0)
// carries a POSIX access ACL.
func accessACL(fd int, path string) bool {
	var err error
	if fd >= 0 {
		_, err = unix.Fgetxattr(fd, "system.posix_acl_access", nil)
	} else {
		_, err = unix.Lgetxattr(path, "system.posix_acl_access", nil)
	}
	return err == nil // ENODATA: none; ENOTSUP: the file system has none
}
