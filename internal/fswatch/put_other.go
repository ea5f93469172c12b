//go:build !windows

package fswatch

// addRestartsTheRead: inotify and kqueue update a watch put again and
// lose nothing, so a name is put again whenever it is added: a directory
// removed and made again may have its inode number back.
const addRestartsTheRead = false
