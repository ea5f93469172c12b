//go:build unix

package scenarios

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// Every real host ends its stdio server with a signal
// (docs/design.md#nothing-is-lost), so the first agent's normal exit is a
// take-over for every other agent. Idle bridged clients learn it at once,
// from their dropped stream, without sending anything: one of them takes
// over and the others re-attach, and a change of the layer made afterwards
// reaches each as it asked — the legacy ones with list_changed, the
// subscribed one with resources/updated too, and a 2026-07-28 one through
// its listen filter.
func TestIdleClientsLearnAtOnceAndMissNoNotification(t *testing.T) {
	ends := []struct {
		name string
		end  func(*mcpclient.Process)
	}{
		{"SIGINT (Claude Code)", func(a *mcpclient.Process) { a.Signal(syscall.SIGINT) }},
		{"SIGTERM (Gemini CLI)", func(a *mcpclient.Process) { a.Signal(syscall.SIGTERM) }},
		{"stdin EOF, SIGTERM, SIGKILL 30 ms later (Codex CLI)", func(a *mcpclient.Process) {
			a.CloseStdin()
			a.Signal(syscall.SIGTERM)
			time.AfterFunc(30*time.Millisecond, func() { a.Signal(syscall.SIGKILL) }) // the host's schedule
		}},
		{"kill -9", func(a *mcpclient.Process) { a.Signal(syscall.SIGKILL) }},
	}
	for _, e := range ends {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			dir := checkout(t)
			a, b, c := leaseholderAndTwo(t, dir)
			// A 2026-07-28 client, bridged, listening for the lists and the
			// prompt it reads: its listen is its only request, in flight.
			m := shared(t, dir)
			attached(t, m)
			openIn(t, m, modern, "modern-agent")
			if _, err := m.Send("subscriptions/listen", withMeta(map[string]any{"notifications": map[string]any{
				"resourcesListChanged": true, "resourceSubscriptions": []string{"majordomus://prompt/review"},
			}}, "modern-agent")); err != nil {
				t.Fatal(err)
			}
			if _, err := m.WaitFrame(ctx(t), "the subscriptions acknowledged", func(f []byte) bool {
				return strings.Contains(string(f), `"method":"notifications/subscriptions/acknowledged"`)
			}); err != nil {
				t.Fatal(err)
			}
			for _, call := range []struct {
				method string
				params map[string]any
			}{
				{"resources/subscribe", map[string]any{"uri": "majordomus://prompt/review"}},
				{"logging/setLevel", map[string]any{"level": "warning"}},
			} {
				if r, err := b.Call(ctx(t), call.method, call.params); err != nil || r.Error != nil {
					t.Fatalf("%s: %v %+v", call.method, err, r.Error)
				}
			}

			e.end(a)
			a.Wait(ctx(t))
			holder := oneTakesOver(t, b, c, m)
			lease := readLease(t, dir)
			if pid, _ := lease["pid"].(float64); int(pid) != holder.Cmd.Process.Pid || lease["url"] != serverURL(t, holder) {
				t.Fatalf("the lease does not name the client that took over (pid %d): %v", holder.Cmd.Process.Pid, lease)
			}
			code, out, _ := runOnce(t, dir, "", "status")
			if code != 0 || !strings.Contains(out, `"class": "live"`) {
				t.Fatalf("status (%d) does not find the new server live:\n%s", code, out)
			}

			editReviewPrompt(t, dir, "5. Is the README still true? ("+strconv.Itoa(len(e.name))+")\n")
			heard := map[*mcpclient.Process][]string{
				b: {"notifications/resources/list_changed", "notifications/resources/updated"},
				c: {"notifications/resources/list_changed"},
				m: {"notifications/resources/list_changed", "notifications/resources/updated"},
			}
			for p, methods := range heard {
				for _, method := range methods {
					if _, err := p.WaitFrame(ctx(t), method+" after the take-over", func(f []byte) bool {
						return strings.Contains(string(f), `"method":"`+method+`"`) &&
							(method != "notifications/resources/updated" || strings.Contains(string(f), "majordomus://prompt/review"))
					}); err != nil {
						t.Fatal(err)
					}
				}
			}
		})
	}
}

