//go:build unix

package node

import (
	"os"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

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
// costs nothing once space is back: the
// keeper keeps what is recorded meanwhile and, at a record a second after
// it last failed, writes the whole state again, and appends from then on.
func TestAStateWriteThatFailedIsWrittenAgainOnceItCan(t *testing.T) {
	lease, instance := heldLease(t)
	srv := newServed(t)
	k := keepState(zap.NewNop(), srv, lease, instance, time.Now())
	t.Cleanup(k.stop)
	clock := time.Now()
	k.mu.Lock()
	k.now = func() time.Time { return clock }
	k.mu.Unlock()
	at := time.Now().UTC()
	record := func(i int) {
		srv.surface.Executions.Record(surface.Execution{Tool: "majordomus_list", Peer: "p1", At: at.Add(time.Duration(i))})
	}
	record(0)
	info, err := os.Stat(registry.StatePath(lease))
	if err != nil {
		t.Fatal(err)
	}
	var was unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &was); err != nil {
		t.Fatal(err)
	}
	full := was
	full.Cur = uint64(info.Size())
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &full); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 5; i++ {
		record(i) // the file is full
	}
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &was); err != nil {
		t.Fatal(err)
	}
	if st := readState(t, lease); len(st.Executions) != 1 {
		t.Fatalf("while the file was full, the state says %d executions", len(st.Executions))
	}
	record(6)
	if st := readState(t, lease); len(st.Executions) != 1 {
		t.Fatalf("within a second of the last failure, the state was tried again: %d executions", len(st.Executions))
	}
	clock = clock.Add(writeAgainEvery)
	record(7)
	record(8) // appended again
	if st := readState(t, lease); len(st.Executions) != 9 || !st.Executions[8].At.Equal(at.Add(8)) {
		t.Fatalf("once it could be written, the state says %d executions: %+v", len(st.Executions), st.Executions)
	}
}
