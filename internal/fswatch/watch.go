// Package fswatch shares one file watcher among a process's watches (the
// lease's and the layer's): one inotify instance a process, not one a
// watch. Instances are few (128 a user by default), and a process killed
// -9 is reaped only once the kernel has torn down each of them, a grace
// period of its own when one of the process's threads waits in epoll, as
// a server's always does: with two, a leaseholder was reaped 14 ms after
// the signal at the median, with one 7 ms (B4).
//
// A Watch is one watch's share: the names it added, and an inbox of what
// happened to them, filled as the watcher reports it, on a goroutine of
// its own. fsnotify's reader waits until each report is taken, and on
// Windows Add and Remove wait for that reader, so the goroutine that adds
// and removes watches must not be the one that takes them: under a burst
// of writes, or an error to report, it would wait on itself for ever. What
// waits is kept one entry a name (the union of what happened to it) and
// the last few errors, so a slow taker never makes it pile up.
//
// Invariants: a name is watched while some Watch holds it (one Watch's
// Remove leaves another's); a Watch is told of events on its names and on
// what is in them, and of every error (an overflow may have lost any
// watch's events); the watcher is closed with the last Watch. A directory
// added under two names (a link and its target) is reported under the
// first, as fsnotify does: the process's watches name the checkout alike.
package fswatch

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// shared is the process's watcher, while a Watch is open; changing is held
// while its watches change or it opens or closes, never by its reader.
var shared struct {
	changing sync.Mutex
	h        *hub
}

// hub is one fsnotify watcher and the watches that share it.
type hub struct {
	fw      *fsnotify.Watcher
	mu      sync.Mutex // guards watches and each one's names: held by the reader as it hands out
	watches map[*Watch]bool
	put     map[string]os.FileInfo // what each name stood for when it was put (shared.changing held)
}

// Watch is one watch's share of the process's watcher.
type Watch struct {
	Inbox
	h     *hub
	names map[string]bool // cleaned; guarded by h.mu
}

// Open is a new Watch, watching nothing yet; it fails only when the
// system gives no watcher (no inotify instance left, say).
func Open() (*Watch, error) {
	shared.changing.Lock()
	defer shared.changing.Unlock()
	if shared.h == nil {
		fw, err := fsnotify.NewWatcher()
		if err != nil {
			return nil, err
		}
		shared.h = &hub{fw: fw, watches: map[*Watch]bool{}, put: map[string]os.FileInfo{}}
		go shared.h.deliver() // before the first Add: on Windows Add waits for the reader
	}
	w := &Watch{Inbox: newInbox(), h: shared.h, names: map[string]bool{}}
	w.h.mu.Lock()
	w.h.watches[w] = true
	w.h.mu.Unlock()
	return w, nil
}

// deliver hands what the watcher reports to the watches it concerns until
// the watcher is closed.
func (h *hub) deliver() {
	events, errs := h.fw.Events, h.fw.Errors
	for events != nil || errs != nil {
		select {
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			name := filepath.Clean(ev.Name)
			h.mu.Lock()
			for w := range h.watches {
				if w.names[name] || w.names[filepath.Dir(name)] {
					w.put(ev)
				}
			}
			h.mu.Unlock()
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			h.mu.Lock()
			for w := range h.watches {
				w.fail(err)
			}
			h.mu.Unlock()
		}
	}
}

// Add watches name (fsnotify.Watcher.Add) for w: the file or directory
// that stands there now. Where name is watched for one that was moved
// away since (kqueue would keep watching that), which no Watch wants (each
// drops what it watched once it moved), the watch is removed and put
// anew; where it is watched for this one, it is put again only where that
// loses nothing (addRestartsTheRead).
func (w *Watch) Add(name string) error {
	name = filepath.Clean(name)
	shared.changing.Lock()
	defer shared.changing.Unlock()
	w.h.mu.Lock()
	had, held := w.names[name], w.h.heldLocked(name)
	w.names[name] = true // first: what happens as it is added is w's
	w.h.mu.Unlock()
	now, _ := os.Stat(name)
	if now != nil {
		os.SameFile(now, now) // Windows reads a file's id when first compared: read it while it is this file
	}
	if was := w.h.put[name]; (had || held) && was != nil && now != nil {
		if !os.SameFile(was, now) {
			_ = w.h.fw.Remove(name)
		} else if addRestartsTheRead {
			return nil
		}
	}
	err := w.h.fw.Add(name)
	if err == nil && now != nil {
		w.h.put[name] = now
	}
	if err != nil && !had {
		w.h.mu.Lock()
		delete(w.names, name)
		w.h.mu.Unlock()
	}
	return err
}

// Remove stops watching name for w; the watch itself goes when no other
// Watch holds it.
func (w *Watch) Remove(name string) error {
	name = filepath.Clean(name)
	shared.changing.Lock()
	defer shared.changing.Unlock()
	w.h.mu.Lock()
	delete(w.names, name)
	held := w.h.heldLocked(name)
	w.h.mu.Unlock()
	if held {
		return nil
	}
	delete(w.h.put, name)
	return w.h.fw.Remove(name)
}

// WatchList is what w watches: what it added and did not remove (a
// directory removed since may still be named: removing it again is
// harmless).
func (w *Watch) WatchList() []string {
	w.h.mu.Lock()
	defer w.h.mu.Unlock()
	return slices.Collect(maps.Keys(w.names))
}

// Close ends w: its names are unwatched where no other Watch holds them,
// and the watcher is closed with the last Watch.
func (w *Watch) Close() error {
	shared.changing.Lock()
	defer shared.changing.Unlock()
	h := w.h
	h.mu.Lock()
	if !h.watches[w] {
		h.mu.Unlock()
		return nil
	}
	delete(h.watches, w)
	var drop []string
	for name := range w.names {
		if !h.heldLocked(name) {
			drop = append(drop, name)
		}
	}
	last := len(h.watches) == 0
	h.mu.Unlock()
	if last {
		shared.h = nil
		return h.fw.Close()
	}
	for _, name := range drop {
		delete(h.put, name)
		_ = h.fw.Remove(name)
	}
	return nil
}

// heldLocked reports whether some Watch holds name (h.mu held).
func (h *hub) heldLocked(name string) bool {
	for o := range h.watches {
		if o.names[name] {
			return true
		}
	}
	return false
}
