package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
	"github.com/majordomus-mcp/majordomus-mcp/surface"
)

// journalOf is a journal of n executions and one departed announcer, and
// of a final record cut short when torn.
func journalOf(n int, torn bool) []byte {
	var b bytes.Buffer
	b.WriteString(`{"schema":"majordomus-mcp-state/v1"}` + "\n")
	at := time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)
	for i := range n {
		fmt.Fprintf(&b, `{"execution":{"tool":"majordomus_list","peer":"p%d","at":%q,"duration_ms":0.25,"ok":true}}`+"\n",
			i%7+1, at.Add(time.Duration(i)*time.Millisecond).Format(time.RFC3339Nano))
	}
	b.WriteString(`{"peer":{"id":"p3","client":{"name":"gemini-cli"},"transport":"http","connected_at":"2026-07-01T08:00:00Z","last_seen":"2026-07-01T08:30:00Z","attached":false,"announcement":{"intent":"the docs","scope":["doc"],"at":"2026-07-01T08:10:00Z"}}}` + "\n")
	if torn {
		b.WriteString(`{"execution":{"tool":"majordomus_g`)
	}
	return b.Bytes()
}

// What is read at the state path is used, or set aside saying why; it is
// never read past its bound, and nothing there blocks the read. Each case
// is planted for real and read as a new leaseholder reads it, but for
// what no test can plant without another user (a file of another user:
// the case says what the read gives).
func TestWhatCannotBeReadAsTheSharedStateIsSetAside(t *testing.T) {
	cases := []stateCase{
		{name: "nothing", plant: func(string) error { return nil }},
		{name: "a valid one", plant: write(journalOf(5, false)), executions: 5, peers: 1},
		{name: "cut short in its last record", plant: write(journalOf(5, true)), executions: 5, peers: 1, torn: true},
		{name: "a full one, and more", plant: write(journalOf(1500, false)), executions: 1000, peers: 1},
		{name: "garbage", plant: write([]byte("\x00\x01 not a journal\n")), aside: "its first line is not a header naming a schema"},
		{name: "empty", plant: write(nil), aside: "it is empty"},
		{name: "garbage, its end cut short", plant: write([]byte("\x00\x01 not a journal\n\xff\xfe")), aside: "its first line is not a header naming a schema"},
		{name: "cut short in its header", plant: write([]byte(`{"schema":"majordomus-mcp-st`)), aside: "its header is cut short"},
		{name: "a bad record mid-file", plant: write(append(journalOf(2, false), "{not json}\n"+`{"execution":{}}`+"\n"...)), aside: "line 5 is not a record"},
		{name: "another schema", plant: write([]byte(`{"schema":"majordomus-mcp-state/v2"}` + "\n")), aside: `it is of another schema ("majordomus-mcp-state/v2"`},
		{name: "oversized", plant: write(bytes.Repeat([]byte("x"), registry.MaxStateSize+10)), aside: "it is larger than"},
		{name: "a directory", plant: func(p string) error { return os.Mkdir(p, 0o700) }, aside: "it is a directory"},
		{name: "a file of another user", read: &registry.StateFile{Found: registry.Regular, Raw: journalOf(1, false), Foreign: "server.json.state belongs to another user (uid 65534; this process runs as uid 1000)"},
			aside: "belongs to another user"},
		{name: "unreadable", read: &registry.StateFile{Found: registry.Unreadable, Err: os.ErrPermission}, aside: "it cannot be read: permission denied"},
	}
	cases = append(cases, unreadableStateCases...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := registry.StateFile{}
			if c.read != nil {
				f = *c.read
			} else {
				lease, _ := heldLease(t) // in a lease directory, private as one is
				if err := c.plant(registry.StatePath(lease)); err != nil {
					t.Fatal(err)
				}
				f = registry.ReadState(lease)
				if len(f.Raw) > registry.MaxStateSize {
					t.Fatalf("read %d bytes, past the bound", len(f.Raw))
				}
			}
			st, aside, torn := judgeState(f)
			if !strings.Contains(aside, c.aside) || (c.aside == "") != (aside == "") {
				t.Fatalf("set aside for %q, want %q", aside, c.aside)
			}
			if len(st.Executions) != c.executions || len(st.Peers) != c.peers || torn != c.torn {
				t.Fatalf("gave %d executions, %d announcers, torn %v", len(st.Executions), len(st.Peers), torn)
			}
			if c.executions == 1000 && st.Executions[999].At != time.Date(2026, 7, 1, 9, 0, 1, 499_000_000, time.UTC) {
				t.Fatalf("not the last 1,000 kept: the newest is %v", st.Executions[999].At)
			}
		})
	}
}

