package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"majordomus-mcp/machine"
)

// On a system where a process's identity cannot be read, no lease is read
// or written: every attempt finds the lease unusable, with the reason,
// which the machine answers by serving the client alone (R2).
func TestAnUnreadableIdentityMakesTheLeaseUnusable(t *testing.T) {
	e := &election{identityErr: errors.New("process identity is unsupported on plan9")}
	obs := e.Attempt(context.Background())
	if obs.Class != machine.ClassUnusable || !strings.Contains(obs.Reason, "unsupported on plan9") {
		t.Fatalf("Attempt = %+v, want unusable with the reason", obs)
	}
}
