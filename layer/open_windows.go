package layer

import (
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

// openToRead opens path to read it, sharing reading, writing and deletion
// as Unix does: while the index reads a file, git removing it on checkout
// ("Unlink of file failed. Should I try again?") or an editor saving over
// it is never refused, which os.Open, sharing no deletion, would do. No
// file on Windows blocks its open as a Unix named pipe does.
func openToRead(path string) (*os.File, error) {
	name, err := windows.UTF16PtrFromString(path)
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
