package node

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"majordomus-mcp/machine"
	"majordomus-mcp/registry"
)

// On a system where a process's identity cannot be read, no lease is read
// or written: every attempt finds the lease unusable, with the reason,
// which the machine answers by serving the client alone (R2).
func TestAnUnreadableIdentityMakesTheLeaseUnusable(t *testing.T) {
	e := &leaseFile{identityErr: errors.New("process identity is unsupported on plan9")}
	obs := e.Attempt(context.Background())
	if obs.Class != machine.ClassUnusable || !strings.Contains(obs.Reason, "unsupported on plan9") {
		t.Fatalf("Attempt = %+v, want unusable with the reason", obs)
	}
}

// Every class the judge can give has a name the machine knows; one the
// judge gains without a mapping here fails this test rather than reach the
// machine as an unknown class (it would be served alone).
func TestEveryLeaseClassIsHandled(t *testing.T) {
	for _, c := range registry.Classes {
		if c == registry.Absent {
			continue // acquired, never reported
		}
		got := electionClass(c)
		if !slices.Contains(machine.Classes, got) {
			t.Errorf("%s maps to %q, which the machine does not know", c, got)
		}
		if got == machine.ClassUnusable && c != registry.Unusable {
			t.Errorf("%s maps to unusable: give it its own mapping", c)
		}
		if string(c) != string(got) && c != registry.Unprobed {
			t.Errorf("%s is reported as %s", c, got)
		}
	}
	if len(registry.Classes) < 11 {
		t.Fatalf("registry.Classes lists %d classes", len(registry.Classes))
	}
}
