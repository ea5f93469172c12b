package layer

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/windows"
)

// openToRead opens path to read it, sharing reading, writing and deletion
// as Unix does: while the index reads a file, git removing it on checkout
// ("Unlink of file failed. Should I try again?") or an editor saving over
// it is never refused, which os.Open, sharing no deletion, would do. No
// file on Windows blocks its open as a Unix named pipe does. A path past
// MAX_PATH (a checkout deep in its tree) is opened as os.Open opens it.
func openToRead(path string) (*os.File, error) {
	name, err := windows.UTF16PtrFromString(extended(path))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	const share = windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE
	h, err := windows.CreateFile(name, windows.GENERIC_READ, share, nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}

// extended is path as CreateFile takes one of any length, as os.Open
// gives it: an absolute path of 248 characters or more, cleaned, under
// the \\?\ prefix, which Windows takes literally.
func extended(path string) string {
	if len(path) < 248 || !filepath.IsAbs(path) || strings.HasPrefix(path, `\\?\`) {
		return path
	}
	path = filepath.Clean(path)
	if strings.HasPrefix(path, `\\`) { // \\server\share\…
		return `\\?\UNC\` + path[2:]
	}
	return `\\?\` + path
}

// linkLoop reports whether err says that a path could not be followed
// for a loop of links: Windows gives up on the reparse points with
// ERROR_CANT_RESOLVE_FILENAME, which syscall.ELOOP (an errno Go makes up
// there) never matches.
func linkLoop(err error) bool { return errors.Is(err, windows.ERROR_CANT_RESOLVE_FILENAME) }
