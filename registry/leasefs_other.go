//go:build !unix && !windows

package registry

import (
	"fmt"
	"io/fs"
	"os"
	"runtime"
)

// On other systems there is no lock the kernel releases for a dead holder:
// no lease can be taken safely, so every election serves alone, and no
// state is ever written.

var errNoLease = fmt.Errorf("lease files are unsupported on %s", runtime.GOOS)

func openLockFile(p string) (*os.File, error)      { return nil, errNoLease }
func tryLock(*os.File) (bool, error)               { return false, errNoLease }
func openNoFollow(path string) (*os.File, error)   { return nil, errNoLease }
func idOf(fs.FileInfo) fileID                      { return fileID{} }
func openedID(*os.File, fs.FileInfo) fileID        { return fileID{} }
func directoryID(string) (fileID, bool)            { return fileID{}, false }
func unlink(path string) error                     { return errNoLease }
func replace(tmp, path string) error               { return errNoLease }
func openAppend(path string) (*os.File, error)     { return nil, errNoLease }
func notMine(*os.File, fs.FileInfo, string) string { return "" }
