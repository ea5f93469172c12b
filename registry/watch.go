package registry

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
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
// It watches the parent directory (the lease is replaced by rename, which
// would drop a watch on the file itself), filters events by the lease's
// name, waits debounce (zero: DefaultDebounce) after the last event before
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
	w := &watcher{path: path, base: filepath.Base(path), debounce: debounce, every: every}
	if notify {
		fw, err := fsnotify.NewWatcher()
		if err != nil {
			return nil, fmt.Errorf("watching lease: %w", err)
		}
		if err := fw.Add(filepath.Dir(path)); err != nil {
			fw.Close()
			return nil, fmt.Errorf("watching lease directory: %w", err)
		}
		w.fs = fw
	}
	out := make(chan Change)
	go w.run(ctx, out)
	return out, nil
}

type watcher struct {
	path, base      string
	debounce, every time.Duration
	fs              *fsnotify.Watcher // nil: periodic checks only
}

func (w *watcher) run(ctx context.Context, out chan<- Change) {
	defer close(out)
	var events <-chan fsnotify.Event
	var errs <-chan error
	if w.fs != nil {
		defer w.fs.Close()
		events, errs = w.fs.Events, w.fs.Errors
	}
	ticker := time.NewTicker(w.every)
	defer ticker.Stop()
	settle := time.NewTimer(w.debounce)
	settle.Stop()
	defer settle.Stop()

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
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			// The lease's own name, or the directory itself moved or
			// removed (the path then names another directory, or none).
			if filepath.Base(ev.Name) == w.base || filepath.Clean(ev.Name) == filepath.Dir(w.path) {
				settle.Reset(w.debounce)
			}
		case _, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			// An overflow (or any watcher error) may have lost events.
			check()
		case <-settle.C:
			check()
		case <-ticker.C:
			check()
		}
	}
}
