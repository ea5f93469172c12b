package layer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/internal/fswatch"
)

// A layer that cannot be watched whole (this user's inotify watches used
// up by an editor on a large tree, say) is still kept current: what no
// watch hears is found by a rebuild every rescan period, and Withheld says
// so, as the log does once.

// rescanEvery is how often a layer not watched whole is rebuilt: fifty
// debounce periods (5 s by default).
func (l *Layer) rescanEvery() time.Duration { return 50 * l.debounce }

// addWatch watches path: a variable, so that a test can have it refused
// as the kernel refuses it once the watches are used up.
var addWatch = (*fswatch.Watch).Add

// blindness gathers the watches one pass of Watch could not put.
type blindness struct {
	n     int
	first string // the first one's path and error
}

func (b *blindness) begin() { *b = blindness{} }

func (b *blindness) failed(path string, err error) {
	if b.n == 0 {
		b.first = fmt.Sprintf("%s: %v%s", path, err, watchLimitHint(err))
	}
	b.n++
}

// noteBlindness makes what b gathered the layer's: said at warn as the
// layer stops being watched whole and at info once it is again, and
// named by Withheld meanwhile. It reports whether a directory is unwatched.
func (l *Layer) noteBlindness(b *blindness) bool {
	was := l.blind.Load() != nil
	if b.n == 0 {
		if was {
			l.blind.Store(nil)
			l.log.Info("the layer is watched whole again: its changes are heard at once")
		}
		return false
	}
	why := fmt.Sprintf("changes to the layer on disk are found by a rescan every %s, not heard at once: %d of its directories cannot be watched (the first, %s)", l.rescanEvery(), b.n, b.first)
	l.blind.Store(&why)
	if !was {
		l.log.Warn("part of the layer cannot be watched: its changes are found by a rescan", zap.String("reason", why))
	}
	return true
}

// watcher is a watch on aiDir (nothing there is fine: its creation is
// heard), with its inbox, or why none can be had.
func watcher(aiDir string) (*fswatch.Watch, error) {
	w, err := fswatch.Open()
	if err != nil {
		return nil, err
	}
	if err := addWatch(w, aiDir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		w.Close()
		return nil, fmt.Errorf("%s: %w", aiDir, err)
	}
	return w, nil
}

// rescanUnwatched keeps the index current by a rebuild every rescan
// period while the layer cannot be watched at all (err says why), and
// returns a watch on aiDir once one can be had; nil once ctx ends.
func (l *Layer) rescanUnwatched(ctx context.Context, onChange func(old, new *Index), aiDir string, err error) *fswatch.Watch {
	why := fmt.Sprintf("changes to the layer on disk are found by a rescan every %s, not heard at once: it cannot be watched: %v%s", l.rescanEvery(), err, watchLimitHint(err))
	l.blind.Store(&why) // until the watch that follows puts every watch (noteBlindness)
	l.log.Warn("the layer cannot be watched: its changes are found by a rescan", zap.String("reason", why))
	l.mu.Lock()
	l.read = nil
	l.mu.Unlock()
	t := time.NewTicker(l.rescanEvery())
	defer t.Stop()
	for {
		if old, ix, ok := l.rebuild(); ok && onChange != nil {
			onChange(old, ix)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if w, err := watcher(aiDir); err == nil {
			return w
		}
	}
}
