package layer

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/internal/fswatch"
)

// addTree watches dir and its subdirectories, dot-directories aside, and
// returns the files and links outside what it watches that its objects'
// links lead through (an object is the file its link names, and an edit of
// that file, or a link on the way re-pointed, is no event of dir's), and
// the links that lead through a directory that is not there. A missing
// dir is fine: the watch on .ai reports its creation.
func (l *Layer) addTree(w *fswatch.Watch, dir string, failed func(path string, err error)) (targets map[string]bool, dangling []string) {
	real, local := realDir(dir), localHalf(l.root) // .ai/repo may be a link itself
	if under(real, local) {
		return map[string]bool{}, nil // never indexed (listFiles), never watched
	}
	walked := func(t string) bool { // in a directory the walk below watches
		for _, d := range []string{dir, real} {
			if rel, err := filepath.Rel(d, filepath.Dir(t)); err == nil && under(t, d) && !hidden(rel) {
				return true
			}
		}
		return false
	}
	targets = map[string]bool{}
	_ = filepath.WalkDir(dir+string(filepath.Separator), func(p string, d fs.DirEntry, err error) error {
		p = filepath.Clean(p)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) { // absent, or .ai a file now
				l.log.Warn("layer watch skipped a directory", zap.String("path", p), zap.Error(pathErr(err)))
			}
			return skip(d)
		}
		if !d.IsDir() {
			if d.Type()&fs.ModeSymlink != 0 && strings.HasSuffix(d.Name(), ".md") {
				hops, whole := linkHops(p)
				for _, t := range hops {
					if !walked(t) && !under(t, local) {
						targets[t] = true
					}
				}
				if !whole && !exists(p) { // what resolves is never looked for
					dangling = append(dangling, p)
				}
			}
			return nil
		}
		if p != dir && strings.HasPrefix(d.Name(), ".") || reachesLocal(dir, real, p, local) {
			return filepath.SkipDir
		}
		if err := addWatch(w, p); err != nil && !errors.Is(err, os.ErrNotExist) {
			failed(p, err)
		}
		return nil
	})
	return targets, dangling
}

// linkHops is where the link at p leads, one link at a time: each link on
// the way and the file at its end (there or not), named in its directory's
// resolved path, as the kernel resolves a link from the directory it
// really is in. whole is false when a directory on the way is not there:
// nothing there can be watched until it is.
func linkHops(p string) (hops []string, whole bool) {
	for range 40 { // as many links as a path's resolution follows (ELOOP)
		to, err := os.Readlink(p)
		if err != nil {
			return hops, true // the file, or a file not there yet where its directory is
		}
		// start is where to's own directories begin: before it, the
		// directory a relative link is in (resolved already), or what an
		// absolute one shares with it (the link's own path, not its target).
		start := len(filepath.VolumeName(to)) + 1
		if filepath.IsAbs(to) {
			own := filepath.Dir(p) + string(filepath.Separator)
			for j := 0; j < len(to) && j < len(own) && to[j] == own[j]; j++ {
				if isSep(rune(to[j])) {
					start = max(start, j+1)
				}
			}
		} else {
			from, err := filepath.EvalSymlinks(filepath.Dir(p))
			if err != nil {
				return hops, false
			}
			start, to = len(from)+1, from+string(filepath.Separator)+to // not cleaned: "link/.." is the link's target's parent
		}
		t := strings.TrimRightFunc(to, isSep)
		for len(t) > 1 && t[len(t)-1] == '.' && isSep(rune(t[len(t)-2])) {
			t = strings.TrimRightFunc(t[:len(t)-1], isSep)
		}
		if t != "" && !strings.HasSuffix(t, ":") {
			to = t // "current/" and "current/." are the link current, followed like the rest
		}
		i := strings.LastIndexFunc(to, isSep) + 1
		hops = append(hops, dirLinks(to[:i], start)...)
		dir, err := filepath.EvalSymlinks(to[:i])
		if err != nil {
			return hops, false
		}
		p = filepath.Join(dir, to[i:])
		hops = append(hops, p)
	}
	return hops, true
}

// dirLinks are the links among the directories of dir's text from start
// on, each named in its resolved directory: one re-pointed leads the path
// elsewhere, as a link to a file does. A link in a volume's root (/tmp and
// /var on macOS, /lib) is the system's, and its root is not watched.
func dirLinks(dir string, start int) []string {
	var links []string
	for j := start; j < len(dir); j++ {
		if !isSep(rune(dir[j])) {
			continue
		}
		k := strings.LastIndexFunc(dir[:j], isSep) + 1
		if name := dir[k:j]; name != "" && name != "." && name != ".." && isLink(dir[:j]) {
			if parent, err := filepath.EvalSymlinks(dir[:k]); err == nil && filepath.Dir(parent) != parent {
				links = append(links, filepath.Join(parent, name))
			}
		}
	}
	return links
}

// isSep reports whether r separates a path's names on this system.
func isSep(r rune) bool { return r < utf8.RuneSelf && os.IsPathSeparator(uint8(r)) }

// hidden reports whether a relative path has a dot-directory in it, which
// the walk of a tree does not enter.
func hidden(rel string) bool {
	return slices.ContainsFunc(strings.Split(rel, string(filepath.Separator)), func(c string) bool {
		return strings.HasPrefix(c, ".") && c != "." && c != ".."
	})
}

// isLink reports whether path is a symbolic link (or a junction).
func isLink(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0
}

// exists reports whether path leads somewhere.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// under reports whether path is dir or below it, their names compared as
// the file system compares them (samePath).
func under(path, dir string) bool {
	return len(path) >= len(dir) && samePath(path[:len(dir)], dir) &&
		(len(path) == len(dir) || path[len(dir)] == filepath.Separator)
}

// samePath reports whether a and b name one path: where names ignore
// their case (NamesIgnoreCase), "local" and "LOCAL" are one directory.
func samePath(a, b string) bool { return a == b || NamesIgnoreCase && strings.EqualFold(a, b) }
