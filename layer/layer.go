package layer

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// DefaultDebounce is the quiet period Watch waits for after a change.
const DefaultDebounce = 100 * time.Millisecond

// maxDebounceFactor bounds how long a continuous burst of changes can delay
// a rebuild: at most this many debounce periods after its first event.
const maxDebounceFactor = 10

// Config configures a [Layer].
type Config struct {
	Root string // checkout root, as returned by FindCheckout
	// Name is the checkout's name, as its manifest says it; "" names it
	// after its root directory. See [Index.Name].
	Name string
	// Strict refuses to serve a degraded index: Open fails with ErrDegraded,
	// and a degraded rebuild is logged at error and dropped (the previous
	// index stays current).
	Strict   bool
	Debounce time.Duration // quiet period before a rebuild; <= 0 means DefaultDebounce
	Logger   *zap.Logger   // nil means zap.NewNop()
}

// Layer holds the current [Index] of a checkout and rebuilds it when
// .ai/repo changes (see [Layer.Watch]).
type Layer struct {
	root     string
	name     string // Config.Name
	strict   bool
	debounce time.Duration
	slack    time.Duration // see clockSlack
	log      *zap.Logger

	cur      atomic.Pointer[Index]
	withheld atomic.Pointer[string] // why the last rebuild was not served (--strict), until one is
	blind    atomic.Pointer[string] // why changes are found by a rescan, while they are (watch_rescan.go)
	watching atomic.Bool

	mu     sync.Mutex          // serialises rebuilds and guards logged and read
	logged map[Diagnostic]bool // diagnostics of the last build, already logged
	// read is what the build the index served was made of read, until a
	// watch's start has compared it with the disk (nil: nothing to trust).
	read *sources
}

// Open builds generation 1 of the checkout's index. With cfg.Strict and a
// degraded index it returns an error wrapping [ErrDegraded].
func Open(cfg Config) (*Layer, error) {
	if cfg.Root == "" {
		return nil, errors.New("layer: opening: no root given")
	}
	root, err := filepath.Abs(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("layer: opening: %w", err)
	}
	l := &Layer{root: root, name: strings.TrimSpace(cfg.Name), strict: cfg.Strict, debounce: cfg.Debounce, slack: clockSlack, log: cmp.Or(cfg.Logger, zap.NewNop())}
	if l.debounce <= 0 {
		l.debounce = DefaultDebounce
	}
	start := time.Now()
	ix, src, err := build(root, l.name, 1)
	if err != nil {
		return nil, fmt.Errorf("layer: opening: %w", err)
	}
	l.read = &src
	l.logDiagnostics(ix)
	if l.strict && ix.State() != "ok" {
		first := ix.firstError()
		return nil, &refusal{fmt.Errorf("%w: the index of %s carries %d error(s), first %s: %s; refusing to serve under --strict",
			ErrDegraded, root, ix.ErrorCount(), first.Path, first.Message), root, src, l.slack}
	}
	l.cur.Store(ix)
	l.log.Info("layer built", indexFields(ix, time.Since(start))...)
	return l, nil
}

// refusal is Open's refusal of a degraded index, with the files it read.
type refusal struct {
	err   error
	root  string
	src   sources
	slack time.Duration
}

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

// Unchanged reports whether err, an error of Open's, stands as it is: a
// refusal of a degraded index whose files have not changed since (a walk of
// their stamps, a tenth of a build; where the system gives no stamps, as on
// Windows, none is proved unchanged). Any other error may not.
func Unchanged(err error) bool {
	var r *refusal
	return errors.As(err, &r) && unchangedSince(r.root, r.src, r.slack)
}

// Current returns the index being served. It never returns nil and is safe
// for concurrent use; the index returned must not be modified.
func (l *Layer) Current() *Index { return l.cur.Load() }

