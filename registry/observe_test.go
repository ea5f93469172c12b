package registry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a settable clock for the Observer.
type fakeClock struct{ now atomic.Pointer[time.Time] }

func newFakeClock(t time.Time) *fakeClock {
	c := &fakeClock{}
	c.now.Store(&t)
	return c
}
func (c *fakeClock) Now() time.Time          { return *c.now.Load() }
func (c *fakeClock) Advance(d time.Duration) { t := c.Now().Add(d); c.now.Store(&t) }

// countingProbe answers every probe with res and counts the calls.
func countingProbe(res ProbeResult, calls *atomic.Int32) ProbeFunc {
	return func(context.Context, ProbeTarget) ProbeResult {
		calls.Add(1)
		return res
	}
}

func TestObserver_BusyTurnsStaleAfterTheBusyGrace(t *testing.T) {
	path := leasePath(t)
	self, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	// A lease naming this very process, whose server does not answer.
	silent := func(url string) []byte {
		return docBytes(t, func(l *Lease) {
			l.PID, l.ProcessStart, l.BootID, l.URL = self.PID, self.Start, self.BootID, &url
		})
	}
	writeFile(t, path, silent("http://127.0.0.1:1"))
	clock := newFakeClock(time.Now())
	var calls atomic.Int32
	o := &Observer{
		Path: path, RepositoryID: probeRepo, Executable: ourExe, Version: ourVersion,
		Probe: countingProbe(ProbeResult{Status: ProbeFailed, Reason: "connection refused"}, &calls),
		Env:   Env{Now: clock.Now},
	}
	expect := func(want Class) Observation {
		t.Helper()
		obs, err := o.Observe(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if obs.Verdict.Class != want || obs.Owner != OwnerAlive {
			t.Fatalf("verdict %+v, owner %s; want %s with a live owner", obs.Verdict, obs.Owner, want)
		}
		return obs
	}
	expect(Busy)
	clock.Advance(DefaultBusyGrace - time.Millisecond)
	expect(Busy)
	// The same document written again (a new file) keeps the timer running.
	writeFile(t, path+".new", silent("http://127.0.0.1:1"))
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Millisecond)
	if obs := expect(Stale); !obs.Verdict.TakeOver {
		t.Error("a stale lease is not to be taken over")
	}

	// Another lease restarts the busy timer.
	writeFile(t, path, silent("http://127.0.0.1:2"))
	expect(Busy)
	clock.Advance(DefaultBusyGrace / 2)
	expect(Busy)
	if calls.Load() != 5 {
		t.Errorf("probed %d times, want 5", calls.Load())
	}
}

func TestObserver_ProbesOnlyWhenItMatters(t *testing.T) {
	tests := []struct {
		name  string
		raw   []byte
		class Class
		probe bool
	}{
		{"corrupt", []byte("{not a lease"), Corrupt, false},
		{"empty and new", nil, Binding, false},
		{"no URL yet, owner gone", docBytes(t, noURL), Abandoned, false},
		{"superseded", docBytes(t, func(l *Lease) { l.Version = "0.0.1" }), Superseded, false},
		{"dead owner, silent server", docBytes(t, nil), Stale, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := leasePath(t)
			writeFile(t, path, tt.raw)
			var calls atomic.Int32
			o := &Observer{
				Path: path, RepositoryID: probeRepo, Executable: ourExe, Version: ourVersion,
				Probe: countingProbe(ProbeResult{Status: ProbeFailed, Reason: "refused"}, &calls),
			}
			obs, err := o.Observe(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if obs.Verdict.Class != tt.class {
				t.Errorf("class = %s (%s), want %s", obs.Verdict.Class, obs.Verdict.Reason, tt.class)
			}
			if got := calls.Load() > 0; got != tt.probe {
				t.Errorf("probed = %t, want %t", got, tt.probe)
			}
			if !obs.Same(Read(path)) {
				t.Error("the observation does not carry what is on disk")
			}
		})
	}
}

func TestObserver_AgeComesFromTheFilesMTime(t *testing.T) {
	path := leasePath(t)
	writeFile(t, path, nil)
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	if obs := observe(t, path); obs.Verdict.Class != Empty {
		t.Errorf("an hour-old empty lease is %s", obs.Verdict.Class)
	}
}

func TestObserver_StopsWhenTheContextEnds(t *testing.T) {
	path := leasePath(t)
	writeFile(t, path, docBytes(t, nil))
	ctx, cancel := context.WithCancel(context.Background())
	o := &Observer{Path: path, Executable: ourExe, Version: ourVersion,
		Probe: func(context.Context, ProbeTarget) ProbeResult {
			cancel()
			return ProbeResult{Status: ProbeFailed, Reason: "cancelled"}
		}}
	if _, err := o.Observe(ctx); err == nil {
		t.Error("Observe returned a verdict after its context ended")
	}
}

// The whole path: a process acquires, binds a server that tells the truth,
// publishes; another observes it live through the real probe.
func TestAcquirePublishObserve_Live(t *testing.T) {
	path := leasePath(t)
	doc := newLease(t)
	doc.RepositoryID = probeRepo
	lf := &LeaseFile{Path: path}
	if err := lf.Acquire(doc); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"name":"majordomus","repository_id":"` + probeRepo + `","instance":"` + doc.Instance + `","leaseholder":true}`))
	}))
	defer srv.Close()

	exe, err := SelfExecutable()
	if err != nil {
		t.Fatal(err)
	}
	o := &Observer{Path: path, RepositoryID: probeRepo, Executable: exe, Version: "1.0.0", Probe: HTTPProbe(time.Second)}
	obs, err := o.Observe(context.Background())
	if err != nil || obs.Verdict.Class != Binding || obs.Owner != OwnerAlive {
		t.Fatalf("before Publish: %+v owner %s (%v), want binding with a live owner", obs.Verdict, obs.Owner, err)
	}
	if err := lf.Publish(srv.URL); err != nil {
		t.Fatal(err)
	}
	obs, err = o.Observe(context.Background())
	if err != nil || obs.Verdict.Class != Live {
		t.Fatalf("after Publish: %+v (%v), want live", obs.Verdict, err)
	}
	if err := lf.Release(); err != nil {
		t.Fatal(err)
	}
	if obs, _ := o.Observe(context.Background()); obs.Verdict.Class != Absent {
		t.Errorf("after Release: %+v, want absent", obs.Verdict)
	}
}
