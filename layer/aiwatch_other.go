//go:build !windows

package layer

// .ai's own watch tells of its removal or move (inotify's IN_DELETE_SELF
// and IN_MOVE_SELF, kqueue's NOTE_DELETE and NOTE_RENAME): the root is not
// watched, and a write beside .ai wakes nothing.
const watchRootForAI = false
