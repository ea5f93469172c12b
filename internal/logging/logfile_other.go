//go:build !unix

package logging

import "os"

// logOpenFlags are none where opening a file never waits for a reader.
const logOpenFlags = 0

// ownFile reports whether the opened file belongs to this user: on
// Windows its directory's access list decides who may have made it.
func ownFile(os.FileInfo) bool { return true }

// hardLinked reports nothing where the file's links are not told.
func hardLinked(os.FileInfo) bool { return false }