// stateCase is what is planted at the state path, or what its read gives
// instead (for what no test can plant), and what a leaseholder makes of
// it: the reason it is set aside ("" for a state used), the executions
// and announcers it gives, and whether a record was cut short.
type stateCase struct {
	name              string
	plant             func(path string) error
	read              *registry.StateFile
	aside             string
	executions, peers int
	torn              bool
}

// write plants raw.
func write(raw []byte) func(path string) error {
	return func(p string) error { return os.WriteFile(p, raw, 0o600) }
}

// A keeper loads what the server before left, writes it back merged, and
// appends every change; once the lease is lost it writes nothing more.
func TestAKeeperKeepsTheStateUntilTheLeaseIsLost(t *testing.T) {
	lease, instance := heldLease(t)
	if err := os.WriteFile(registry.StatePath(lease), journalOf(3, true), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := newServed(t)
	k := keepState(zap.NewNop(), srv, lease, instance, time.Now(), nil)
	srv.surface.Executions.Record(surface.Execution{Tool: "majordomus_get", Peer: "p9", At: time.Now().UTC()})
	st := readState(t, lease)
	if len(st.Executions) != 4 || st.Executions[3].Tool != "majordomus_get" || len(st.Peers) != 1 || st.Peers[0].ID != "p3" {
		t.Fatalf("the state kept: %+v", st)
	}
	k.stop()
	srv.surface.Executions.Record(surface.Execution{Tool: "majordomus_search", Peer: "p9", At: time.Now().UTC()})
	if st := readState(t, lease); len(st.Executions) != 4 {
		t.Fatalf("a call after the lease was lost was kept: %+v", st.Executions)
	}
}

// The journal is written afresh once it grew by its bound: it stays
// bounded, and what it says is the same.
func TestTheJournalIsWrittenAfreshWithinItsBound(t *testing.T) {
	lease, instance := heldLease(t)
	srv := newServed(t)
	k := keepState(zap.NewNop(), srv, lease, instance, time.Now(), nil)
	t.Cleanup(func() { k.stop() }) // its journal closed: Windows removes no open file
	at := time.Now().UTC()
	for i := range 2*compactAfterRecords + 10 {
		srv.surface.Executions.Record(surface.Execution{Tool: "majordomus_list", Peer: "p1", At: at.Add(time.Duration(i))})
	}
	raw, err := os.ReadFile(registry.StatePath(lease))
	if err != nil {
		t.Fatal(err)
	}
	if lines := bytes.Count(raw, []byte("\n")); lines > 1000+compactAfterRecords+1 {
		t.Fatalf("the journal holds %d lines", lines)
	}
	st := readState(t, lease)
	if len(st.Executions) != 1000 || !st.Executions[999].At.Equal(at.Add(time.Duration(2*compactAfterRecords+9))) {
		t.Fatalf("the journal holds %d executions, the newest at %v", len(st.Executions), st.Executions[len(st.Executions)-1].At)
	}
}

// heldLease is a lease this test holds, in a lease directory of its own.
func heldLease(t testing.TB) (path, instance string) {
	t.Helper()
	path = filepath.Join(testtemp.Dir(t), "server.json")
	self, err := registry.Self()
	if err != nil {
		t.Fatal(err)
	}
	doc := registry.NewLease(self, "/checkout", strings.Repeat("0", 32), "default", "0.1.0", time.Now())
	lf := &registry.LeaseFile{Path: path}
	if err := lf.Acquire(doc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lf.Release() })
	return path, doc.Instance
}

func readState(t testing.TB, lease string) surface.State {
	t.Helper()
	st, aside, _ := judgeState(registry.ReadState(lease))
	if aside != "" {
		t.Fatalf("the state written cannot be read back: %s", aside)
	}
	return st
}

