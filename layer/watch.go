package layer

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/zap"
)

// Watch keeps the index current until ctx ends, then closes its watcher and
// returns nil. It watches .ai (for .ai/repo appearing or being replaced),
// every directory under .ai/repo (dot-directories aside), and the file each
// object's link names outside those, with every link on the way (and so
// each link on the way of .ai and of .ai/repo, where they are links); it looks
// every second for what no watch can hear come back (.ai removed, .ai/repo
// a link to nothing, a link through a directory not there). New ones are
// added before each rebuild. A
// change is followed, once the directory has been quiet for the debounce
// period (or at most ten periods after a burst began), by a rebuild; the
// rebuilt index is published, with the next generation, only when its
// objects or diagnostics differ from the current one's, and then
// onChange(old, new) is called (nil is allowed). Watch also rebuilds once
// right after it starts, catching changes made since the current index was
// built, unless it can prove there were none (every file the same file, with
// the same size and times, none of them changed within a second before that
// build).
//
// onChange runs on Watch's goroutine: rebuilds wait for it to return.
// Watcher errors are logged, not returned; what the system will not watch
// (its watches used up) is rescanned instead (watch_rescan.go). Watch
// returns an error only as [ErrWatching], when another Watch is running.
func (l *Layer) Watch(ctx context.Context, onChange func(old, new *Index)) error {
	if !l.watching.CompareAndSwap(false, true) {
		return ErrWatching
	}
	defer l.watching.Store(false)
	aiDir := filepath.Join(l.root, ".ai")
	repoDir := filepath.Join(l.root, filepath.FromSlash(repoRel))
	localDir := filepath.Join(aiDir, "local") // what leads there is skipped: it decides what is
	w, err := watcher(aiDir)
	if err != nil {
		if w = l.rescanUnwatched(ctx, onChange, aiDir, err); w == nil {
			return nil
		}
	}
	defer w.Close()

	// .ai removed or moved away (a branch without it) takes its watch with
	// it, and is rebuilt empty; while it is missing it is looked for every
	// second, and once back it is rebuilt, which watches it again. Where
	// .ai's own watch cannot tell of its replacement, the root is watched
	// too: on Windows, and when .ai is a link (its target is watched, which
	// a re-pointed link leaves). Elsewhere a write beside .ai wakes nothing.
	var gone *time.Ticker
	defer func() {
		if gone != nil {
			gone.Stop()
		}
	}()
	// A directory no watch could be put on (this user's inotify watches
	// used up) is heard from by a rescan every rescanEvery instead, until
	// every watch is put again.
	var unwatched blindness
	var rescan *time.Ticker
	defer func() {
		if rescan != nil {
			rescan.Stop()
		}
	}()
	// The watches on a directory under .ai (or .ai) gone, moved or replaced
	// follow it wherever it went, with those below it: each refresh drops
	// them first, and watches what stands there now.
	moved := map[string]bool{}
	unwatchMoved := func() {
		for _, p := range w.WatchList() {
			for q := p; under(q, aiDir); q = filepath.Dir(q) {
				if moved[q] {
					_ = w.Remove(p)
					break
				}
			}
		}
		clear(moved)
	}
	// absent is what no watch can hear come back, looked for instead every
	// aiLookEvery: .ai gone, .ai/repo a link to nothing, an object's link
	// through a directory that is not there.
	var absent []string
	watchAI := func() (needRoot bool) {
		switch err := addWatch(w, aiDir); {
		case errors.Is(err, fs.ErrNotExist):
			moved[aiDir] = true // its move or removal may have gone unheard
			unwatchMoved()
			absent = append(absent, aiDir)
			return false
		case err != nil:
			unwatched.failed(aiDir, err)
		}
		fi, err := os.Lstat(aiDir)
		return watchRootForAI || err == nil && fi.Mode()&fs.ModeSymlink != 0
	}

	// outside is every directory watched beyond .ai: the root where needed,
	// and those of the files that objects' links name. One no longer needed
	// (its link gone, .ai a directory again) is unwatched, or every change
	// in it would wake the watch for ever.
	var targets map[string]bool // files outside .ai/repo that its links name
	var outside map[string]bool
	var rootWatched os.FileInfo // the directory the root's watch was put on
	// led is the directory .ai and .ai/repo each led to when its tree was
	// watched. One that leads elsewhere now (a link on its way re-pointed,
	// a directory on its way swapped: no event under .ai tells) left its
	// watches on the tree it led to, which are dropped as a moved one's are.
	led := map[string]os.FileInfo{}
	watchAll := func() {
		for d, was := range led {
			if now, err := os.Stat(d); was != nil && (err != nil || !os.SameFile(now, was)) {
				moved[d] = true
			}
		}
		unwatchMoved()
		// Each is watched again below if still wanted: one now reached by
		// another name too (.ai's target, say) would keep its old name. The
		// root, always named as itself, stays: it tells of .ai replaced
		// while the tree is walked.
		for d := range outside {
			if d == l.root && rootWatched != nil {
				if fi, err := os.Stat(l.root); err == nil && os.SameFile(fi, rootWatched) {
					continue // still the same directory: kept
				}
			}
			_ = w.Remove(d)
		}
		absent = nil
		unwatched.begin()
		want := map[string]bool{}
		led[aiDir], _ = os.Stat(aiDir) // before its watches: a change between is seen next time
		if watchAI() {
			want[l.root] = true
		}
		// A file is named as the watches name its directory when that is
		// the root or .ai spelled otherwise (a root reached through a
		// link): the same directory is never watched under two names.
		if !exists(repoDir) && isLink(repoDir) {
			absent = append(absent, repoDir)
		}
		targets = map[string]bool{}
		named := map[string]string{} // a directory of files linked, as named
		led[repoDir], _ = os.Stat(repoDir)
		linked, dangling := l.addTree(w, repoDir, unwatched.failed)
		absent = append(absent, dangling...)
		for _, d := range []string{aiDir, repoDir} {
			if isLink(d) { // each link on its way is watched, as an object's are
				hops, _ := linkHops(d)
				for _, h := range hops {
					linked[h] = true
				}
			}
		}
		for t := range linked {
			dir := filepath.Dir(t)
			if _, ok := named[dir]; !ok {
				named[dir] = dir
				for _, d := range []string{l.root, aiDir} {
					if dir != d && sameDir(dir, d) {
						named[dir] = d
						break
					}
				}
			}
			t = filepath.Join(named[dir], filepath.Base(t))
			targets[t] = true
			want[filepath.Dir(t)] = true
		}
		for d := range want {
			if d == l.root {
				rootWatched, _ = os.Stat(l.root) // before Add: a change between is seen next time
			}
			if err := addWatch(w, d); err != nil && !errors.Is(err, fs.ErrNotExist) {
				unwatched.failed(d, err)
			}
		}
		if outside[l.root] && !want[l.root] {
			_ = w.Remove(l.root) // a no-op if removed above
		}
		outside = want
		switch {
		case len(absent) > 0 && gone == nil:
			gone = time.NewTicker(aiLookEvery)
		case len(absent) == 0 && gone != nil:
			gone.Stop()
			gone = nil
		}
		switch blind := l.noteBlindness(&unwatched); {
		case blind && rescan == nil:
			rescan = time.NewTicker(l.rescanEvery())
		case !blind && rescan != nil:
			rescan.Stop()
			rescan = nil
		}
	}
	refresh := func() {
		watchAll() // again: .ai may have been replaced, links added or removed
		if old, ix, ok := l.rebuild(); ok && onChange != nil {
			onChange(old, ix)
		}
	}
	// What changed between the last build (Open's, or the rebuild that
	// caught up before a watch began again) and the watches is caught here:
	// by a rebuild, unless every file is provably as that build read it (a
	// listing and a stat each, a tenth of a build at 10,000 objects).
	watchAll()
	l.mu.Lock()
	read := l.read
	l.read = nil // from here its own rebuilds keep the index current
	l.mu.Unlock()
	if read != nil && unchangedSince(l.root, *read, l.slack) {
		l.log.Debug("layer unchanged", zap.Uint64("generation", l.Current().Generation), zap.Bool("rebuilt", false))
	} else {
		refresh()
	}

	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var fire <-chan time.Time // non-nil while a rebuild is pending
	var burstStart time.Time
	schedule := func(now time.Time) {
		if fire == nil {
			burstStart = now
		}
		untilBound := burstStart.Add(maxDebounceFactor * l.debounce).Sub(now)
		timer.Reset(max(min(l.debounce, untilBound), 0))
		fire = timer.C
	}

	for {
		select {
		case <-ctx.Done():
			return nil
		case <-w.Ready():
			events, errs := w.Take()
			for _, err := range errs {
				l.log.Warn("layer watch error", zap.Error(err))
				if errors.Is(err, fsnotify.ErrEventOverflow) {
					schedule(time.Now())
				}
			}
			for _, ev := range events {
				// A directory watched outside moved or removed whole is
				// heard by its own name: its files' names go with it.
				if ev.Name == aiDir || under(ev.Name, repoDir) || targets[ev.Name] || outside[ev.Name] && ev.Has(fsnotify.Remove|fsnotify.Rename) ||
					ev.Name == localDir && ev.Has(fsnotify.Create|fsnotify.Remove|fsnotify.Rename) {
					if under(ev.Name, aiDir) && ev.Has(fsnotify.Create|fsnotify.Remove|fsnotify.Rename) {
						moved[ev.Name] = true
					}
					schedule(time.Now())
				}
			}
		case <-tickerC(gone):
			if slices.ContainsFunc(absent, exists) {
				schedule(time.Now()) // its rebuild watches it, and stops the ticker once nothing is absent
			}
		case <-tickerC(rescan):
			schedule(time.Now()) // its rebuild tries the watches again
		case <-fire:
			fire = nil
			refresh()
		}
	}
}

// sameDir reports whether two paths name one directory.
func sameDir(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// aiLookEvery is how often what no watch can hear come back (absent, in
// Watch) is looked for.
const aiLookEvery = time.Second

// tickerC is t's channel, or nil (which never fires) when there is none.
func tickerC(t *time.Ticker) <-chan time.Time {
	if t == nil {
		return nil
	}
	return t.C
}
