//go:build unix

package node

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testchild"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
	"github.com/majordomus-mcp/majordomus-mcp/surface"
)

// unreadableStateCases are what only Unix plants where the shared state
// should be: a named pipe (never opened, so never waited on) and a
// symbolic link (never followed).
var unreadableStateCases = []stateCase{
	{name: "a named pipe", plant: func(p string) error { return syscall.Mkfifo(p, 0o600) }, aside: "it is a special file"},
	{name: "a symbolic link", plant: func(p string) error { return os.Symlink(os.DevNull, p) }, aside: "it is a symbolic link"},
}

// A write of the shared state that fails (a full disk; here the file size
// limit, which binds root too; Go ignores its signal, so the write fails)
// costs nothing once space is back: the keeper keeps what is recorded
// meanwhile and writes the whole state again, then appends from then on:
// at a record a second after it last failed, or by itself a second later
// should no record come, or as its term ends. The limit is the whole
// process's: the test runs in a test binary of its own, whose other
// writes (the testing package's log of what tests open, which go test's
// cache reads) it fails as well.
func TestAStateWriteThatFailedIsWrittenAgainOnceItCan(t *testing.T) {
	if testchild.RanAlone(t, "file-size-limit") {
		return
	}
	lease, instance := heldLease(t)
	srv := newServed(t)
	k := keepState(zap.NewNop(), srv, lease, instance, time.Now(), nil)
	t.Cleanup(k.stop)
	tick := steppedClock(k)
	at := time.Now().UTC()
	record := func(i int) {
		srv.surface.Executions.Record(surface.Execution{Tool: "majordomus_list", Peer: "p1", At: at.Add(time.Duration(i))})
	}
	executions := func() int { return len(readState(t, lease).Executions) }
	var was unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &was); err != nil {
		t.Fatal(err)
	}
	full := func(records ...int) { // the file cannot grow while they are recorded
		t.Helper()
		info, err := os.Stat(registry.StatePath(lease))
		if err != nil {
			t.Fatal(err)
		}
		limit := was
		setLimit(&limit.Cur, info.Size())
		if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &limit); err != nil {
			t.Fatal(err)
		}
		for _, i := range records {
			record(i)
		}
		if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &was); err != nil {
			t.Fatal(err)
		}
	}

	record(0)
	full(1, 2, 3, 4, 5)
	if n := executions(); n != 1 {
		t.Fatalf("while the file was full, the state says %d executions", n)
	}
	record(6)
	if n := executions(); n != 1 {
		t.Fatalf("within a second of the last failure, the state was tried again: %d executions", n)
	}
	tick()
	record(7)
	record(8) // appended again
	if st := readState(t, lease); len(st.Executions) != 9 || !st.Executions[8].At.Equal(at.Add(8)) {
		t.Fatalf("once it could be written, the state says %d executions: %+v", len(st.Executions), st.Executions)
	}

	full(9, 10)
	tick()
	for deadline := time.Now().Add(wait); executions() != 11; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("with no record after the failed ones, the state says %d executions", executions())
		}
	}
	full(11)
	k.stop()
	if n := executions(); n != 12 {
		t.Fatalf("a failed record was not written as the term ended: %d executions", n)
	}
}

// setLimit sets an rlimit's field, uint64 on most systems, int64 on BSDs.
func setLimit[T int64 | uint64](field *T, to int64) { *field = T(to) }

