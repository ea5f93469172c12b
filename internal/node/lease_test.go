package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/machine"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
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

// The judge's classes and the machine's are one vocabulary: every class an
// observation can give reaches the machine as the word it is, which the
// machine knows (absent is acquired instead, and unprobed never leaves
// Observe, which always probes); and every class the machine knows but won
// and outraced, which only an attempt's own create gives, is the judge's.
func TestEveryLeaseClassIsHandled(t *testing.T) {
	judged := map[machine.Class]bool{}
	for _, c := range registry.Classes {
		if c == registry.Absent || c == registry.Unprobed {
			continue
		}
		judged[machine.Class(c)] = true
		if !slices.Contains(machine.Classes, machine.Class(c)) {
			t.Errorf("the judge's class %q is no class of the machine's", c)
		}
	}
	for _, c := range machine.Classes {
		if !judged[c] && c != machine.ClassWon && c != machine.ClassOutraced {
			t.Errorf("the machine's class %q is no class of the judge's", c)
		}
	}
	if len(judged) < 9 {
		t.Fatalf("registry.Classes lists %d judged classes", len(judged))
	}
}

// What a lost lease became is said in words a user can act on.
func TestALostLeaseIsExplained(t *testing.T) {
	self, err := registry.Self()
	if err != nil {
		t.Fatal(err)
	}
	doc := func(url string) []byte {
		l := registry.NewLease(self, "/checkout", strings.Repeat("0", 32), "default", "0.1.0", time.Now())
		if url != "" {
			l.URL = &url
		}
		raw, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	for _, c := range []struct {
		snap registry.Snapshot
		want string
	}{
		{registry.Snapshot{Found: registry.Missing}, "removed"},
		{registry.Snapshot{Found: registry.Regular}, "emptied"},
		{registry.Snapshot{Found: registry.Regular, Raw: []byte("{oops")}, "not a lease"},
		{registry.Snapshot{Found: registry.Regular, Raw: doc("")}, fmt.Sprintf("pid %d) took the lease over", os.Getpid())},
		{registry.Snapshot{Found: registry.Regular, Raw: doc("http://127.0.0.1:9")}, "serves at http://127.0.0.1:9"},
	} {
		if got := lossReason(c.snap); !strings.Contains(got, c.want) {
			t.Errorf("lossReason(%+v) = %q, want it to say %q", c.snap, got, c.want)
		}
	}
}
