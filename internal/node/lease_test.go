package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/majordomus-mcp/majordomus-mcp/internal/rawio"
	"github.com/majordomus-mcp/majordomus-mcp/layer"
	"github.com/majordomus-mcp/majordomus-mcp/machine"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
)

// On a system where a process's identity cannot be read, no lease is read
// or written: every attempt finds the lease unusable, with the reason,
// which the machine answers by serving the client alone (R2).
func TestAnUnreadableIdentityMakesTheLeaseUnusable(t *testing.T) {
	e := &leaseFile{identityErr: errors.New("process identity is unsupported on plan9")}
	obs := e.Attempt(context.Background())
	if obs.Class != machine.ClassUnusable || !strings.Contains(obs.Reason, "unsupported on plan9") {
		t.Fatalf("Attempt = %+v, want unusable with the reason", obs)
	}
}

// The judge's classes and the machine's are one vocabulary: every class an
// observation can give reaches the machine as the word it is, which the
// machine knows (absent is acquired instead, and unprobed never leaves
// Observe, which always probes); and every class the machine knows but won
// and outraced, which only an attempt's own create gives, is the judge's.
func TestEveryLeaseClassIsHandled(t *testing.T) {
	judged := map[machine.Class]bool{}
	for _, c := range registry.Classes {
		if c == registry.Absent || c == registry.Unprobed {
			continue
		}
		judged[machine.Class(c)] = true
		if !slices.Contains(machine.Classes, machine.Class(c)) {
			t.Errorf("the judge's class %q is no class of the machine's", c)
		}
	}
	for _, c := range machine.Classes {
		if !judged[c] && c != machine.ClassWon && c != machine.ClassOutraced {
			t.Errorf("the machine's class %q is no class of the judge's", c)
		}
	}
	if len(judged) < 9 {
		t.Fatalf("registry.Classes lists %d judged classes", len(judged))
	}
}

// What a lost lease became is said in words a user can act on.
func TestALostLeaseIsExplained(t *testing.T) {
	self, err := registry.Self()
	if err != nil {
		t.Fatal(err)
	}
	doc := func(url string) []byte {
		l := registry.NewLease(self, "/checkout", strings.Repeat("0", 32), "default", "0.1.0", time.Now())
		if url != "" {
			l.URL = &url
		}
		raw, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	for _, c := range []struct {
		snap registry.Snapshot
		want string
	}{
		{registry.Snapshot{Found: registry.Missing}, "removed"},
		{registry.Snapshot{Found: registry.Regular}, "emptied"},
		{registry.Snapshot{Found: registry.Directory}, "replaced by a directory"},
		{registry.Snapshot{Found: registry.Symlink, Raw: []byte("/elsewhere")}, "replaced by a symbolic link"},
		{registry.Snapshot{Found: registry.Regular, Raw: []byte("{oops")}, "not a lease"},
		{registry.Snapshot{Found: registry.Regular, Raw: doc("")}, fmt.Sprintf("pid %d) took the lease over", os.Getpid())},
		{registry.Snapshot{Found: registry.Regular, Raw: doc("http://127.0.0.1:9")}, "serves at http://127.0.0.1:9"},
	} {
		if got := lossReason(c.snap); !strings.Contains(got, c.want) {
			t.Errorf("lossReason(%+v) = %q, want it to say %q", c.snap, got, c.want)
		}
	}
}

// The first attempt takes the reading of the lease begun as the node was
// built, though the lease changed since: judged absent then, the lease is
// created only if it still is (here another was written, so the attempt
// was outraced). The next attempt reads the lease anew.
func TestTheFirstAttemptTakesTheReadingBegunAsTheNodeWasBuilt(t *testing.T) {
	co := exampleCheckout(t)
	handled := make(chan struct{})
	close(handled)
	e := newLeaseFile(co, statusTimes, handled)
	e.readSoon()
	first := *e.first.Load()
	r := <-first
	if r.err != nil || r.o.Verdict.Class != registry.Absent {
		t.Fatalf("the early reading = %+v, %v; want the lease absent", r.o.Verdict, r.err)
	}
	first <- r // as if the machine had not asked yet
	if err := os.WriteFile(e.Path(), []byte("not a lease"), 0o600); err != nil {
		t.Fatal(err)
	}
	if obs := e.Attempt(context.Background()); obs.Class != machine.ClassOutraced {
		t.Fatalf("the first attempt = %+v; want outraced: it took the early reading", obs)
	}
	if obs := e.Attempt(context.Background()); obs.Class != machine.Class(registry.Corrupt) {
		t.Fatalf("the second attempt = %+v; want the lease read anew, corrupt", obs)
	}
}

// An attempt cancelled while the early reading is under way returns at
// once, and the server that reading proves later is let go.
func TestACancelledFirstAttemptLetsTheEarlyReadingGo(t *testing.T) {
	first := make(chan observed, 1)
	e := &leaseFile{}
	e.first.Store(&first)
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("the client left"))
	if r := e.read(ctx); r.err == nil || r.err.Error() != "the client left" {
		t.Fatalf("read = %v; want the cancellation's cause", r.err)
	}
	proven, other := net.Pipe()
	defer other.Close()
	_ = other.SetReadDeadline(time.Now().Add(wait)) // a bound for the failure, not a wait
	first <- observed{o: registry.Observation{Proven: proven}}
	if _, err := other.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("the proven connection is still open (read: %v)", err)
	}
}