// S10: a bridge re-attaches when a third process took the lease first.
func TestABridgeReattachesWhenAnotherProcessTookTheLease(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	b := bridged(t, dir, "codex")
	if isErr, text, _ := b.CallTool(ctx(t), "majordomus_announce", map[string]any{"intent": "the installer", "scope": []string{"site"}}, nil); isErr {
		t.Fatal(text)
	}

	// B, stopped, cannot learn that A is gone before C takes the lease.
	stop(t, b)
	a.Signal(syscall.SIGKILL)
	a.Wait(ctx(t))
	c := shared(t, dir)
	initialize(t, c, "gemini-cli")
	url := serverURL(t, c)
	if err := b.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}

	if isErr, text, err := b.CallTool(ctx(t), "majordomus_repository", nil, nil); err != nil || isErr {
		t.Fatalf("B after the kill: %s %v", text, err)
	}
	if _, err := b.WaitLog(ctx(t), "re-attached to the shared server", url); err != nil {
		t.Fatal(err)
	}
	board := peersOf(t, c)
	found := false
	for _, p := range board.Peers {
		if p.Client.Name == "codex" && p.Attached && p.Announcement != nil && p.Announcement.Intent == "the installer" {
			found = true
		}
	}
	if board.Count != 2 || !found {
		t.Fatalf("C's board: %+v", board)
	}
	b.CloseStdin()
	exitsWith(t, b, 0)
}

