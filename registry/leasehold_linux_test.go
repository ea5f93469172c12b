package registry

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
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
