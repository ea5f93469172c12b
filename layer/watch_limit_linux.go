package layer

import (
	"errors"
	"syscall"
)

// watchLimitHint says what a refused watch means, when it is this user's
// inotify limits used up (ENOSPC for watches, EMFILE for instances).
func watchLimitHint(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return " (this user's inotify watches are used up: raise fs.inotify.max_user_watches to have every change heard at once)"
	case errors.Is(err, syscall.EMFILE):
		return " (this user's inotify instances, or this process's open files, are used up: raise fs.inotify.max_user_instances, or the open-file limit, to have every change heard at once)"
	}
	return ""
}
