package registry_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
)

// repositoryID is the examples' checkout's id (package layer computes a
// checkout's own).
const repositoryID = "fedcba9876543210fedcba9876543210"

// A process claims its checkout's lease: the first handle creates it, a
// second finds it there. Until the leaseholder publishes a URL, anyone
// who reads the lease judges it binding and waits.
func ExampleLeaseFile_Acquire() {
	root := checkoutRoot()
	defer testtemp.RemoveAll(root)
	self, err := registry.Self()
	if err != nil {
		fmt.Println(err)
		return
	}
	path := registry.Path(root, registry.DefaultProfile)

	first := &registry.LeaseFile{Path: path}
	fmt.Println("first:", first.Acquire(registry.NewLease(self, root, repositoryID, "", "0.1.0", time.Now())))
	second := &registry.LeaseFile{Path: path}
	err = second.Acquire(registry.NewLease(self, root, repositoryID, "", "0.1.0", time.Now()))
	fmt.Println("second finds it taken:", errors.Is(err, registry.ErrLeaseExists))
	fmt.Println("judged:", judge(path, nil))
	_ = first.Release()
	// Output:
	// first: <nil>
	// second finds it taken: true
	// judged: binding
}

// The leaseholder publishes its server's URL. A reader probes it: the
// server proves it holds the lease's secret, so the lease is live and
// the reader attaches.
func ExampleLeaseFile_Publish() {
	root := checkoutRoot()
	defer testtemp.RemoveAll(root)
	self, err := registry.Self()
	if err != nil {
		fmt.Println(err)
		return
	}
	doc := registry.NewLease(self, root, repositoryID, "", "0.1.0", time.Now())
	lf := &registry.LeaseFile{Path: registry.Path(root, "")}
	if err := lf.Acquire(doc); err != nil {
		fmt.Println(err)
		return
	}
	defer lf.Release()

	// What a leaseholder's server answers a probe on GET /: its name and
	// claim, proved with the lease's secret for the probe's challenge.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proof := secret.Proof(doc.Secret, r.URL.Query().Get("challenge"), true)
		fmt.Fprintf(w, `{"name":%q,"leaseholder":true,"proof":%q}`, registry.ServerName, proof)
	}))
	defer srv.Close()

	fmt.Println("before publishing:", judge(lf.Path, registry.HTTPProbe(time.Second)))
	fmt.Println("publish:", lf.Publish(srv.URL))
	fmt.Println("after publishing:", judge(lf.Path, registry.HTTPProbe(time.Second)))
	// Output:
	// before publishing: binding
	// publish: <nil>
	// after publishing: live
}

// A lease that is not a lease document is taken over: removed exactly as
// it was judged, then acquired. Of two processes taking over the same
// judged lease only one removes it; the other's observation is out of
// date and it reads the lease again.
func ExampleLeaseFile_TakeOver() {
	root := checkoutRoot()
	defer testtemp.RemoveAll(root)
	self, err := registry.Self()
	if err != nil {
		fmt.Println(err)
		return
	}
	path := registry.Path(root, "")
	if err := os.MkdirAll(registry.Dir(root), 0o700); err != nil {
		fmt.Println(err)
		return
	}
	if err := os.WriteFile(path, []byte("not a lease"), 0o600); err != nil {
		fmt.Println(err)
		return
	}
	observer := &registry.Observer{Path: path}
	judged, err := observer.Observe(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("judged:", judged.Verdict.Class, "take over:", judged.Verdict.Class.TakesOver())

	lf := &registry.LeaseFile{Path: path}
	removed, err := lf.TakeOver(judged)
	fmt.Println("removed:", removed, err)
	fmt.Println("acquire:", lf.Acquire(registry.NewLease(self, root, repositoryID, "", "0.1.0", time.Now())))
	defer lf.Release()

	late := &registry.LeaseFile{Path: path}
	removed, err = late.TakeOver(judged)
	fmt.Println("a late take-over removed:", removed, err)
	// Output:
	// judged: corrupt take over: true
	// removed: true <nil>
	// acquire: <nil>
	// a late take-over removed: false <nil>
}

// A process gives its lease back when it stops: the lease is removed
// only while it is still the process's own, and releasing twice is not
// an error. A lease another process has taken over meanwhile is left
// alone.
func ExampleLeaseFile_Release() {
	root := checkoutRoot()
	defer testtemp.RemoveAll(root)
	self, err := registry.Self()
	if err != nil {
		fmt.Println(err)
		return
	}
	path := registry.Path(root, "")
	lf := &registry.LeaseFile{Path: path}
	if err := lf.Acquire(registry.NewLease(self, root, repositoryID, "", "0.1.0", time.Now())); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("release:", lf.Release())
	fmt.Println("judged:", judge(path, nil))
	fmt.Println("again:", lf.Release())

	// Acquired again, then taken over by another process, whose lease
	// is now at the path.
	if err := lf.Acquire(registry.NewLease(self, root, repositoryID, "", "0.1.0", time.Now())); err != nil {
		fmt.Println(err)
		return
	}
	raw, err := registry.Encode(registry.NewLease(self, root, repositoryID, "", "0.1.0", time.Now()))
	if err == nil {
		err = os.WriteFile(path, raw, 0o600)
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	err = lf.Release()
	fmt.Println("release of a lease taken over:", errors.Is(err, registry.ErrLeaseNotOurs))
	fmt.Println("judged:", judge(path, nil))
	// Output:
	// release: <nil>
	// judged: absent
	// again: <nil>
	// release of a lease taken over: true
	// judged: binding
}

// checkoutRoot is a fresh directory standing for a checkout.
func checkoutRoot() string {
	dir, err := os.MkdirTemp("", "majordomus-example-")
	if err != nil {
		panic(err)
	}
	if err := os.Mkdir(filepath.Join(dir, ".ai"), 0o755); err != nil {
		panic(err)
	}
	return dir
}

// judge is the class a reader of the lease at path judges it, probing
// with probe (nil: no server answers).
func judge(path string, probe registry.ProbeFunc) registry.Class {
	o := &registry.Observer{Path: path, Probe: probe}
	obs, err := o.Observe(context.Background())
	if err != nil {
		return registry.Class("not judged: " + err.Error())
	}
	return obs.Verdict.Class
}
