//go:build unix

package scenarios

import (
	"encoding/json"
	"fmt"
	"syscall"
	"testing"
)

// A leaseholder whose own client speaks 2026-07-28 (no initialize, _meta on
// every request) and calls back to back as the process gets SIGTERM or
// SIGINT: every call that client was answered with a result is in the
// history of the server that takes over, once.
func TestAModernOwnClientsCallsAnsweredAsItsLeaseholderStopsAreInTheNextHistory(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		for _, after := range []int{1, 4} {
			t.Run(fmt.Sprintf("%s after %d", sig, after), func(t *testing.T) {
				dir := checkout(t)
				l := startWithSignals(t, dir, "default", "--http-port", "0")
				answered := map[string]int{}
				modernCall := func(tool string, args map[string]any) bool {
					r, err := l.Call(ctx(t), "tools/call", withMeta(map[string]any{"name": tool, "arguments": args}, "modern-agent"))
					var res struct {
						IsError bool `json:"isError"`
					}
					if err != nil || r.Error != nil || r.Result == nil || json.Unmarshal(r.Result, &res) != nil || res.IsError {
						return false
					}
					answered[tool]++
					return true
				}
				if !modernCall("majordomus_announce", map[string]any{"intent": "the parser", "scope": []string{"lib"}}) {
					t.Fatal("the first announcement failed")
				}
				serverURL(t, l)
				peer := modernCaller(t, l)
				answered["majordomus_peers"]++
				b := bridged(t, dir, "codex")

				tools := []string{"majordomus_announce", "majordomus_executions"}
				args := []map[string]any{{"intent": "the parser", "scope": []string{"lib"}}, {"limit": 5}}
				n := 0
				for i := 0; ; i++ {
					if !modernCall(tools[i%2], args[i%2]) {
						break
					}
					if n++; n == after {
						l.Signal(sig) // as soon as this answer was read
					}
				}
				if exit, err := l.Wait(ctx(t)); err != nil || exit.Signal != sig {
					t.Fatalf("exit %+v %v: want death by %s", exit, err, sig)
				}
				call(t, b, "majordomus_list", nil)
				if _, err := b.WaitLog(ctx(t), "took over as the shared server"); err != nil {
					t.Fatal(err)
				}
				kept, seen := map[string]int{}, map[execution]bool{}
				history := executionsOf(t, b)
				defer func() {
					if t.Failed() {
						t.Logf("peer %s, history %+v", peer, history)
					}
				}()
				for _, e := range history {
					if e.Peer != peer {
						continue
					}
					if seen[e] {
						t.Errorf("%+v is in the history twice", e)
					}
					seen[e] = true
					kept[e.Tool]++
				}
				for tool, n := range answered {
					if kept[tool] < n {
						t.Errorf("the client was answered %d calls of %s; the next history holds %d (answered %v, kept %v)", n, tool, kept[tool], answered, kept)
					}
				}
				t.Logf("answered %v, kept %v", answered, kept)
			})
		}
	}
}
