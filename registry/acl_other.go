//go:build unix && !linux

package registry

// aclWriters names nobody: macOS keeps a file's ACL apart from its mode,
// and it is not read here (docs/security.md).
func aclWriters(int, string, int, ownerOnly) []string { return nil }
