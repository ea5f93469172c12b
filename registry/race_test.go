package registry

import (
	"context"
	"errors"
	"github.com/majordomus-mcp/majordomus-mcp/internal/testchild"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

const racers = 32

// racersLockWait is the racers' wait for the sidecar lock: 32 of them
// queue for it, which on a loaded machine (or under wine) outlasts the
// default 2 s; the race is about who wins, not how fast.
const racersLockWait = time.Minute

// newLeases returns one fresh document per racer.
func newLeases(t *testing.T) []Lease {
	docs := make([]Lease, racers)
	for i := range docs {
		docs[i] = newLease(t)
	}
	return docs
}

// race runs f in racers goroutines released together and waits for them.
func race(f func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range racers {
		wg.Go(func() {
			<-start
			f(i)
		})
	}
	close(start)
	wg.Wait()
}

func TestAcquire_RacingGoroutinesHaveOneWinner(t *testing.T) {
	path := leasePath(t)
	docs := newLeases(t)
	var won, lost atomic.Int32
	race(func(i int) {
		switch err := (&LeaseFile{Path: path, LockWait: racersLockWait}).Acquire(docs[i]); {
		case err == nil:
			won.Add(1)
		case errors.Is(err, ErrLeaseExists):
			lost.Add(1)
		default:
			t.Errorf("Acquire: %v", err)
		}
	})
	if won.Load() != 1 || lost.Load() != racers-1 {
		t.Errorf("won %d, lost %d; want 1 and %d", won.Load(), lost.Load(), racers-1)
	}
	noTemporaries(t, filepath.Dir(path))
}

func TestAcquire_RacingProcessesHaveOneWinner(t *testing.T) {
	const n = 8
	path := leasePath(t)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	children := make([]*testchild.Child, n)
	for i := range children {
		children[i] = startChild(t, "acquire", path)
	}
	for _, c := range children {
		c.Expect(t, "ready")
	}
	for _, c := range children {
		c.Send(t, "go")
	}
	outcomes := map[string]int{}
	for _, c := range children {
		outcomes[c.Line(t)]++
	}
	if outcomes["won"] != 1 || outcomes["lost"] != n-1 {
		t.Errorf("outcomes = %v, want one won and %d lost", outcomes, n-1)
	}
}

func TestTakeOverThenAcquire_RacingGoroutinesLeaveOneHolder(t *testing.T) {
	path := leasePath(t)
	writeFile(t, path, []byte("{not a lease"))
	obs := observe(t, path)
	docs := newLeases(t)
	var removed, won atomic.Int32
	race(func(i int) {
		lf := &LeaseFile{Path: path, LockWait: racersLockWait}
		ok, err := lf.TakeOver(obs)
		if err != nil {
			t.Errorf("TakeOver: %v", err)
			return
		}
		if ok {
			removed.Add(1)
		}
		switch err := lf.Acquire(docs[i]); {
		case err == nil:
			won.Add(1)
		case !errors.Is(err, ErrLeaseExists):
			t.Errorf("Acquire: %v", err)
		}
	})
	if removed.Load() != 1 || won.Load() != 1 {
		t.Errorf("removed %d, won %d; want 1 and 1", removed.Load(), won.Load())
	}
	if obs := observe(t, path); obs.Lease == nil {
		t.Errorf("no lease after the race: %+v", obs.Verdict)
	}
}

func TestTakeOverThenAcquire_RacingProcessesLeaveOneHolder(t *testing.T) {
	const n = 6
	path := leasePath(t)
	writeFile(t, path, []byte(`{"schema":"something/v9"}`))
	children := make([]*testchild.Child, n)
	for i := range children {
		children[i] = startChild(t, "takeover", path)
	}
	for _, c := range children {
		c.Expect(t, "ready")
	}
	for _, c := range children {
		c.Send(t, "go")
	}
	removed, won := 0, 0
	for _, c := range children {
		out := c.Line(t)
		if strings.HasPrefix(out, "error") {
			t.Fatalf("child: %s", out)
		}
		if strings.HasPrefix(out, "removed=true") {
			removed++
		}
		if strings.HasSuffix(out, " won") {
			won++
		}
	}
	if removed != 1 || won != 1 {
		t.Errorf("removed %d, won %d; want 1 and 1", removed, won)
	}
}

func TestLock_ReleasedByTheKernelWhenItsHolderDies(t *testing.T) {
	path := leasePath(t)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	c := startChild(t, "lock", path)
	c.Expect(t, "locked")
	if _, err := lockFile(context.Background(), LockPath(path), 0); !errors.Is(err, ErrLockTimeout) {
		t.Fatalf("lock while the child holds it = %v, want ErrLockTimeout", err)
	}
	if err := c.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := c.Cmd.Wait(); err == nil {
		t.Fatal("the child was not killed")
	}
	l, err := lockFile(context.Background(), LockPath(path), 0)
	if err != nil {
		t.Fatalf("lock after the holder died = %v", err)
	}
	l.Close()
}

// A reader racing acquires and releases sees a whole lease or none: never an
// empty or partial file.
func TestReaders_NeverSeeAPartialLease(t *testing.T) {
	path := leasePath(t)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var reads atomic.Int32
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			s := Read(path)
			reads.Add(1)
			switch {
			case s.Found == Missing:
			case s.Found == Regular:
				if _, err := Decode(s.Raw); err != nil {
					t.Errorf("a reader saw %q: %v", s.Raw, err)
					return
				}
			default:
				t.Errorf("a reader saw a %s", s.Found)
				return
			}
		}
	})
	for range 60 {
		lf := &LeaseFile{Path: path}
		if err := lf.Acquire(newLease(t)); err != nil {
			t.Fatal(err)
		}
		if err := lf.Publish("http://127.0.0.1:1"); err != nil {
			t.Fatal(err)
		}
		if err := lf.Release(); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if reads.Load() == 0 {
		t.Error("the reader never ran")
	}
}
