//go:build unix

package node

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/machine"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
)

// A lease in a directory other users may write is not read at all: status
// says why, as an election would refuse it.
func TestStatusOfAnUntrustedLease(t *testing.T) {
	co := exampleCheckout(t)
	path := registry.Path(co.Root, co.Profile)
	if err := os.WriteFile(path, []byte("not a lease"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(path), 0o777); err != nil {
		t.Fatal(err)
	}
	report, err := Status(context.Background(), co, statusTimes)
	if err != nil {
		t.Fatal(err)
	}
	if report.Class != string(registry.Unusable) || !strings.HasPrefix(report.Reason, "untrusted lease: ") || !strings.Contains(report.Reason, "writable by other users") {
		t.Errorf("status = %+v; want an untrusted, unusable lease", report)
	}
	if report.Lease != nil || report.Owner != "unknown" {
		t.Errorf("status read the untrusted lease: %+v, its owner %q", report.Lease, report.Owner)
	}
	lf := newLeaseFile(co, statusTimes, nil)
	if obs := lf.Attempt(context.Background()); obs.Class != machine.ClassUnusable || "untrusted lease: "+obs.Reason != report.Reason {
		t.Errorf("an election finds %+v; status said %q", obs, report.Reason)
	}
}