// A bridge whose server is killed -9, and whose lease directory is then
// made unusable, serves its client alone: the client, already initialized,
// is told so by a notifications/message at warning and in majordomus_server's
// findings, each with the reason (docs/design.md#the-layer).
func TestABridgeServedAloneAfterAFailoverIsToldWhy(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	b := bridged(t, dir, "codex")

	// B, stopped, learns that A is gone only once the directory is a file.
	stop(t, b)
	a.Signal(syscall.SIGKILL)
	a.Wait(ctx(t))
	state := filepath.Join(dir, ".ai/local/state")
	if err := os.RemoveAll(state); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(state, []byte("a file where the lease directory should be"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := b.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	var repo struct{ State string }
	if isErr, text, err := b.CallTool(ctx(t), "majordomus_repository", nil, &repo); err != nil || isErr || repo.State != "ok" {
		t.Fatalf("B's call after the kill: %v %s %v", isErr, text, err)
	}
	toldServedAlone(t, b, "")
	if n := peersOf(t, b).Count; n != 1 {
		t.Fatalf("a client served alone sees a board of %d", n)
	}
}

// A layer edited while the leaseholder is frozen is announced by no
// server: the frozen one cannot, and the one that takes over indexes the
// edit as it starts. So each client whose session moves is told that the
// lists, and what it subscribed to, may have changed, whichever way it
// moved (took over or re-attached): a 2026-07-28 client on its listen, of
// what the listen asked to hear.
func TestAClientMovedPastAnUnannouncedEditHearsTheListsChanged(t *testing.T) {
	dir := checkout(t)
	a, b, c := leaseholderAndTwo(t, dir)
	m := modernBridged(t, dir)
	review := "majordomus://prompt/review"
	listen, err := m.Send("subscriptions/listen", withMeta(map[string]any{"notifications": map[string]any{
		"resourcesListChanged": true, "promptsListChanged": true, "resourceSubscriptions": []string{review}}}, "modern-agent"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.WaitFrame(ctx(t), "the subscriptions acknowledged", func(f []byte) bool {
		return strings.Contains(string(f), `"method":"notifications/subscriptions/acknowledged"`)
	}); err != nil {
		t.Fatal(err)
	}
	if r, err := b.Call(ctx(t), "resources/subscribe", map[string]any{"uri": review}); err != nil || r.Error != nil {
		t.Fatalf("subscribing: %+v %v", r, err)
	}

	a.Signal(syscall.SIGSTOP)
	editReviewPrompt(t, dir, "5. Is the README still true?\n")
	a.Signal(syscall.SIGKILL)
	a.Wait(ctx(t))
	oneTakesOver(t, b, c, m)
	lists := []string{`"method":"notifications/resources/list_changed"`, `"method":"notifications/prompts/list_changed"`}
	updated := `"method":"notifications/resources/updated","params":{`
	tag := `"io.modelcontextprotocol/subscriptionId":` + string(listen)
	for p, want := range map[*mcpclient.Process][]string{
		b: append(lists, updated), c: lists,
		m: {lists[0] + `,"params":{"_meta":{` + tag, lists[1] + `,"params":{"_meta":{` + tag, updated + `"_meta":{` + tag},
	} {
		for _, w := range want {
			if _, err := p.WaitFrame(ctx(t), w+" after the move", func(f []byte) bool {
				return strings.Contains(string(f), w) && (!strings.Contains(w, "updated") || strings.Contains(string(f), review))
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// The server that takes over goes on from the layer's generation the
// killed one served: the same files under the same generation, changed
// ones under the next; no client sees the generation go back.
func TestTheLayersGenerationGoesOnAcrossATakeOver(t *testing.T) {
	dir := checkout(t)
	a, b, c := leaseholderAndTwo(t, dir)
	for _, line := range []string{"5. Is the README still true?\n", "6. Are the tests still true?\n"} {
		editTold(t, dir, c, line) // told after the generation is kept beside the lease
	}
	if g := generationTold(t, c); g != 3 {
		t.Fatalf("generation %d after two changes, want 3", g)
	}

	a.Signal(syscall.SIGKILL)
	a.Wait(ctx(t))
	holder := oneTakesOver(t, b, c)
	for _, p := range []*mcpclient.Process{b, c} {
		if g := generationTold(t, p); g != 3 {
			t.Fatalf("generation %d after the take-over, want 3: the files are the same", g)
		}
	}

	// The files change while nobody watches them: the next server serves
	// them under the next generation.
	other := map[*mcpclient.Process]*mcpclient.Process{b: c, c: b}[holder]
	holder.Signal(syscall.SIGSTOP)
	editReviewPrompt(t, dir, "7. Is the changelog still true?\n")
	holder.Signal(syscall.SIGKILL)
	holder.Wait(ctx(t))
	if _, err := other.WaitLog(ctx(t), "took over as the shared server"); err != nil {
		t.Fatal(err)
	}
	if g := generationTold(t, other); g != 4 {
		t.Fatalf("generation %d after the files changed unseen, want 4", g)
	}
}

// A 2026-07-28 client that once sent a request no server takes (answered
// as one, alike in every mode: a version no server knows, no client
// capabilities, capabilities that are not an object) is carried as ever
// when its server is killed: what names it on the next server is the
// _meta of a request a server takes, not that one, which would be refused
// there on every try.
func TestAClientThatSentARequestNoServerTakesIsCarriedAsEver(t *testing.T) {
	for name, odd := range map[string]func(map[string]any){
		"unknown revision":    func(m map[string]any) { m["io.modelcontextprotocol/protocolVersion"] = modern + " " },
		"no capabilities":     func(m map[string]any) { delete(m, "io.modelcontextprotocol/clientCapabilities") },
		"capabilities not {}": func(m map[string]any) { m["io.modelcontextprotocol/clientCapabilities"] = 5 },
	} {
		t.Run(name, func(t *testing.T) {
			dir := checkout(t)
			a, b, c := leaseholderAndTwo(t, dir)
			m := modernBridged(t, dir)
			meta := mcpclient.ModernMeta("modern-agent")
			odd(meta)
			if r, err := m.Call(ctx(t), "tools/list", mcpclient.WithMeta(nil, meta)); err != nil || r.Error == nil {
				t.Fatalf("tools/list no server takes: %s %v", r.Bytes(), err)
			}
			reattached(t, m, a, b, c)
			if r, err := m.Call(ctx(t), "tools/list", withMeta(nil, "modern-agent")); err != nil || r.Error != nil {
				t.Fatalf("tools/list after the move: %s %v", r.Bytes(), err)
			}
			if n := m.CountLogs("electing again"); n > 2 {
				t.Errorf("the client's process elected again %d times to be carried", n)
			}
		})
	}
}

// A subscription and a log level set under ids mcp-go writes back
// otherwise (9.0 is answered as 9, "\u00e9" as "é") are carried across a
// take-over as any others: the bridge knows its answers by the id's
// value, not its spelling.
func TestWhatAClientSetUnderAnyIdSpellingIsCarried(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	b := bridged(t, dir, "codex")
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":9.0,"method":"resources/subscribe","params":{"uri":"majordomus://prompt/review"}}`,
		`{"jsonrpc":"2.0","id":"\u00e9","method":"logging/setLevel","params":{"level":"error"}}`,
	} {
		if err := b.SendLine(line); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{`"id":9,`, `"id":"é",`} {
		if _, err := b.WaitFrame(ctx(t), "the answer "+id, func(f []byte) bool {
			return strings.Contains(string(f), id) && strings.Contains(string(f), `"result"`)
		}); err != nil {
			t.Fatal(err)
		}
	}
	a.Signal(syscall.SIGKILL)
	a.Wait(ctx(t))
	if _, err := b.WaitLog(ctx(t), "took over as the shared server"); err != nil {
		t.Fatal(err)
	}
	editReviewPrompt(t, dir, "5. Is the README still true?\n")
	if _, err := b.WaitFrame(ctx(t), "resources/updated after the take-over", func(f []byte) bool {
		return strings.Contains(string(f), `"method":"notifications/resources/updated"`) && strings.Contains(string(f), "majordomus://prompt/review")
	}); err != nil {
		t.Fatal(err)
	}
	for _, f := range b.Frames() {
		if strings.Contains(string(f), `"method":"notifications/message"`) && !strings.Contains(string(f), `"level":"error"`) {
			t.Fatalf("the log level set before the take-over was not kept: %s", f)
		}
	}
}

// A take-over that comes while a subscribed object is not on disk (a
// branch without it checked out) loses no notification either: when the
// object is back, its subscriber is told, as it would have been had no
// take-over come between.
func TestASubscriptionToAnObjectAbsentAtATakeOverHearsItComeBack(t *testing.T) {
	dir := checkout(t)
	a, b, c := leaseholderAndTwo(t, dir)
	const uri = "majordomus://prompt/review"
	if r, err := b.Call(ctx(t), "resources/subscribe", map[string]any{"uri": uri}); err != nil || r.Error != nil {
		t.Fatalf("subscribe: %v %+v", err, r.Error)
	}
	path := filepath.Join(dir, ".ai/repo/prompts/review.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	updated := func(f []byte) bool {
		return strings.Contains(string(f), `"method":"notifications/resources/updated"`) && strings.Contains(string(f), uri)
	}
	mark := len(b.Frames())
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	layerEdited(t, dir)
	if _, err := b.WaitFrameAfter(ctx(t), "the prompt's removal", mark, updated); err != nil {
		t.Fatal(err)
	}

	a.Signal(syscall.SIGTERM)
	a.Wait(ctx(t))
	oneTakesOver(t, b, c)
	// what the move tells b comes before the answers it is given after
	if r, err := b.Call(ctx(t), "resources/list", nil); err != nil || r.Error != nil {
		t.Fatalf("resources/list after the take-over: %v %+v", err, r.Error)
	}
	mark = len(b.Frames())
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	layerEdited(t, dir)
	if _, err := b.WaitFrameAfter(ctx(t), "resources/list_changed as the prompt is back", mark, func(f []byte) bool {
		return strings.Contains(string(f), `"method":"notifications/resources/list_changed"`)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.WaitFrameAfter(ctx(t), "resources/updated as the prompt is back", mark, updated); err != nil {
		t.Fatal(err)
	}
}

// editTold edits dir's review prompt, and waits until p is told the
// layer's list changed.
func editTold(t *testing.T, dir string, p *mcpclient.Process, line string) {
	t.Helper()
	from := len(p.Frames())
	editReviewPrompt(t, dir, line)
	if _, err := p.WaitFrameAfter(ctx(t), "resources/list_changed", from, func(f []byte) bool {
		return strings.Contains(string(f), `"method":"notifications/resources/list_changed"`)
	}); err != nil {
		t.Fatal(err)
	}
}

// generationTold is the layer's generation majordomus_repository tells p.
func generationTold(t *testing.T, p *mcpclient.Process) int {
	t.Helper()
	var repo struct{ Generation int }
	if isErr, text, err := p.CallTool(ctx(t), "majordomus_repository", nil, &repo); err != nil || isErr {
		t.Fatalf("majordomus_repository: %s %v", text, err)
	}
	return repo.Generation
}

// reattached stops p while its leaseholder a is killed and one of others
// takes the lease over, then continues p, which finds its server gone and
// re-attaches to that one.
func reattached(t *testing.T, p, a *mcpclient.Process, others ...*mcpclient.Process) {
	t.Helper()
	p.Signal(syscall.SIGSTOP)
	a.Signal(syscall.SIGKILL)
	a.Wait(ctx(t))
	oneTakesOver(t, others...)
	p.Signal(syscall.SIGCONT)
	if _, err := p.WaitLog(ctx(t), "re-attached to the shared server"); err != nil {
		t.Fatal(err)
	}
}
