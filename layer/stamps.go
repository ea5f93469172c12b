package layer

import (
	"os"
	"path/filepath"
	"slices"
	"time"
)

// clockSlack is how far a file system's change times may lag the clock
// (they come from a coarse clock): a file changed less than this before a
// build started may have changed again, unseen, within the same tick.
const clockSlack = time.Second

// stamp identifies one state of a file: which file it is, its size and its
// times. The change time is set by the kernel on every write, rename or
// attribute change, and cannot be set back by a program (unlike mtime).
type stamp struct {
	dev, ino     uint64
	size         int64
	ctime, mtime int64 // nanoseconds
}

// sources is what an index was built from: the files listed, each as read,
// the walk's own diagnostics, and when the build began.
type sources struct {
	listed   []string         // the files listed, in listing order
	files    map[string]stamp // path -> stamp; files that could not be read or stamped are absent
	walk     []Diagnostic
	listedAt time.Time
}

// unchangedSince reports whether .ai/repo under root still holds exactly
// the files src was built from, none of them changed: the same listing
// and walk diagnostics, each file the same file with the same size and
// times, and every change time older than the build by more than slack.
// Anything it cannot tell (a file it could not stamp) counts as changed.
func unchangedSince(root string, src sources, slack time.Duration) bool {
	files, walk := listFiles(root)
	if !slices.Equal(files, src.listed) || !slices.Equal(walk, src.walk) {
		return false
	}
	trusted := src.listedAt.Add(-slack).UnixNano()
	for _, rel := range files {
		was, ok := src.files[rel]
		if !ok {
			return false
		}
		fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return false
		}
		now, ok := stampOf(fi)
		if !ok || now != was || now.ctime >= trusted {
			return false
		}
	}
	return true
}