// newServed is the layer and surface of the example checkout.
func newServed(t testing.TB) *served {
	t.Helper()
	co := exampleCheckout(t)
	life, end := context.WithCancel(context.Background())
	t.Cleanup(func() { end(); co.unwatched() }) // before the checkout goes: Windows removes no watched directory
	srv, err := co.load(life, func() surface.Process { return surface.Process{Role: "leaseholder"} }, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// BenchmarkAppendingAnExecution is the cost a tool call adds while the
// state is kept: one record, one write.
func BenchmarkAppendingAnExecution(b *testing.B) {
	lease, instance := heldLease(b)
	srv := newServed(b)
	keepState(zap.NewNop(), srv, lease, instance, time.Now(), nil)
	at := time.Now().UTC()
	b.ResetTimer()
	for i := range b.N {
		srv.surface.Executions.Record(surface.Execution{Tool: "majordomus_list", Peer: "p1", At: at.Add(time.Duration(i)), DurationMS: 0.1, OK: true})
	}
}

// BenchmarkLoadingAFullState is what a new leaseholder spends before it
// serves: reading and judging a full journal (1,000 executions, and as
// many records again not yet written afresh), merging it into its surface
// and writing it back.
func BenchmarkLoadingAFullState(b *testing.B) {
	lease, instance := heldLease(b)
	raw := journalOf(1000+compactAfterRecords-1, false)
	b.ReportMetric(float64(len(raw)), "journal-bytes")
	for b.Loop() {
		b.StopTimer()
		if err := os.WriteFile(registry.StatePath(lease), raw, 0o600); err != nil {
			b.Fatal(err)
		}
		srv := newServed(b)
		b.StartTimer()
		keepState(zap.NewNop(), srv, lease, instance, time.Now(), nil).stop()
	}
}

// Calls recorded while a keeper writes the state it merged neither wait
// for it forever nor hold it up: the surface gives the keeper each call
// with the history's lock held, so the keeper forgets the calls it wrote
// only once it no longer holds its own.
func TestCallsRecordedAsTheStateIsWrittenNeverWaitForever(t *testing.T) {
	for range 20 {
		lease, instance := heldLease(t)
		srv := newServed(t)
		srv.surface.Executions.RecordOwn(surface.Execution{Tool: "majordomus_list", Peer: "p1", At: time.Now().UTC()}) // served alone
		stop, calling := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(calling)
			for {
				select {
				case <-stop:
					return
				default:
					srv.surface.Executions.Record(surface.Execution{Tool: "majordomus_get", Peer: "p2", At: time.Now().UTC()})
				}
			}
		}()
		kept := make(chan *keeper)
		go func() { kept <- keepState(zap.NewNop(), srv, lease, instance, time.Now(), nil) }()
		select {
		case k := <-kept:
			close(stop)
			<-calling
			k.stop()
		case <-time.After(10 * time.Second):
			t.Fatal("keeping the state and recording a call wait for each other")
		}
		if waiting, _ := srv.surface.Executions.Unshared(); waiting != nil {
			t.Fatalf("the written call still waits: %s", waiting)
		}
	}
}

// A keeper begun once its lease was released (its client left as the
// server started) writes nothing and warns of nothing: the state is no
// longer its to write. (It warned that writing the state failed.)
func TestAKeeperBegunAfterItsLeaseWentWarnsOfNothing(t *testing.T) {
	lease, instance := heldLease(t)
	if err := os.Remove(lease); err != nil { // released meanwhile
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.InfoLevel)
	k := keepState(zap.New(core), newServed(t), lease, instance, time.Now(), nil)
	defer k.stop()
	if warned := logs.FilterLevelExact(zapcore.WarnLevel).All(); len(warned) != 0 {
		t.Fatalf("warned %v", warned)
	}
	if _, err := os.Lstat(registry.StatePath(lease)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a state was written beside a lease that is not the keeper's: %v", err)
	}
}

// An own client's call recorded once the lease is no longer the term's (a
// server continued after a freeze, its watch not read yet) is in no
// history the checkout reads: it waits to go with the client, as a call
// made while nothing kept it. Another client's is its server's to carry.
func TestAnOwnCallRecordedOnceTheLeaseWasLostWaitsToJoin(t *testing.T) {
	lease, instance := heldLease(t)
	srv := newServed(t)
	var lost atomic.Bool
	k := keepState(zap.NewNop(), srv, lease, instance, time.Now(), func() bool { return !lost.Load() })
	t.Cleanup(func() { k.stop() })
	at := time.Now().UTC()
	srv.surface.Executions.RecordOwn(surface.Execution{Tool: "majordomus_get", Peer: "p1", At: at})
	lost.Store(true)
	srv.surface.Executions.RecordOwn(surface.Execution{Tool: "majordomus_search", Peer: "p1", At: at.Add(1)})
	srv.surface.Executions.Record(surface.Execution{Tool: "majordomus_list", Peer: "p2", At: at.Add(2)})
	raw, _ := srv.surface.Executions.Unshared()
	if s := string(raw); !strings.Contains(s, "majordomus_search") || strings.Contains(s, "majordomus_get") || strings.Contains(s, "majordomus_list") {
		t.Fatalf("the calls waiting to join: %s", raw)
	}
}
