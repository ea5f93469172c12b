package fswatch

// addRestartsTheRead: fsnotify's Add of a directory it watches cancels
// and issues again the directory's ReadDirectoryChangesW, which loses
// what the cancelled read held; a name watched already is not put again.
// (inotify and kqueue only update the watch.)
const addRestartsTheRead = true