// Continue goes on from the generation another server served, given by
// its number and digest ([Index.Digest]), and reports whether the current
// index's generation moved: a server that takes over the checkout serves
// the same files under the same generation and others under the next, so
// that no client sees a generation go back. A current generation past the
// other is kept. The objects stay as they are.
func (l *Layer) Continue(generation uint64, digest string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	cur := l.cur.Load()
	next := generation + 1
	if cur.Digest() == digest {
		next = generation
	}
	if cur.Generation >= next {
		return false
	}
	c := *cur // its tables are never modified: sharing them is safe
	c.Generation = next
	l.cur.Store(&c)
	return true
}

// Rebuild builds the next index now, as a watch does on a change: for a
// layer that was not watched for a while, before it is served again.
func (l *Layer) Rebuild() (old, ix *Index, published bool) { return l.rebuild() }

// rebuild builds the next index and publishes it when its content differs
// from the current one. It returns the old and new index when it published.
func (l *Layer) rebuild() (old, ix *Index, published bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	old = l.cur.Load()
	start := time.Now()
	ix, src, err := build(l.root, l.name, old.Generation+1)
	l.read = nil
	if err != nil {
		l.log.Error("layer rebuild failed", zap.Error(err), zap.Uint64("generation", old.Generation))
		return old, nil, false
	}
	l.logDiagnostics(ix)
	changed := Changed(old, ix)
	if len(changed) == 0 && slices.Equal(old.Diagnostics, ix.Diagnostics) {
		l.withheld.Store(nil) // what is on disk is what is served
		l.read = &src
		l.log.Debug("layer unchanged", zap.Uint64("generation", old.Generation))
		return old, nil, false
	}
	if l.strict && ix.State() != "ok" {
		first := ix.firstError()
		why := fmt.Sprintf("the layer on disk is not served under --strict: it carries %d error(s), first %s: %s; generation %d is served until they are fixed",
			ix.ErrorCount(), first.Path, first.Message, old.Generation)
		l.withheld.Store(&why)
		l.log.Error("degraded layer not served under strict",
			zap.Uint64("generation", old.Generation), zap.Int("errors", ix.ErrorCount()), zap.String("first", first.Path+": "+first.Message))
		return old, nil, false
	}
	l.withheld.Store(nil)
	l.cur.Store(ix)
	l.read = &src
	fields := append(indexFields(ix, time.Since(start)), zap.Int("changed", len(changed)))
	l.log.Info("layer rebuilt", fields...)
	return old, ix, true
}

// logDiagnostics logs each diagnostic of ix not present in the previous
// build, at warn or error; it must be called with l.mu held (or before l
// is shared).
func (l *Layer) logDiagnostics(ix *Index) {
	next := make(map[Diagnostic]bool, len(ix.Diagnostics))
	for _, d := range ix.Diagnostics {
		next[d] = true
		if l.logged[d] {
			continue
		}
		fields := []zap.Field{zap.String("path", d.Path), zap.String("problem", d.Message)}
		if d.Level == LevelError {
			l.log.Error("layer diagnostic", fields...)
		} else {
			l.log.Warn("layer diagnostic", fields...)
		}
	}
	l.logged = next
}

// Withheld says why the index on disk may not be the one served: a
// rebuild refused under Strict, or changes found by a rescan only; "" when
// neither.
func (l *Layer) Withheld() string {
	var why []string
	for _, w := range []*string{l.withheld.Load(), l.blind.Load()} {
		if w != nil {
			why = append(why, *w)
		}
	}
	return strings.Join(why, "; ")
}

func indexFields(ix *Index, took time.Duration) []zap.Field {
	return []zap.Field{
		zap.Uint64("generation", ix.Generation),
		zap.Int("objects", len(ix.Objects)),
		zap.String("index_state", ix.State()),
		zap.Int("diagnostics", len(ix.Diagnostics)),
		zap.Duration("took", took),
	}
}

// firstError is the index's first error diagnostic; a degraded index has
// one.
func (ix *Index) firstError() Diagnostic {
	return ix.Diagnostics[slices.IndexFunc(ix.Diagnostics, func(d Diagnostic) bool { return d.Level == LevelError })]
}