// A live reading tells what a bridge asks before each message: the lease
// file it judged, stamped before it was read, carries the live server's
// instance, so the bridge's first message does not read it again.
func TestALiveReadingTellsWhatTheLeaseCarries(t *testing.T) {
	co := exampleCheckout(t)
	handled := make(chan struct{})
	close(handled)
	e := newLeaseFile(co, statusTimes, handled)
	if err := e.file.Acquire(e.document()); err != nil {
		t.Fatal(err)
	}
	stamp, err := rawio.Lstat(e.Path())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(e.Path())
	if err != nil {
		t.Fatal(err)
	}
	lease, err := registry.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan observed, 1)
	first <- observed{o: registry.Observation{Snapshot: registry.Snapshot{Found: registry.Regular, Raw: raw},
		Lease: &lease, Verdict: registry.Verdict{Class: registry.Live}}, stamp: &stamp}
	e.first.Store(&first)
	if obs := e.Attempt(context.Background()); obs.Class != machine.Class(registry.Live) {
		t.Fatalf("the attempt = %+v; want live", obs)
	}
	if c := e.carrying.Load(); c == nil || c.instance != lease.Instance || !c.file.Same(stamp) {
		t.Fatalf("carrying = %+v; want the live lease's instance and stamp", c)
	}
	if ours, why := e.Carries(lease.Instance); !ours {
		t.Fatalf("Carries = false (%s); want true", why)
	}
}

// A leaseholder that can have no file events (no inotify instance left)
// reads its lease every second instead, and notices it was removed.
func TestALeaseWatchedWithoutFileEventsIsFoundLost(t *testing.T) {
	watchLeaseFile = func(context.Context, string, time.Duration, time.Duration) (<-chan registry.Change, error) {
		return nil, errors.New("watching lease: couldn't initialize inotify: too many open files")
	}
	t.Cleanup(func() { watchLeaseFile = registry.Watch })
	path, lf := leaseOf(t, exampleCheckout(t))
	held, _ := lf.Held()
	e := &leaseFile{file: lf}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lost, err := e.Lost(ctx, held.Instance)
	if err == nil || !strings.Contains(err.Error(), "too many open files") {
		t.Fatalf("Lost = %v, want why it reads the lease instead", err)
	}
	removedIsLost(ctx, t, path, lost)
}

