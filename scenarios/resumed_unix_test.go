//go:build unix

package scenarios

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A leaseholder frozen while another process takes its lease over never
// claims the lease once it resumes (docs/design.md#the-lease): before its
// probe answers leaseholder: true, and before it admits a new session, it
// reads that the lease is still its own. Bridged clients keep the new
// server busy meanwhile, and a probe of both servers every 10 ms never
// finds both claiming the lease.
func TestAResumedFormerLeaseholderNeverClaimsTheLease(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	old := connect(t, dir)

	stop(t, a)
	plantLease(t, dir, "", time.Hour) // emptied long ago: past any grace
	d := shared(t, dir)
	initialize(t, d, "cursor")
	serverURL(t, d)
	current := connect(t, dir)

	load, unload := context.WithCancel(ctx(t))
	var busy sync.WaitGroup
	for _, name := range []string{"codex", "gemini-cli"} {
		b := bridged(t, dir, name)
		busy.Go(func() {
			for load.Err() == nil {
				_, _, _ = b.CallTool(load, "majordomus_peers", nil, nil)
			}
		})
	}
	t.Cleanup(func() { unload(); busy.Wait() })

	rounds, resumed := 0, -1
	lost := make(chan struct{})
	go func() {
		defer close(lost)
		_, _ = a.WaitLog(ctx(t), "the lease is no longer this server's")
	}()
	every := time.NewTicker(10 * time.Millisecond) // the probe's cadence, not a wait
	defer every.Stop()
	a.Signal(syscall.SIGCONT) // its probe is asked at once, while it wakes up
	for {
		oldClaims, newClaims := claimsTheLease(old), claimsTheLease(current)
		if oldClaims && newClaims {
			t.Fatalf("probe round %d: both the resumed server and the current one answer leaseholder: true", rounds)
		}
		if !newClaims {
			t.Fatalf("probe round %d: the current server does not claim the lease", rounds)
		}
		rounds++
		select {
		case <-lost:
			if resumed < 0 {
				resumed = rounds
			}
		default:
		}
		if resumed >= 0 && rounds >= resumed+20 {
			break
		}
		select {
		case <-every.C:
		case <-ctx(t).Done():
			t.Fatal("the resumed server never said its lease was lost")
		}
	}
	t.Logf("%d probe rounds of both servers, %d of them after the resumed server said it lost the lease", rounds, rounds-resumed)
}

// claimsTheLease asks a server's probe, with its token, whether it holds
// the lease; a server that does not answer claims nothing.
func claimsTheLease(c connection) bool {
	req, err := http.NewRequest(http.MethodGet, c.base()+"/", nil)
	if err != nil {
		return false
	}
	for k, v := range c.with(nil) {
		req.Header.Set(k, v)
	}
	client := http.Client{Timeout: 2 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var id struct{ Leaseholder bool }
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&id) != nil {
		return false
	}
	return id.Leaseholder
}
