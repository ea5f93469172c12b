//go:build !linux

package rawio

import "os"

// Stamp is what a file's metadata says of which file it is and of its
// last change.
type Stamp struct{ info os.FileInfo }

// Same reports whether s and t are stamps of the same file, unchanged.
func (s Stamp) Same(t Stamp) bool {
	return s.info != nil && t.info != nil && os.SameFile(s.info, t.info) &&
		s.info.Size() == t.info.Size() && s.info.ModTime().Equal(t.info.ModTime())
}

// Lstat stamps the file at path (a symbolic link itself, not what it
// names).
func Lstat(path string) (Stamp, error) {
	info, err := os.Lstat(path)
	if err == nil {
		// Windows reads which file it is when first asked, by path: ask now,
		// of the file stamped, not of whatever the path names at a later Same.
		os.SameFile(info, info)
	}
	return Stamp{info}, err
}
