package node

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
	"github.com/majordomus-mcp/majordomus-mcp/layer"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
	"github.com/majordomus-mcp/majordomus-mcp/surface"
	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
)

var statusTimes = Timings{ElectionBound: wait, BusyGrace: 4 * time.Second, ProbeTimeout: 3 * time.Second, BindGrace: time.Second, IdleTimeout: 2 * time.Minute, Heartbeat: time.Minute}

// Without a lease, status says so and names where the lease would be.
func TestStatusWithoutALease(t *testing.T) {
	co := exampleCheckout(t)
	report, err := Status(context.Background(), co, statusTimes)
	if err != nil {
		t.Fatal(err)
	}
	if report.Class != string(registry.Absent) || report.Lease != nil || report.Connect != nil || string(report.Server) != "null" {
		t.Errorf("status = %+v; want an absent lease and nothing else", report)
	}
	if report.LeasePath != registry.Path(co.Root, "default") || report.Profile != "default" || report.Checkout == "" {
		t.Errorf("status names %q, %q, %q", report.Checkout, report.Profile, report.LeasePath)
	}
	if _, err := os.Stat(report.LeasePath); !os.IsNotExist(err) {
		t.Errorf("status created the lease (%v): it must change nothing", err)
	}
}

// A live leaseholder's lease is judged live, its server's identity read,
// and a direct client told its endpoint and the header that lets it in;
// the lease's secret itself is not shown.
func TestStatusOfALiveServer(t *testing.T) {
	co := exampleCheckout(t)
	serveOnTheLeaseFile(t, co)
	report, err := Status(context.Background(), co.fresh(), statusTimes)
	if err != nil {
		t.Fatal(err)
	}
	lease, err := registry.Decode(registry.Read(report.LeasePath).Raw)
	if err != nil {
		t.Fatal(err)
	}
	if report.Class != string(registry.Live) {
		t.Fatalf("status = %+v; want the lease live", report)
	}
	want := Connection{URL: lease.URLString() + "/mcp", Header: "Authorization: " + secret.Authorization(lease.Secret)}
	if report.Connect == nil || *report.Connect != want {
		t.Errorf("connect = %+v; want %+v", report.Connect, want)
	}
	if report.Lease == nil || report.Lease.Secret != "(not shown)" || report.Lease.Instance != lease.Instance {
		t.Errorf("the lease reported is %+v", report.Lease)
	}
	var id map[string]any
	if err := json.Unmarshal(report.Server, &id); err != nil || id["leaseholder"] != true {
		t.Errorf("the server's identity is %s (%v); want the leaseholder's", report.Server, err)
	}
}

// A lease that is not one is judged as an election judges it.
func TestStatusOfACorruptLease(t *testing.T) {
	co := exampleCheckout(t)
	path, _ := leaseOf(t, co)
	if err := os.WriteFile(path, []byte("not a lease"), 0o600); err != nil { // over the lease: its access stays the product's
		t.Fatal(err)
	}
	report, err := Status(context.Background(), co, statusTimes)
	if err != nil {
		t.Fatal(err)
	}
	if report.Class != string(registry.Corrupt) || report.Lease != nil || report.Connect != nil {
		t.Errorf("status = %+v; want a corrupt lease", report)
	}
	if raw, _ := os.ReadFile(path); string(raw) != "not a lease" {
		t.Errorf("status changed the lease to %q", raw)
	}
}

// A lease copied from another checkout (cp -a while its server ran) is
// judged as one whose server does not answer for this checkout, stale
// where the lock tells that nobody holds the copy (Linux), and that
// server, which would prove the copied secret, is not asked for a report.
func TestStatusOfACopiedLeaseAsksNothingOfTheOriginal(t *testing.T) {
	original, copied := exampleCheckout(t), exampleCheckout(t)
	serveOnTheLeaseFile(t, original)
	raw := registry.Read(registry.Path(original.Root, original.Profile)).Raw
	path := registry.Path(copied.Root, copied.Profile)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	report, err := Status(context.Background(), copied, statusTimes)
	if err != nil {
		t.Fatal(err)
	}
	want := registry.Busy
	if runtime.GOOS == "linux" {
		want = registry.Stale
	}
	if report.Class != string(want) || !strings.Contains(report.Reason, "copy") || string(report.Server) != "null" || report.Connect != nil {
		t.Errorf("status of the copy = %s, %s, server %s, connect %+v", report.Class, report.Reason, report.Server, report.Connect)
	}
}

