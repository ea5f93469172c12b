//go:build unix

package scenarios

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
)

func init() {
	unreadableStates["fifo"] = func(p string) error { return syscall.Mkfifo(p, 0o600) }
}

// A leaseholder sent SIGTERM while plain HTTP clients keep calling it
// answers the calls under way before anyone can take its lease: each one
// answered is in the history of the server that takes over. The old
// server is frozen (SIGSTOP) from the moment it logs its move to exited,
// which follows the release, until a bridge has taken over: a call it
// answered after giving the lease back would be answered, and journalled,
// after its successor loaded the state.
func TestCallsAnsweredAsALeaseholderStopsAreInTheNextHistory(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	b := bridged(t, dir, "codex")
	c := connect(t, dir)

	const clients = 8
	var answered atomic.Int64
	var wg sync.WaitGroup
	busy := make(chan struct{}, clients)
	for range clients {
		headers := c.with(map[string]string{"Mcp-Session-Id": openPlainSession(t, c), "Mcp-Protocol-Version": "2025-11-25",
			"Content-Type": "application/json", "Accept": "application/json"})
		wg.Go(func() {
			ok := searched(c.URL, headers)
			busy <- struct{}{}
			for ; ok; ok = searched(c.URL, headers) { // until the server stops taking calls
				answered.Add(1)
			}
		})
	}
	for range clients {
		<-busy
	}
	a.Signal(syscall.SIGTERM)
	if _, err := a.WaitLog(ctx(t), `"msg":"transition"`, `"to":"exited"`); err != nil {
		t.Fatal(err)
	}
	a.Signal(syscall.SIGSTOP)          // it may have exited already
	call(t, b, "majordomus_list", nil) // the lease is gone: B takes over
	if _, err := b.WaitLog(ctx(t), "took over as the shared server"); err != nil {
		t.Fatal(err)
	}
	a.Signal(syscall.SIGCONT)
	wg.Wait()
	if exit, err := a.Wait(ctx(t)); err != nil || exit.Signal != syscall.SIGTERM {
		t.Fatalf("exit %+v %v: want death by SIGTERM", exit, err)
	}
	var searches int64
	for _, e := range executionsOf(t, b) {
		if e.Tool == "majordomus_search" {
			searches++
		}
	}
	if searches < answered.Load() {
		t.Fatalf("the clients were answered %d searches; the history of the server that took over holds %d", answered.Load(), searches)
	}
	t.Logf("%d searches answered, all in the next history", answered.Load())
}

// searched makes one majordomus_search call in a plain HTTP session, and
// reports whether it was answered with a result.
func searched(url string, headers map[string]string) bool {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"majordomus_search","arguments":{"query":"rule"}}}`
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(body)))
	if err != nil {
		return false
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var answer struct {
		Result *struct{ IsError bool }
	}
	return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&answer) == nil && answer.Result != nil && !answer.Result.IsError
}