// A journal that cannot be written afresh (the sidecar lock held all the
// while: a process stopped as it took the lock) never grows past what a
// reader takes for a state: the records it could not hold wait in memory,
// and the next leaseholder reads the state rather than set it aside with
// the whole history and board. Once the lock is free, the state is written
// whole again.
func TestAJournalThatCannotBeWrittenAfreshStaysWithinItsBound(t *testing.T) {
	lease, instance := heldLease(t)
	srv := newServed(t)
	k := keepState(zap.NewNop(), srv, lease, instance, time.Now(), nil)
	t.Cleanup(k.stop)
	clock := time.Now()
	k.mu.Lock()
	k.now = func() time.Time { return clock } // one failed try, then none within the test
	k.mu.Unlock()
	held, err := os.OpenFile(registry.LockPath(lease), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := unix.Flock(int(held.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC()
	n := 0
	record := func() {
		srv.surface.Executions.Record(surface.Execution{Tool: "majordomus_list", Peer: "p1", At: at.Add(time.Duration(n)), DurationMS: 0.25, OK: true})
		n++
	}
	for {
		record()
		info, err := os.Stat(registry.StatePath(lease))
		if err != nil {
			t.Fatal(err)
		}
		if info.Size() > registry.MaxStateSize {
			t.Fatalf("after %d records, the journal holds %d bytes, past the %d a reader takes for a state", n, info.Size(), registry.MaxStateSize)
		}
		if n > registry.MaxStateSize/100 { // more than its bound's worth of records
			break
		}
	}
	readState(t, lease) // read, not set aside
	if err := unix.Flock(int(held.Fd()), unix.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	k.mu.Lock()
	clock = clock.Add(writeAgainEvery)
	k.mu.Unlock()
	record()
	if st := readState(t, lease); len(st.Executions) != 1000 || !st.Executions[999].At.Equal(at.Add(time.Duration(n-1))) {
		t.Fatalf("once the lock was free, the state holds %d executions, the newest at %v", len(st.Executions), st.Executions[len(st.Executions)-1].At)
	}
}

// The calls a keeper merged (its own client's, answered while no shared
// history kept them) are forgotten once the checkout's state has them,
// even when its first write failed (the sidecar lock held as its term
// began) and a later one wrote them: otherwise they are brought again at
// the next hand-over, and join the history a second time once it has
// moved past them.
func TestCallsMergedAreForgottenOnceALaterWriteHasThem(t *testing.T) {
	lease, instance := heldLease(t)
	srv := newServed(t)
	alone := surface.Execution{Tool: "majordomus_list", Peer: "p1", At: time.Now().UTC(), DurationMS: 0.25, OK: true}
	srv.surface.Executions.RecordOwn(alone) // served alone
	held, err := os.OpenFile(registry.LockPath(lease), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := unix.Flock(int(held.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	k := keepState(zap.NewNop(), srv, lease, instance, time.Now(), nil) // its first write waits for the lock, and fails
	t.Cleanup(k.stop)
	if err := unix.Flock(int(held.Fd()), unix.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	k.mu.Lock()
	clock := time.Now().Add(writeAgainEvery)
	k.now = func() time.Time { return clock }
	k.mu.Unlock()
	srv.surface.Executions.Record(surface.Execution{Tool: "majordomus_get", Peer: "p2", At: time.Now().UTC()}) // the state is written whole
	if st := readState(t, lease); len(st.Executions) != 2 || !st.Executions[0].At.Equal(alone.At) {
		t.Fatalf("the state written: %+v", st.Executions)
	}
	for deadline := time.Now().Add(wait); ; time.Sleep(10 * time.Millisecond) {
		if waiting, _ := srv.surface.Executions.Unshared(); waiting == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the state has the call, which still waits to be brought again: %s", waiting)
		}
	}
}

// A state that fits the file size limit where one record more does not
// (the history full, so that writing it whole drops as much as a record
// adds) fails at every record, and is written whole again at each: the
// failure is said once, not once a record, and the state is written again
// no more than once a writeAgainEvery; once the limit is raised, the state
// is written whole and then appended to again.
func TestAStateThatFitsWhereARecordMoreDoesNotIsSaidFailingOnce(t *testing.T) {
	if testchild.RanAlone(t, "file-size-limit-band") {
		return
	}
	lease, instance := heldLease(t)
	srv := newServed(t)
	tap := newLogTap()
	k := keepState(zap.New(tap), srv, lease, instance, time.Now(), nil)
	t.Cleanup(k.stop)
	tick := steppedClock(k)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	record := func(i int) { // every record and every state the same length
		srv.surface.Executions.Record(surface.Execution{Tool: "majordomus_list", Peer: "p1", At: at.Add(time.Duration(i) * time.Second)})
	}
	n := 0
	for ; n < 1000; n++ {
		record(n)
	}
	k.mu.Lock()
	k.writeAfresh() // the whole state, 1000 executions
	k.mu.Unlock()
	info, err := os.Stat(registry.StatePath(lease))
	if err != nil {
		t.Fatal(err)
	}
	var was unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &was); err != nil {
		t.Fatal(err)
	}
	limit := was
	setLimit(&limit.Cur, info.Size()+20) // less than a record more
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &limit); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		record(n)
		n++
	}
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &was); err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, line := range tap.lines() {
		if strings.Contains(line, "writing the checkout's shared state failed;") {
			failed++
		}
	}
	if failed != 1 {
		t.Errorf("10 records that could not be appended said the state failed %d times:\n%s", failed, strings.Join(tap.lines(), "\n"))
	}
	tick()
	record(n)
	record(n + 1)
	if st := readState(t, lease); len(st.Executions) != 1000 || !st.Executions[999].At.Equal(at.Add(time.Duration(n+1)*time.Second)) {
		t.Fatalf("once the limit was raised, the state holds %d executions, the newest at %v", len(st.Executions), st.Executions[len(st.Executions)-1].At)
	}
}

// A state written again after a failure, which then fails anew for good
// (the disk full again: neither a record more nor the whole state can be
// written), is said failing again: the log's last word on it is not "is
// written again" while nothing is written for the rest of the term.
func TestAStateWrittenAgainThatFailsAnewIsSaidFailingAgain(t *testing.T) {
	if testchild.RanAlone(t, "file-size-limit-anew") {
		return
	}
	lease, instance := heldLease(t)
	srv := newServed(t)
	tap := newLogTap()
	k := keepState(zap.New(tap), srv, lease, instance, time.Now(), nil)
	t.Cleanup(k.stop)
	tick := steppedClock(k)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	n := 0
	record := func() {
		srv.surface.Executions.Record(surface.Execution{Tool: "majordomus_list", Peer: "p1", At: at.Add(time.Duration(n) * time.Second)})
		n++
	}
	var was unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &was); err != nil {
		t.Fatal(err)
	}
	limitTo := func(size int64) {
		limit := was
		setLimit(&limit.Cur, size)
		if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &limit); err != nil {
			t.Fatal(err)
		}
	}
	unlimit := func() {
		if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &was); err != nil {
			t.Fatal(err)
		}
	}
	record()
	info, err := os.Stat(registry.StatePath(lease))
	if err != nil {
		t.Fatal(err)
	}
	limitTo(info.Size()) // the disk full: nothing more is written
	record()
	unlimit() // space is back
	tick()
	record()    // written again
	limitTo(16) // full again, for good
	for range 5 {
		record()
		tick()
	}
	unlimit()
	var failed, again int
	for _, line := range tap.lines() {
		switch {
		case strings.Contains(line, "writing the checkout's shared state failed;"):
			failed++
		case strings.Contains(line, "is written again, with everything recorded meanwhile"):
			again++
		}
	}
	if again != 1 || failed != 2 {
		t.Errorf("a state that failed, was written again (said %d times) and failed anew for good said the failure %d times, want twice:\n%s",
			again, failed, strings.Join(tap.lines(), "\n"))
	}
}

// steppedClock gives k a clock that stands still until the step returned
// moves it on by writeAgainEvery, under k.mu, where the keeper reads it.
func steppedClock(k *keeper) (step func()) {
	clock := time.Now()
	k.mu.Lock()
	k.now = func() time.Time { return clock }
	k.mu.Unlock()
	return func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		clock = clock.Add(writeAgainEvery)
	}
}
