package registry

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/majordomus-mcp/majordomus-mcp/registry/proc"
)

// Identity is what a process records about itself in its lease, and what
// another process checks to tell whether that owner still runs.
type Identity struct {
	PID int
	// Start is when the process started, as [proc.ProcessStart] gives it: an
	// opaque token that only the same operating system compares.
	Start uint64
	// BootID identifies this boot of the machine ([proc.BootID]).
	BootID string
	// Namespaces are the process's pid and network namespaces
	// ([proc.Namespaces]).
	Namespaces string
	Host       string
	Executable Executable
}

// Self returns this process's identity. It fails when any part cannot be
// determined; the caller then cannot write a lease others could judge.
func Self() (Identity, error) {
	pid := os.Getpid()
	start, err := proc.ProcessStart(pid)
	if err != nil {
		return Identity{}, err
	}
	boot, err := proc.BootID()
	if err != nil {
		return Identity{}, err
	}
	host, err := os.Hostname()
	if err != nil {
		return Identity{}, fmt.Errorf("reading host name: %w", err)
	}
	exe, err := SelfExecutable()
	if err != nil {
		return Identity{}, err
	}
	return Identity{PID: pid, Start: start, BootID: boot, Namespaces: proc.Namespaces(), Host: host, Executable: exe}, nil
}

// SelfExecutable describes the file this process runs from: os.Executable
// with symbolic links resolved, and that file's mtime and size.
func SelfExecutable() (Executable, error) {
	p, err := os.Executable()
	if err != nil {
		return Executable{}, fmt.Errorf("locating executable: %w", err)
	}
	return StatExecutable(p)
}

// StatExecutable describes the executable at p (symbolic links resolved).
func StatExecutable(p string) (Executable, error) {
	resolved, err := filepath.EvalSymlinks(p)
	if err != nil {
		return Executable{}, fmt.Errorf("resolving executable: %w", err)
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return Executable{}, fmt.Errorf("reading executable: %w", err)
	}
	return Executable{Path: resolved, MTime: fi.ModTime().Unix(), Size: fi.Size()}, nil
}

// DirectoryID names the directory at path by what the system knows it as,
// not by its path: its device and inode (volume and file index on
// Windows), or "" when that cannot be told. A checkout moved elsewhere
// keeps its id; one made again at the old path has another, while the
// first still exists (a filesystem may give a freed number again).
func DirectoryID(path string) string {
	id, ok := directoryID(path)
	if !ok || id == (fileID{}) {
		return ""
	}
	return fmt.Sprintf("%d:%d", id.dev, id.ino)
}
