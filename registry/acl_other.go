//go:build unix && !linux

package registry

// accessACL reports false: macOS keeps a file's ACL apart from its mode,
// and it is not read here (docs/security.md).
func accessACL(int, string) bool { return false }
