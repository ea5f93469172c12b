package registry

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// A lease's owner holds it locked for its term: the one fact a process in
// other namespaces (a container's, or the host's beside it) can see of it,
// where its pid is another process or none and its loopback out of reach.
// Such a judge leaves the lease alone while it is held, binding or bound,
// and takes it over once no process holds it (its owner killed, the file
// left); a judge in the owner's namespaces asks its pid, as before. The
// lock is on a byte past the lease's end, so no reader is ever kept out.
func TestAnOwnerInOtherNamespacesIsJudgedByTheLockItHolds(t *testing.T) {
	path := leasePath(t)
	doc := newLease(t)
	doc.Namespaces = "pid:[1] net:[2]"
	lf := &LeaseFile{Path: path}
	if err := lf.Acquire(doc); err != nil {
		t.Fatal(err)
	}
	elsewhere := &Observer{Path: path, Namespaces: "pid:[3] net:[4]"}
	judged := func(o *Observer, want Class, reason string) Observation {
		t.Helper()
		obs, err := o.Observe(context.Background())
		if err != nil || obs.Verdict.Class != want || !strings.Contains(obs.Verdict.Reason, reason) {
			t.Fatalf("judged %+v (%v), want %s saying %q", obs.Verdict, err, want, reason)
		}
		return obs
	}
	judged(elsewhere, Binding, "pid "+strconv.Itoa(doc.PID)+" in pid:[1] net:[2]")
	if err := lf.Publish("http://127.0.0.1:1"); err != nil {
		t.Fatal(err)
	}
	judged(elsewhere, Unusable, "runs in another network namespace than this process")
	// Sharing its network, a judge finds the server silent (none listens
	// there) and its owner alive by the lock, not by the pid: busy.
	judged(&Observer{Path: path, Namespaces: "pid:[3] net:[2]"}, Busy, "its owner (pid "+strconv.Itoa(doc.PID)+" in pid:[1] net:[2]) is alive")
	judged(&Observer{Path: path, Namespaces: doc.Namespaces}, Busy, "its owner (pid "+strconv.Itoa(doc.PID)+") is alive")

	if raw, err := os.ReadFile(path); err != nil || len(raw) == 0 {
		t.Fatalf("a held lease read %q, %v", raw, err)
	}

	lf.Forget() // as a kill leaves it: the file in place, held by nobody
	obs := judged(elsewhere, Stale, "is gone")
	if removed, err := lf.TakeOver(obs); err != nil || !removed {
		t.Fatalf("TakeOver = %t, %v", removed, err)
	}
	judged(elsewhere, Absent, "")
}

// A checkout moved away while it was served (mv x y) and copied back to
// its old path (cp -a y x) brings its lease there too: it names the old
// path, which is this one, but a directory that is not this one (its
// root_dir, which the mv kept for the moved one), and nobody holds the
// copy. It is a copy's, taken over where it arrives, not a live lease of
// this checkout: its server serves the moved checkout's layer, and would
// serve it to every client of the copy. The moved checkout, judged where
// it is now, still shares its server. Only the lock tells a copy from
// the lease its owner holds (Linux).
func TestObserver_ALeaseCopiedBackToItsOldPathIsACopys(t *testing.T) {
	parent := testtemp.Dir(t)
	old, moved := filepath.Join(parent, "x"), filepath.Join(parent, "y")
	if err := os.MkdirAll(filepath.Join(old, ".ai"), 0o755); err != nil {
		t.Fatal(err)
	}
	doc := newLease(t)
	doc.Root, doc.RootDir = old, DirectoryID(old)
	lf := &LeaseFile{Path: Path(old, "")}
	if err := lf.Acquire(doc); err != nil {
		t.Fatal(err)
	}
	if err := lf.Publish("http://127.0.0.1:8741"); err != nil {
		t.Fatal(err)
	}
	defer lf.Forget()
	if err := os.Rename(old, moved); err != nil { // mv x y
		t.Fatal(err)
	}
	raw, err := os.ReadFile(Path(moved, "")) // cp -a y x
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, Path(old, ""), raw)

	exe, err := SelfExecutable()
	if err != nil {
		t.Fatal(err)
	}
	judge := func(root string) Observation {
		o := &Observer{Path: Path(root, ""), Root: root, Executable: exe, Version: "1.0.0",
			Probe: countingProbe(ProbeResult{Status: ProbeOK}, new(atomic.Int32))}
		obs, err := o.Observe(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return obs
	}
	if obs := judge(old); obs.Verdict.Class != Stale {
		t.Errorf("the copy at the old path: %s (%s), want stale", obs.Verdict.Class, obs.Verdict.Reason)
	}
	if obs := judge(moved); obs.Verdict.Class != Live {
		t.Errorf("the moved checkout: %s (%s), want live", obs.Verdict.Class, obs.Verdict.Reason)
	}
}
