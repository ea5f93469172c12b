package registry

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
	"github.com/majordomus-mcp/majordomus-mcp/registry/proc"
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

// A server killed as it is probed refuses the probe, its owner having read
// as alive just before: the owner is asked again once the probe failed,
// and the lease is stale, taken over at once, not busy (waited for a
// binding poll, 100 ms, or more).
func TestObserver_AnOwnerThatDiedAsItWasProbedIsGone(t *testing.T) {
	path := leasePath(t)
	writeFile(t, path, docBytes(t, nil))
	var probed atomic.Bool
	o := &Observer{
		Path: path, Executable: ourExe, Version: ourVersion,
		Probe: func(context.Context, ProbeTarget) ProbeResult {
			probed.Store(true)
			return ProbeResult{Status: ProbeFailed, Reason: "connection refused"}
		},
		Env: proc.Env{
			BootID: func() (string, error) { return "boot", nil },
			Signal0: func(int) error {
				if probed.Load() {
					return syscall.ESRCH
				}
				return nil
			},
			ProcessStart: func(int) (uint64, error) { return 12345, nil },
		},
	}
	obs, err := o.Observe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if obs.Verdict.Class != Stale || obs.Owner != proc.OwnerGone {
		t.Fatalf("verdict %+v, owner %s; want stale, its owner gone", obs.Verdict, obs.Owner)
	}
}

// A server whose owner has begun to exit is not probed: its listener may
// take the probe's connection and hold it until the system closes it, tens
// of milliseconds on (a process killed -9 releases its inotify instances
// first). Its lease is stale at once. Another process exiting under the
// owner's pid, or an owner in other namespaces, makes no claim: the probe
// is made as before.
func TestObserver_AServerWhoseOwnerIsExitingIsNotProbed(t *testing.T) {
	for _, tt := range []struct {
		name       string
		exiting    uint64 // the start of the process exiting under the lease's pid
		namespaces string
		probed     bool
	}{
		{"its owner exiting", 12345, "", false},
		{"another process exiting under its pid", 999, "", true},
		{"its owner in other namespaces", 12345, "pid:[1] net:[2]", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := leasePath(t)
			writeFile(t, path, docBytes(t, func(l *Lease) { l.Namespaces = tt.namespaces }))
			var calls atomic.Int32
			o := &Observer{
				Path: path, Executable: ourExe, Version: ourVersion, Namespaces: "pid:[3] net:[2]",
				Probe: countingProbe(ProbeResult{Status: ProbeFailed, Reason: "refused"}, &calls),
				Env: proc.Env{
					BootID:       func() (string, error) { return "boot", nil },
					Signal0:      func(int) error { return nil },
					ProcessStart: func(int) (uint64, error) { return tt.exiting, proc.ErrProcessEnded },
				},
			}
			obs, err := o.Observe(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got := calls.Load() > 0; got != tt.probed || !tt.probed && obs.Verdict.Class != Stale {
				t.Fatalf("probed %t, verdict %+v; want probed %t", got, obs.Verdict, tt.probed)
			}
			if !tt.probed && !strings.Contains(obs.Verdict.Reason, "not probed: its owner has begun to exit") {
				t.Errorf("the verdict does not say why its server was not probed: %s", obs.Verdict.Reason)
			}
		})
	}
}

