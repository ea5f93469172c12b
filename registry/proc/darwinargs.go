package proc

// What macOS's kern.procargs2 and kinfo_proc's p_comm say about a process's
// executable, parsed without touching the system so that the tests run on
// every operating system (listening_darwin.go reads the sysctls).

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// darwinMaxComLen is MAXCOMLEN (sys/param.h): kinfo_proc's p_comm holds the
// first 16 bytes of the executable's base name.
const darwinMaxComLen = 16

// parseProcArgs2 decodes a kern.procargs2 buffer: argc as a 32-bit integer
// in host byte order, the executable path execve was given, NUL-terminated,
// NUL padding, then argc NUL-terminated arguments (the environment that
// follows is ignored).
//
// exe is set whenever the path itself is complete, even when err says the
// arguments are not: a caller may still match the executable, but must not
// take a partial argument list for the command line. On success args is
// never nil (argc 0 gives an empty list).
//
// The padding cannot be told from an empty argv[0]: all NULs after the path
// are skipped, so an empty argv[0] (which no ordinary launcher gives) would
// shift the arguments by one.
func parseProcArgs2(b []byte) (exe string, args []string, err error) {
	if len(b) < 4 {
		return "", nil, fmt.Errorf("kern.procargs2: %d bytes, too short for argc", len(b))
	}
	argc := int32(binary.NativeEndian.Uint32(b))
	if argc < 0 {
		return "", nil, fmt.Errorf("kern.procargs2: negative argc %d", argc)
	}
	rest := b[4:]
	end := bytes.IndexByte(rest, 0)
	if end < 0 {
		return "", nil, errors.New("kern.procargs2: executable path is not terminated")
	}
	if end == 0 {
		return "", nil, errors.New("kern.procargs2: empty executable path")
	}
	exe = string(rest[:end])
	rest = bytes.TrimLeft(rest[end:], "\x00")
	// Every argument takes at least its NUL: an argc the rest cannot hold is
	// a truncated buffer, refused before allocating for it.
	if int(argc) > len(rest) {
		return exe, nil, fmt.Errorf("kern.procargs2: argc %d, only %d bytes of arguments", argc, len(rest))
	}
	args = make([]string, 0, argc)
	for range argc {
		end := bytes.IndexByte(rest, 0)
		if end < 0 {
			return exe, nil, fmt.Errorf("kern.procargs2: argument %d of %d is not terminated", len(args), argc)
		}
		args = append(args, string(rest[:end]))
		rest = rest[end+1:]
	}
	return exe, args, nil
}

// darwinCommMatches reports whether comm, kinfo_proc's p_comm, is what the
// kernel keeps of an executable named name: the name itself, or its first
// [darwinMaxComLen] bytes when it is longer. It names the process when
// kern.procargs2 is denied (the executable is then reported unknown), and
// beside the path that kern.procargs2 gives, which is the one execve was
// handed (a symbolic link's name, say), not necessarily the file's.
func darwinCommMatches(comm, name string) bool {
	if comm == "" || name == "" {
		return false
	}
	if len(name) > darwinMaxComLen {
		return len(comm) == darwinMaxComLen && strings.HasPrefix(name, comm)
	}
	return comm == name
}
