package layer

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// waitFor bounds every wait on an event; it is a failure deadline, not a
// synchronisation delay.
const waitFor = 10 * time.Second

// tapLogger returns a test logger whose entries, fields included, are
// also sent to the returned channel.
func tapLogger(t *testing.T) (*zap.Logger, <-chan observer.LoggedEntry) {
	tap := &tapCore{t: t, ch: make(chan observer.LoggedEntry, 4096)}
	wrap := zap.WrapCore(func(c zapcore.Core) zapcore.Core { return zapcore.NewTee(c, tap) })
	return zaptest.NewLogger(t, zaptest.Level(zap.DebugLevel), zaptest.WrapOptions(wrap)), tap.ch
}

// tapCore is a zapcore.Core sending every entry to a channel.
type tapCore struct {
	t      *testing.T
	ch     chan observer.LoggedEntry
	fields []zapcore.Field
}

func (c *tapCore) Enabled(zapcore.Level) bool { return true }

func (c *tapCore) With(fs []zapcore.Field) zapcore.Core {
	return &tapCore{t: c.t, ch: c.ch, fields: append(append([]zapcore.Field(nil), c.fields...), fs...)}
}

func (c *tapCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	return ce.AddCore(e, c)
}

func (c *tapCore) Write(e zapcore.Entry, fs []zapcore.Field) error {
	select {
	case c.ch <- observer.LoggedEntry{Entry: e, Context: append(append([]zapcore.Field(nil), c.fields...), fs...)}:
	default:
		c.t.Errorf("log tap full, dropped %q", e.Message)
	}
	return nil
}

func (c *tapCore) Sync() error { return nil }

// waitLog waits for an entry with this message and returns it with the
// messages logged before it.
func waitLog(t *testing.T, ch <-chan observer.LoggedEntry, msg string) (observer.LoggedEntry, []string) {
	t.Helper()
	deadline := time.After(waitFor)
	var before []string
	for {
		select {
		case e := <-ch:
			if e.Message == msg {
				return e, before
			}
			before = append(before, e.Message)
		case <-deadline:
			t.Fatalf("no %q logged within %v (saw %q)", msg, waitFor, before)
		}
	}
}

func count(list []string, s string) int {
	n := 0
	for _, e := range list {
		if e == s {
			n++
		}
	}
	return n
}

type change struct{ old, new *Index }

// watch runs l.Watch until the test ends and returns its onChange calls.
func watch(t *testing.T, l *Layer) <-chan change {
	ctx, cancel := context.WithCancel(context.Background())
	changes := make(chan change, 16)
	done := make(chan error, 1)
	go func() {
		done <- l.Watch(ctx, func(old, new *Index) { changes <- change{old, new} })
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Watch returned %v", err)
		}
	})
	return changes
}

func waitChange(t *testing.T, changes <-chan change) change {
	t.Helper()
	select {
	case c := <-changes:
		return c
	case <-time.After(waitFor):
		t.Fatalf("no change within %v", waitFor)
		return change{}
	}
}

// waitBody waits for a change after which the object at uri reads body,
// through any changes before it.
func waitBody(t *testing.T, changes <-chan change, uri, body string) {
	t.Helper()
	for {
		if o, _ := waitChange(t, changes).new.Lookup(uri); o.Body == body {
			return
		}
	}
}

// openWatched writes files, opens a layer on them and starts watching; it
// returns once the watch has set up and done its first sync, with the
// messages logged until then.
func openWatched(t *testing.T, files map[string]string, strict bool) (string, *Layer, <-chan change, <-chan observer.LoggedEntry, []string) {
	root := testtemp.Dir(t)
	writeTree(t, root, files)
	l, changes, entries, before := watchAt(t, root, strict)
	return root, l, changes, entries, before
}

// watchAt opens a layer on root as it is and starts watching, as
// openWatched does.
func watchAt(t *testing.T, root string, strict bool) (*Layer, <-chan change, <-chan observer.LoggedEntry, []string) {
	t.Helper()
	log, entries := tapLogger(t)
	l, err := Open(Config{Root: root, Strict: strict, Debounce: 20 * time.Millisecond, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	changes := watch(t, l)
	_, before := waitLog(t, entries, "layer unchanged")
	return l, changes, entries, before
}

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	writeTree(t, root, map[string]string{rel: content})
}
