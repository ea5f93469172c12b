package registry

import (
	"io/fs"
	"os"
	"strings"

	"golang.org/x/sys/windows"
)

// openAppend opens the state at path to append to it (every write goes to
// its end), refusing a reparse point.
func openAppend(path string) (*os.File, error) {
	return openRefusingReparse(path, windows.FILE_APPEND_DATA|windows.SYNCHRONIZE, windows.OPEN_EXISTING)
}

// notMine says why the opened file at path is not this user's alone
// (another owner, or others may write it), or "".
func notMine(f *os.File, _ fs.FileInfo, path string) string {
	return strings.Join(ownedPrivately(windows.Handle(f.Fd()), path), "; ")
}
