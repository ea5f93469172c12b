package layer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
)

// What a build reads: the Markdown files of .ai/repo, and nothing that
// leads into .ai/local, however it is linked.

// listFiles walks .ai/repo and returns the slash-separated, root-relative
// paths of its Markdown files in lexical order. Dot-entries are skipped and
// symbolic links to directories are not followed.
func listFiles(root string) ([]string, []Diagnostic) {
	repo := filepath.Join(root, filepath.FromSlash(repoRel))
	var files []string
	var diags []Diagnostic
	fi, err := os.Stat(repo)
	switch {
	case gone(err): // .ai, say, a file now
		return nil, []Diagnostic{{Level: LevelWarning, Path: repoRel, Message: "directory absent: the index is empty"}}
	case err != nil:
		return nil, []Diagnostic{{Level: LevelError, Path: repoRel, Message: fmt.Sprintf("cannot read: %v", pathErr(err))}}
	case !fi.IsDir():
		return nil, []Diagnostic{{Level: LevelError, Path: repoRel, Message: "not a directory"}}
	}
	local, real := localHalf(root), realDir(repo)
	named := filepath.Join(realDir(filepath.Join(root, ".ai")), "local") // a link itself, maybe
	if under(real, local) {
		return nil, []Diagnostic{{Level: LevelError, Path: repoRel, Message: "leads into .ai/local, which is never indexed"}}
	}
	// The trailing separator makes WalkDir follow .ai/repo itself when it is
	// a symbolic link, while paths stay under .ai/repo.
	_ = filepath.WalkDir(repo+string(filepath.Separator), func(p string, d fs.DirEntry, err error) error {
		rel := relSlash(root, p)
		if err == nil && d.IsDir() && reachesLocal(repo, real, p, local) {
			diags = append(diags, Diagnostic{Level: LevelWarning, Path: rel, Message: "is .ai/local, which is never indexed: skipped"})
			return filepath.SkipDir
		}
		if gone(err) { // removed since its directory was listed: not there, as a listing made now would say
			if rel == repoRel {
				diags = append(diags, Diagnostic{Level: LevelWarning, Path: repoRel, Message: "directory absent: the index is empty"})
			}
			return skip(d)
		}
		if err != nil {
			diags = append(diags, Diagnostic{Level: LevelError, Path: rel, Message: fmt.Sprintf("cannot read: %v", pathErr(err))})
			return skip(d)
		}
		name := d.Name()
		if rel != repoRel && strings.HasPrefix(name, ".") {
			return skip(d)
		}
		if d.IsDir() || !strings.HasSuffix(name, ".md") {
			if ext := filepath.Ext(name); !d.IsDir() && strings.EqualFold(ext, ".md") { // README.MD, say
				diags = append(diags, Diagnostic{Level: LevelWarning, Path: rel, Message: "named " + ext + ", not .md: skipped"})
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			st, err := os.Stat(p)
			if err != nil || !st.Mode().IsRegular() {
				diags = append(diags, Diagnostic{Level: LevelWarning, Path: rel, Message: "symbolic link to no regular file: skipped"})
				return nil
			}
			if leadsInto(p, local, named) {
				diags = append(diags, Diagnostic{Level: LevelWarning, Path: rel, Message: "symbolic link into .ai/local, which is never indexed: skipped"})
				return nil
			}
		} else if !d.Type().IsRegular() { // a named pipe, a socket, a device
			diags = append(diags, Diagnostic{Level: LevelWarning, Path: rel, Message: "not a regular file: skipped"})
			return nil
		}
		files = append(files, rel)
		return nil
	})
	sort.Strings(files) // WalkDir's order differs: "a/b.md" comes before "a.md"
	return files, diags
}

// gone reports whether err says that what was looked for is not there
// (any more), or not a directory now.
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// skip is what a walk that meets d returns to pass it over: the whole
// tree when it is a directory.
func skip(d fs.DirEntry) error {
	if d != nil && d.IsDir() {
		return filepath.SkipDir
	}
	return nil
}

// localHalf is where the checkout's .ai/local really is, which no listing
// enters, though .ai/repo or a link in it may lead there.
func localHalf(root string) string {
	ai := filepath.Join(root, ".ai")
	if real, err := filepath.EvalSymlinks(filepath.Join(ai, "local")); err == nil {
		return real
	}
	return filepath.Join(realDir(ai), "local")
}

// realDir is path with its links resolved, or path itself when that fails.
func realDir(path string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real
	}
	return path
}

// leadsInto reports whether the link at p leads into one of dirs: to a
// file there, or through a link there or one of dirs itself (which would
// decide what it serves).
func leadsInto(p string, dirs ...string) bool {
	hops, _ := linkHops(p)
	hops = append(hops, realDir(p))
	return slices.ContainsFunc(hops, func(h string) bool {
		return slices.ContainsFunc(dirs, func(d string) bool { return under(h, d) })
	})
}

// reachesLocal reports whether the directory p that a walk of repo (real,
// resolved) meets is .ai/local: the walk follows repo's own link only.
func reachesLocal(repo, real, p, local string) bool {
	rel, err := filepath.Rel(repo, p)
	return err == nil && samePath(filepath.Join(real, rel), local)
}
