package registry

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/majordomus-mcp/majordomus-mcp/internal/fswatch"
)

// Watch defaults.
const (
	DefaultDebounce      = 50 * time.Millisecond
	DefaultFallbackEvery = time.Second
)

// Change is what a watched lease path holds after it changed.
type Change struct {
	Snapshot
}

// Watch reports what the lease path holds whenever that changes. The first
// Change is what it held when the watch started; after that a Change is sent
// only when the kind, the bytes or the file differ from the last one sent.
// It watches the lease's directory (the lease is replaced by rename, which
// would drop a watch on the file itself) and each directory it is reached
// through from the checkout's .ai (linkFreePath), whose move or
// replacement takes the lease away with no event in its own directory;
// it heeds only events on those paths, waits debounce (zero: DefaultDebounce) after the last event before
// reading, and also reads every fallbackEvery (zero: DefaultFallbackEvery)
// so that a lost event is noticed anyway.
//
// The channel keeps only the latest Change: a slow reader skips
// intermediate states, never the current one. It is closed when ctx ends,
// and the watch's goroutine has ended by then.
func Watch(ctx context.Context, path string, debounce, fallbackEvery time.Duration) (<-chan Change, error) {
	return watch(ctx, path, debounce, fallbackEvery, true)
}

// Poll is Watch without file events, for when the system gives none (no
// inotify instance or watch left): it reads the path every `every`.
func Poll(ctx context.Context, path string, every time.Duration) <-chan Change {
	changes, _ := watch(ctx, path, 0, every, false) // fails only for file events
	return changes
}

// watch is Watch; notify false leaves only the periodic check.
func watch(ctx context.Context, path string, debounce, every time.Duration, notify bool) (<-chan Change, error) {
	if debounce <= 0 {
		debounce = DefaultDebounce
	}
	if every <= 0 {
		every = DefaultFallbackEvery
	}
	w := &watcher{path: path, heeded: map[string]bool{filepath.Clean(path): true}, debounce: debounce, every: every}
	if notify {
		fw, err := fswatch.Open()
		if err != nil {
			return nil, fmt.Errorf("watching lease: %w", err)
		}
		w.fs = fw
		if err := w.watchTheWay(); err != nil {
			fw.Close()
			return nil, fmt.Errorf("watching lease directory: %w", err)
		}
	}
	out := make(chan Change)
	go w.run(ctx, out)
	return out, nil
}

// watchTheWay watches the lease's directory and those on its way, anew
// when one was made again; it fails only when the lease's directory cannot
// be watched (where another cannot, the fallback reads).
func (w *watcher) watchTheWay() error {
	own := filepath.Dir(w.path)
	err := w.fs.Add(own) // first: where watches are scarce, it is the one that counts
	dir, names := linkFreePath(own)
	for _, name := range append([]string{""}, names...) {
		if dir = filepath.Join(dir, name); dir != own {
			_ = w.fs.Add(dir) // made again, the lease's own may not be yet
		}
		w.heeded[dir] = true
	}
	if err != nil {
		// made since, before its parent was watched: no event will tell
		err = w.fs.Add(own)
	}
	return err
}

// unwatchFrom drops the watches of dir and of those below it on the
// lease's way, once dir was moved or removed: they watch directories no
// longer on it (kqueue would keep them under their old names, and never
// watch those made again there), and inotify's watches are few.
func (w *watcher) unwatchFrom(dir string) {
	for d := range w.heeded {
		if d != w.path && (d == dir || strings.HasPrefix(d, dir+string(filepath.Separator))) {
			_ = w.fs.Remove(d)
		}
	}
}

type watcher struct {
	path            string
	heeded          map[string]bool // the lease, its directory and those it is reached through
	debounce, every time.Duration
	fs              *fswatch.Watch // nil: periodic checks only
}

func (w *watcher) run(ctx context.Context, out chan<- Change) {
	defer close(out)
	var reported <-chan struct{}
	if w.fs != nil {
		defer w.fs.Close()
		reported = w.fs.Ready()
	}
	ticker := time.NewTicker(w.every)
	defer ticker.Stop()
	settle := time.NewTimer(w.debounce)
	settle.Stop()
	defer settle.Stop()
	// burst is when the first event not yet read came (zero: none waits):
	// the reading waits debounce after the last event, but never more than
	// maxSettle after the first, so that events that keep coming (a lease
	// touched again and again) never put off noticing a take-over (R6:
	// within a second).
	var burst time.Time
	maxSettle := 4 * w.debounce

	last := Read(w.path)
	pending := &Change{last}
	check := func() {
		if s := Read(w.path); !s.Same(last) {
			last, pending = s, &Change{s}
		}
	}
	for {
		var send chan<- Change
		var next Change
		if pending != nil {
			send, next = out, *pending
		}
		select {
		case <-ctx.Done():
			return
		case send <- next:
			pending = nil
		case <-reported:
			events, errs := w.fs.Take()
			for _, ev := range events {
				// The lease, or a directory on its way moved, removed or
				// made (the path then names another directory, or none).
				// Both may have happened since the last take: the move first.
				if name := filepath.Clean(ev.Name); w.heeded[name] {
					if name != w.path && ev.Has(fsnotify.Rename|fsnotify.Remove) {
						w.unwatchFrom(name)
					}
					if name != w.path && ev.Has(fsnotify.Create) {
						_ = w.watchTheWay()
					}
					if now := time.Now(); burst.IsZero() {
						burst = now
						settle.Reset(w.debounce)
					} else if left := burst.Add(maxSettle).Sub(now); left > 0 {
						settle.Reset(min(w.debounce, left))
					}
				}
			}
			if len(errs) > 0 {
				// An overflow (or any watcher error) may have lost events,
				// the moves of directories on the lease's way among them:
				// those are watched anew (Add puts again a name that now
				// stands for another directory), and the lease read.
				_ = w.watchTheWay()
				check()
			}
		case <-settle.C:
			burst = time.Time{}
			check()
		case <-ticker.C:
			check()
		}
	}
}
