package registry

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A lease replaced while events on it keep coming (touched again and
// again, faster than the debounce) is seen while they still come: the
// debounce delays a reading, it must not put it off for as long as the
// events go on (R6: a leaseholder notices a take-over within a second).
func TestWatch_SeesTheLeaseReplacedWhileItIsTouchedFasterThanTheDebounce(t *testing.T) {
	path := leasePath(t)
	writeFile(t, path, docBytes(t, nil))
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := Watch(ctx, path, 0, time.Hour) // the leaseholder's debounce (DefaultDebounce)
	if err != nil {
		t.Fatal(err)
	}
	stopWatch(t, cancel, ch)
	nextChange(t, ch, "the initial state", holding(docBytes(t, nil)))

	theirs := docBytes(t, func(l *Lease) { l.Instance = "ffffffffffffffffffffffffffffffff" })
	tmp := filepath.Join(filepath.Dir(path), ".tmp")
	writeFile(t, tmp, theirs)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() { // a harmless touch, every 10 ms, until the take-over is seen
		defer close(stopped)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case now := <-tick.C:
				_ = os.Chtimes(path, now, now)
			}
		}
	}()
	defer func() { close(stop); <-stopped }()
	select {
	case c := <-ch:
		if !holding(theirs)(c) {
			t.Fatalf("change %v, want the take-over", c.Found)
		}
	case <-time.After(20 * time.Second): // the events never stop: unbounded, it would wait for ever
		t.Fatal("the lease replaced was not seen while it was touched")
	}
}