// A silent server whose owner is alive stays busy however long it is
// observed: the busy grace is the machine's to measure. A busy lease is
// taken over only while it is still the one judged busy.
func TestObserver_BusyStaysBusyAndIsTakenOverOnlyAsJudged(t *testing.T) {
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
		Path: path, Executable: ourExe, Version: ourVersion,
		Probe: countingProbe(ProbeResult{Status: ProbeFailed, Reason: "connection refused"}, &calls),
		Env:   proc.Env{Now: clock.Now},
	}
	expect := func(want Class) Observation {
		t.Helper()
		obs, err := o.Observe(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if obs.Verdict.Class != want || obs.Owner != proc.OwnerAlive {
			t.Fatalf("verdict %+v, owner %s; want %s with a live owner", obs.Verdict, obs.Owner, want)
		}
		return obs
	}
	judged := expect(Busy)
	clock.Advance(time.Hour)
	expect(Busy)
	if calls.Load() != 2 {
		t.Errorf("probed %d times, want 2", calls.Load())
	}

	// Another busy lease written since: the judged one is not removed.
	writeFile(t, path, silent("http://127.0.0.1:2"))
	lf := &LeaseFile{Path: path}
	if removed, err := lf.TakeOver(judged); err != nil || removed {
		t.Fatalf("TakeOver of a busy lease replaced since = %t, %v; want nothing removed", removed, err)
	}
	removed, err := lf.TakeOver(expect(Busy))
	if err != nil || !removed {
		t.Fatalf("TakeOver of the busy lease as judged = %t, %v", removed, err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the busy lease is still there: %v", err)
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
		{"empty and new", nil, Empty, false},
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
				Path: path, Executable: ourExe, Version: ourVersion,
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

// A lease whose root is another directory here than this checkout's came
// with a copy of its checkout (cp -a, rsync -a): its server is not asked,
// as it would prove the secret it was copied with, and the lease is judged
// as one whose server does not answer (its owner, here, gone: stale).
// Another name for this checkout's root is this checkout's; a root that is
// not here (this checkout seen from another mount, or moved) and no root
// make no claim: the probe tells.
func TestObserver_ALeaseOfAnotherCheckoutIsNotProbed(t *testing.T) {
	ours, other := testtemp.Dir(t), testtemp.Dir(t)
	tests := []struct {
		name, root string
		class      Class
	}{
		{"another checkout's", other, Stale},
		{"a root that is not here", filepath.Join(other, "moved"), Live},
		{"this checkout's", ours, Live},
		{"this checkout's by another name", ours + string(filepath.Separator) + ".", Live},
		{"no root", "", Live},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := leasePath(t)
			writeFile(t, path, docBytes(t, func(l *Lease) { l.Root = tt.root }))
			var calls atomic.Int32
			o := &Observer{Path: path, Root: ours, Executable: ourExe, Version: ourVersion, Probe: countingProbe(ProbeResult{Status: ProbeOK}, &calls)}
			obs, err := o.Observe(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if obs.Verdict.Class != tt.class || (calls.Load() > 0) != (tt.class == Live) {
				t.Errorf("%s after %d probes (%s), want %s", obs.Verdict.Class, calls.Load(), obs.Verdict.Reason, tt.class)
			}
		})
	}
}

// A copy of a live server's lease (cp -a while it ran) is not waited for
// as a busy one where the lock tells: its owner holds the file it wrote,
// and nobody this one. A copy that somebody holds (cp -al: the same file
// as the lease still at its root) is waited for. A lease written in this
// very directory (its id), whose root path names another since, came here
// with its checkout, moved, and is probed as this checkout's: not one of
// another directory's, however held (a hard-linked copy of a moved
// checkout's, or an .ai linked to another checkout's), nor one that names
// no directory (an older release's), nor, where the lock tells, one that
// nobody holds (an id given again).
func TestObserver_ACopiedLeaseOfALiveServerIsNotWaitedFor(t *testing.T) {
	self, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		held     bool
		linkAt   string // where a second name of the lease file is made: "root" (its root's lease path), "aside"
		linkedAI bool   // this checkout's .ai a link to another directory's
		dir      string // the directory whose id the lease names: "ours", "other", "" (none)
		want     Class  // where the lock tells (Linux); elsewhere an unheld copy is busy too
	}{
		{name: "copied", dir: "other", want: Stale},
		{name: "hard-linked", held: true, linkAt: "root", dir: "other", want: Busy},
		{name: "moved", held: true, dir: "ours", want: Live},
		{name: "moved, unheld", dir: "ours", want: Stale},
		{name: "hard-linked and moved", held: true, linkAt: "aside", dir: "other", want: Busy},
		{name: "through a linked .ai", held: true, linkedAI: true, dir: "other", want: Busy},
		{name: "of an older release", held: true, want: Busy},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ours, other := checkoutRoot(t), testtemp.Dir(t)
			if tt.linkedAI {
				shared := checkoutRoot(t)
				if err := os.Remove(filepath.Join(ours, ".ai")); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(filepath.Join(shared, ".ai"), filepath.Join(ours, ".ai")); err != nil {
					t.Fatal(err)
				}
			}
			path := Path(ours, "")
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			dirs := map[string]string{"ours": DirectoryID(ours), "other": DirectoryID(other)}
			writeFile(t, path, docBytes(t, func(l *Lease) {
				l.Root, l.PID, l.ProcessStart, l.BootID = other, self.PID, self.Start, self.BootID // alive: this process
				l.RootDir = dirs[tt.dir]
			}))
			if tt.held {
				release, err := osFS{}.Hold(path)
				if err != nil {
					t.Fatal(err)
				}
				defer release()
			}
			second := map[string]string{"root": Path(other, ""), "aside": filepath.Join(testtemp.Dir(t), "server.json")}[tt.linkAt]
			if second != "" {
				if err := os.MkdirAll(filepath.Dir(second), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.Link(path, second); err != nil {
					t.Fatal(err)
				}
			}
			want := tt.want
			if want == Stale && runtime.GOOS != "linux" { // where the lock does not tell
				want = map[bool]Class{false: Busy, true: Live}[tt.dir == "ours"]
			}
			o := &Observer{Path: path, Root: ours, Executable: ourExe, Version: ourVersion, Probe: countingProbe(ProbeResult{Status: ProbeOK}, new(atomic.Int32))}
			obs, err := o.Observe(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if obs.Verdict.Class != want {
				t.Errorf("%s (%s), want %s", obs.Verdict.Class, obs.Verdict.Reason, want)
			}
		})
	}
}

// A lease without a URL is aged from its owner's started_at, never from
// the file's mtime: touching the file re-arms no wait, and an empty file is
// taken over however new it is.
func TestObserver_AgeComesFromStartedAtNeverTheMTime(t *testing.T) {
	self, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	unbound := func(startedAt time.Time) []byte {
		return docBytes(t, func(l *Lease) {
			l.URL, l.StartedAt = nil, startedAt.UTC().Format(startedAtLayout)
			l.PID, l.ProcessStart, l.BootID = self.PID, self.Start, self.BootID // alive: this process
		})
	}
	for _, tc := range []struct {
		name  string
		raw   []byte
		mtime time.Time
		class Class
	}{
		{"empty, just written", nil, now, Empty},
		{"whitespace, just written", []byte(" \n"), now, Empty},
		{"started an hour ago, just touched", unbound(now.Add(-time.Hour)), now, Abandoned},
		{"started just now, the file an hour old", unbound(now), now.Add(-time.Hour), Binding},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := leasePath(t)
			writeFile(t, path, tc.raw)
			if err := os.Chtimes(path, tc.mtime, tc.mtime); err != nil {
				t.Fatal(err)
			}
			if obs := observe(t, path); obs.Verdict.Class != tc.class {
				t.Errorf("class = %s (%s), want %s", obs.Verdict.Class, obs.Verdict.Reason, tc.class)
			}
		})
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
		proof := secret.Proof(doc.Secret, r.URL.Query().Get("challenge"), true)
		_, _ = w.Write([]byte(`{"name":"majordomus","repository_id":"` + probeRepo + `","instance":"` + doc.Instance + `","leaseholder":true,"proof":"` + proof + `"}`))
	}))
	defer srv.Close()

	exe, err := SelfExecutable()
	if err != nil {
		t.Fatal(err)
	}
	o := &Observer{Path: path, Executable: exe, Version: "1.0.0", Probe: HTTPProbe(time.Second)}
	obs, err := o.Observe(context.Background())
	if err != nil || obs.Verdict.Class != Binding || obs.Owner != proc.OwnerAlive {
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