// A leaseholder whose checkout went away and came back, and which can
// have no file events by then (no inotify watch left), reads its lease
// every second, and tries to watch it again only a fallback (a minute)
// later: it neither tries at every reading, without end (the poll's
// first report is at once), nor misses that the lease was then removed.
func TestALeaseBackWithoutFileEventsIsReadNotWatchedWithoutEnd(t *testing.T) {
	co := exampleCheckout(t)
	gone := make(chan struct{})
	co.Logger = zap.New(zapcore.RegisterHooks(zapcore.NewCore(zapcore.NewJSONEncoder(zapcore.EncoderConfig{}), zapcore.AddSync(io.Discard), zapcore.WarnLevel), func(e zapcore.Entry) error {
		if strings.HasPrefix(e.Message, "the checkout is gone from") {
			close(gone)
		}
		return nil
	}))
	handled := make(chan struct{})
	close(handled)
	e := newLeaseFile(co, statusTimes, handled)
	if err := e.file.Acquire(e.document()); err != nil {
		t.Fatal(err)
	}
	held, _ := e.file.Held()
	events, refused := make(chan registry.Change, 1), make(chan struct{})
	var attempts atomic.Int32
	var once sync.Once
	watchLeaseFile = func(context.Context, string, time.Duration, time.Duration) (<-chan registry.Change, error) {
		if attempts.Add(1) == 1 {
			return events, nil
		}
		once.Do(func() { close(refused) })
		return nil, errors.New("watching lease: no inotify watches left")
	}
	t.Cleanup(func() { watchLeaseFile = registry.Watch })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	lost, err := e.Lost(ctx, held.Instance)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(co.Root, co.Root+"-moved"); err != nil {
		t.Fatal(err)
	}
	events <- registry.Change{Snapshot: registry.Read(e.file.Path)} // what the watch tells of the move
	select {
	case <-gone:
	case <-ctx.Done():
		t.Fatal("the checkout's move was not noticed")
	}
	if err := os.Rename(co.Root+"-moved", co.Root); err != nil {
		t.Fatal(err)
	}
	select {
	case <-refused:
	case <-ctx.Done():
		t.Fatal("the lease back was not watched again")
	}
	removedIsLost(ctx, t, e.file.Path, lost)
	if n := attempts.Load(); n != 2 {
		t.Fatalf("%d watches tried; want 2", n)
	}
}

// A lease read as missing while its checkout was away, and judged once
// the checkout is back, is judged by what the path holds then: the lease
// that came back with it is held still, and another's there is a loss
// named as such (not "removed").
func TestALeaseReadWhileItsCheckoutWasAwayIsJudgedAsThePathHoldsItNow(t *testing.T) {
	co := exampleCheckout(t)
	path, lf := leaseOf(t, co)
	held, _ := lf.Held()
	e := &leaseFile{file: lf}
	away := func() registry.Snapshot {
		t.Helper()
		if err := os.Rename(co.Root, co.Root+"-away"); err != nil {
			t.Fatal(err)
		}
		snap := registry.Read(path)
		if err := os.Rename(co.Root+"-away", co.Root); err != nil {
			t.Fatal(err)
		}
		if snap.Found != registry.Missing {
			t.Fatalf("read while away: %v", snap.Found)
		}
		return snap
	}
	if snap := e.current(away()); !e.stillHolds(snap, held.Instance) {
		t.Fatalf("the lease back with its checkout was taken for lost: %s", lossReason(snap))
	}
	snap := away()
	lf.Forget()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	self, err := registry.Self()
	if err != nil {
		t.Fatal(err)
	}
	other := &registry.LeaseFile{Path: path} // another process's, as this one's would be
	if err := other.Acquire(registry.NewLease(self, co.Root, layer.RepositoryID(co.Root), co.Profile, "0.1.0", time.Now())); err != nil {
		t.Fatal(err)
	}
	now := e.current(snap)
	if e.stillHolds(now, held.Instance) {
		t.Fatal("another's lease was taken for this one's")
	}
	if why, want := lossReason(now), fmt.Sprintf("another process (pid %d) took the lease over", os.Getpid()); why != want {
		t.Fatalf("lost: %q; want %q", why, want)
	}
	other.Forget()
}

// removedIsLost removes the lease at path and waits for lost to say so.
func removedIsLost(ctx context.Context, t *testing.T, path string, lost <-chan string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	select {
	case reason := <-lost:
		if reason != "the lease file was removed" {
			t.Fatalf("lost: %s", reason)
		}
	case <-ctx.Done():
		t.Fatal("the lease's removal was not noticed")
	}
}