// serveOnTheLeaseFile runs a node without a client over co's real lease
// file, until the test ends, and returns once its server's URL is in the
// lease.
func serveOnTheLeaseFile(t *testing.T, co *Checkout) {
	t.Helper()
	privateLeaseDir(t, co)
	logs := newLogTap()
	handled := make(chan struct{})
	close(handled)
	t.Cleanup(func() { // after the node ended (cleanups run last first)
		if _, err := os.Stat(registry.Path(co.Root, co.Profile)); !os.IsNotExist(err) {
			t.Errorf("the lease is still there after the node ended (%v)", err)
		}
	})
	r := &running{t: t, name: "holder", logs: logs, done: make(chan result, 1)}
	r.run(Config{Checkout: co, Times: statusTimes, HTTPHost: "127.0.0.1", SignalsHandled: handled, Logger: zap.New(logs)})
	r.awaitLog("shared server listening")
}

// privateLeaseDir leaves the lease directory of co's profile for the
// product to make, as privately as it makes it on every system, and
// returns the lease's path.
func privateLeaseDir(t *testing.T, co *Checkout) string {
	t.Helper()
	path := registry.Path(co.Root, co.Profile)
	if err := os.RemoveAll(filepath.Dir(path)); err != nil {
		t.Fatal(err)
	}
	return path
}

// A server that accepts and never answers (a frozen one) is judged busy,
// and asked once: asked again for its report, it would keep status
// waiting a whole probe timeout more.
func TestStatusOfASilentServerAsksItOnce(t *testing.T) {
	co := exampleCheckout(t)
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	accepted := make(chan net.Conn, 8)
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c // held open, never answered
		}
	}()
	_, lf := leaseOf(t, co)
	if err := lf.Publish("http://" + silent.Addr().String()); err != nil {
		t.Fatal(err)
	}
	times := statusTimes
	times.ProbeTimeout = 200 * time.Millisecond // what status waits here, once
	report, err := Status(context.Background(), co, times)
	if err != nil {
		t.Fatal(err)
	}
	silent.Close()
	n := 0
	for c := range accepted {
		c.Close()
		n++
	}
	if report.Class != string(registry.Busy) || string(report.Server) != "null" || report.Connect != nil || n != 1 {
		t.Errorf("status of a silent server = %s (%s), server %s, connect %+v, after %d connections; want busy, after one",
			report.Class, report.Reason, report.Server, report.Connect, n)
	}
}

// leaseOf acquires co's lease as this process, without a URL, until the
// test ends: its path and file.
func leaseOf(t *testing.T, co *Checkout) (string, *registry.LeaseFile) {
	t.Helper()
	path := privateLeaseDir(t, co)
	self, err := registry.Self()
	if err != nil {
		t.Fatal(err)
	}
	lf := &registry.LeaseFile{Path: path}
	if err := lf.Acquire(registry.NewLease(self, co.Root, layer.RepositoryID(co.Root), co.Profile, "0.1.0", time.Now())); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(path) })
	return path, lf
}

// A server that answers, but not as the leaseholder (it is stopping, or
// lost its lease), is judged busy and reported all the same: it was not
// silent.
func TestStatusReportsAServerThatIsNoLongerTheLeaseholder(t *testing.T) {
	co := exampleCheckout(t)
	_, lf := leaseOf(t, co)
	held, _ := lf.Held()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := httpserver.New(httpserver.Config{
		MCP:      server.NewMCPServer(surface.Name, "0.1.0"),
		Secret:   held.Secret,
		Identity: func(bool) httpserver.Identity { return httpserver.Identity{Name: surface.Name, Sessions: 3} },
		Logger:   zap.NewNop(),
	})
	go func() { _ = h.Serve(ln) }()
	t.Cleanup(func() { _ = h.Shutdown(context.Background()) })
	if err := lf.Publish(httpserver.URLOf(ln.Addr())); err != nil {
		t.Fatal(err)
	}
	report, err := Status(context.Background(), co, statusTimes)
	if err != nil {
		t.Fatal(err)
	}
	var id struct {
		Leaseholder bool
		Sessions    int
	}
	if report.Class != string(registry.Busy) || json.Unmarshal(report.Server, &id) != nil || id.Sessions != 3 || id.Leaseholder || report.Connect != nil {
		t.Errorf("status of a server no longer the leaseholder = %s (%s), server %s, connect %+v", report.Class, report.Reason, report.Server, report.Connect)
	}
}
