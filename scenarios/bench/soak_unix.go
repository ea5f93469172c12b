//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The soak (`task soak`, docs/design.md#the-rule): clients in one checkout
// call tools for a bounded time while a chaos loop kills them (-9 and
// SIGTERM), stops and continues the leaseholder, corrupts, truncates and
// replaces the lease and swaps its directory away. It reports every request
// and how it ended, the moments two servers admitted new sessions, the
// clients not on the leaseholder's board at the end, and what was left.

// soakTimings shorten the waits so that a minute holds many elections;
// their proportions are the defaults' (an election bound past the bind
// grace and the busy grace).
var soakTimings = []string{"--bind-grace", "2s", "--busy-grace", "2s", "--election-bound", "10s", "--heartbeat", "2s", "--probe-timeout", "500ms"}

// callBound is how long a soak call may wait: the clients' busy grace (2 s)
// and election bound (10 s), a stopped leaseholder's longest stop (4 s),
// and a few seconds for a loaded machine.
const callBound = 20 * time.Second

// soakTools are what the clients call: read-only tools and the idempotent
// announcement; a call may be resent, so "outcome unknown" is a failure.
var soakTools = []string{"majordomus_repository", "majordomus_list", "majordomus_search", "majordomus_peers", "majordomus_announce", "majordomus_server"}

// soaker is one soak run.
type soaker struct {
	b     *bench
	dir   string
	lease string
	rep   *SoakReport
	rng   *rand.Rand

	mu      sync.Mutex
	clients map[int]*pipeClient // by slot
	stopped map[*pipeClient]bool
	harmed  map[*pipeClient]bool // clients the chaos signalled to end
	ready   map[*pipeClient]bool // clients whose handshake was answered

	notified, lost atomic.Int64 // clients told of an edit, and not

	longest     atomic.Int64 // the longest answered call, in nanoseconds
	leaseholdRS atomic.Int64 // the highest VmHWM of a leaseholder seen, in KiB

	requests, answered, unanswered, killed atomic.Int64
}

func (b *bench) soak(d time.Duration, clients int, commit string) (*SoakReport, error) {
	dir, err := b.checkout()
	if err != nil {
		return nil, err
	}
	s := &soaker{b: b, dir: dir, lease: filepath.Join(dir, ".ai/local/state/mcp/server.json"),
		rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7)), clients: map[int]*pipeClient{},
		stopped: map[*pipeClient]bool{}, harmed: map[*pipeClient]bool{}, ready: map[*pipeClient]bool{},
		rep: &SoakReport{Schema: "majordomus-soak/v1", Started: time.Now().UTC().Format(time.RFC3339), Clients: clients, Commit: commit,
			Errors: map[string]int{}, ErrorSamples: map[string]string{}, Chaos: map[string]int{}, History: map[string]int{}}}
	began := time.Now()
	ctx, stop := context.WithTimeout(context.Background(), d)
	defer stop()
	var wg sync.WaitGroup
	for slot := range clients {
		wg.Go(func() { s.client(ctx, slot) })
	}
	wg.Go(func() { s.chaosLoop(ctx) })
	wg.Go(func() { s.watchAdmission(ctx) })
	wg.Wait()
	s.settle()
	s.rep.Seconds = time.Since(began).Seconds()
	s.rep.Requests, s.rep.Answered, s.rep.Unanswered, s.rep.KilledMidCall = s.requests.Load(), s.answered.Load(), s.unanswered.Load(), s.killed.Load()
	s.rep.Notified, s.rep.NotificationsLost = s.notified.Load(), s.lost.Load()
	s.rep.LongestCallSeconds = time.Duration(s.longest.Load()).Seconds()
	s.rep.LeaseholderPeakMiB = float64(s.leaseholdRS.Load()) / 1024
	if dir := os.Getenv("SOAK_LOGS"); dir != "" { // every client's log, to read what happened
		_ = os.MkdirAll(dir, 0o755)
		s.b.mu.Lock()
		for _, c := range s.b.clients {
			_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.log", c.pid())), []byte(c.tail(1<<30)), 0o644)
		}
		s.b.mu.Unlock()
	}
	return s.rep, nil
}

// client keeps one slot busy: a client process calling tools until ctx
// ends, replaced when the chaos ends it.
func (s *soaker) client(ctx context.Context, slot int) {
	for ctx.Err() == nil {
		c, err := s.b.spawn(s.dir, soakTimings...)
		if err != nil {
			s.count(s.rep.Errors, "spawn failed")
			return
		}
		s.mu.Lock()
		s.clients[slot] = c
		s.mu.Unlock()
		step, cancel := context.WithTimeout(context.Background(), callBound)
		err = handshake(step, c, fmt.Sprintf("soak-%d", slot))
		cancel()
		if err != nil {
			s.ended(c, err)
			continue
		}
		s.mark(s.ready, c)
		for ctx.Err() == nil {
			tool := soakTools[rand.IntN(len(soakTools))]
			args := map[string]any{}
			switch tool {
			case "majordomus_search":
				args["query"] = "commit"
			case "majordomus_announce":
				args["intent"] = fmt.Sprintf("soak %d", slot)
			}
			s.requests.Add(1)
			call, cancel := context.WithTimeout(context.Background(), callBound)
			began := time.Now()
			_, err := c.call(call, "tools/call", map[string]any{"name": tool, "arguments": args})
			cancel()
			if err != nil {
				if s.ended(c, err) {
					break
				}
				continue
			}
			raise(&s.longest, int64(time.Since(began)))
			s.answered.Add(1)
			time.Sleep(time.Duration(5+rand.IntN(20)) * time.Millisecond) // a client's pace, not a wait for an event
		}
	}
}

// ended classifies a failed call, and says whether the client is gone.
func (s *soaker) ended(c *pipeClient, err error) bool {
	text := err.Error()
	switch {
	case s.is(s.harmed, c), // answered as it was ending, or not at all
		strings.Contains(text, "exited before"), strings.Contains(text, ": writing "): // the chaos ended the client itself
		s.killed.Add(1)
	case strings.Contains(text, "deadline exceeded"):
		s.unanswered.Add(1)
		s.sample(fmt.Sprintf("unanswered within %s", callBound), text+" || its log: "+c.tail(12))
	case strings.Contains(text, "outcome unknown"):
		s.sample("outcome unknown", text)
		return false
	case strings.Contains(text, "shared server unavailable"):
		s.sample("shared server unavailable", text)
		return false
	default:
		w := strings.Fields(text)
		s.sample("other: "+strings.Join(w[:min(8, len(w))], " "), text)
		return false
	}
	c.kill()
	return true
}

// raise makes m at least v.
func raise(m *atomic.Int64, v int64) {
	for old := m.Load(); v > old && !m.CompareAndSwap(old, v); old = m.Load() {
	}
}

// sample counts an error of kind, keeping the first one's text.
func (s *soaker) sample(kind, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rep.Errors[kind]++
	if _, ok := s.rep.ErrorSamples[kind]; !ok {
		s.rep.ErrorSamples[kind] = text
	}
}

// count adds one to m[key]: the report's errors, harms or history checks.
func (s *soaker) count(m map[string]int, key string) {
	s.mu.Lock()
	m[key]++
	s.mu.Unlock()
}

// mark sets c in one of the soaker's sets; is says whether it is in one.
func (s *soaker) mark(set map[*pipeClient]bool, c *pipeClient) {
	s.mu.Lock()
	set[c] = true
	s.mu.Unlock()
}

func (s *soaker) is(set map[*pipeClient]bool, c *pipeClient) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return set[c]
}

// live is every client whose process runs, in no order.
func (s *soaker) live() []*pipeClient {
	s.mu.Lock()
	defer s.mu.Unlock()
	var live []*pipeClient
	for _, c := range s.clients {
		if c != nil && !c.hasExited() {
			live = append(live, c)
		}
	}
	return live
}

// chaosLoop does one harm every 0.3–1.5 s until ctx ends.
func (s *soaker) chaosLoop(ctx context.Context) {
	mcpDir := filepath.Dir(s.lease)
	for swaps := 0; pause(ctx, time.Duration(300+s.rng.IntN(1200))*time.Millisecond); {
		switch harm := s.rng.IntN(12); harm {
		case 0, 1:
			sig, name := syscall.SIGKILL, "kill -9 a client"
			if harm == 1 {
				sig, name = syscall.SIGTERM, "SIGTERM a client"
			}
			if live := s.live(); len(live) > 0 {
				c := live[s.rng.IntN(len(live))]
				s.mark(s.harmed, c)
				_ = c.proc.Signal(sig)
				s.count(s.rep.Chaos, name)
			}
		case 2:
			if c := s.leaseholder(); c != nil {
				_ = c.proc.Signal(syscall.SIGSTOP)
				s.mark(s.stopped, c)
				s.count(s.rep.Chaos, "SIGSTOP the leaseholder (1-4 s)")
				time.AfterFunc(time.Duration(1000+s.rng.IntN(3000))*time.Millisecond, func() { s.cont(c) })
			}
		case 3:
			if os.WriteFile(s.lease, []byte("{not a lease"), 0o600) == nil {
				s.count(s.rep.Chaos, "corrupt the lease")
			}
		case 4:
			if os.Truncate(s.lease, 0) == nil {
				s.count(s.rep.Chaos, "truncate the lease")
			}
		case 5:
			doc := `{"schema":"majordomus-mcp-lease/v1","pid":999999,"instance":"0123456789abcdef0123456789abcdef","url":"http://127.0.0.1:9"}`
			if os.WriteFile(s.lease, []byte(doc), 0o600) == nil {
				s.count(s.rep.Chaos, "replace the lease")
			}
		case 6:
			swaps++
			if os.Rename(mcpDir, fmt.Sprintf("%s.swapped-%d", mcpDir, swaps)) == nil && os.MkdirAll(mcpDir, 0o700) == nil {
				s.count(s.rep.Chaos, "swap the lease directory away")
			}
		case 7:
			s.fileForDirectory(ctx, mcpDir)
		case 8:
			s.truncateTwice(ctx)
		case 9:
			s.floodSessions(ctx)
		case 10:
			s.hostExit(ctx)
		case 11:
			s.editLayer(ctx)
		}
	}
}

// pause waits d, the length of a harm (not a wait for an event), or until
// ctx ends; it says whether the soak goes on.
func pause(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// cont continues a stopped client.
func (s *soaker) cont(c *pipeClient) {
	s.mu.Lock()
	stopped := s.stopped[c]
	delete(s.stopped, c)
	s.mu.Unlock()
	if stopped {
		_ = c.proc.Signal(syscall.SIGCONT)
	}
}

// leaseholder is the client whose process the lease names, or nil.
func (s *soaker) leaseholder() *pipeClient {
	var doc struct{ PID int }
	raw, err := os.ReadFile(s.lease)
	if err != nil || json.Unmarshal(raw, &doc) != nil {
		return nil
	}
	for _, c := range s.live() {
		if c.pid() == doc.PID {
			return c
		}
	}
	return nil
}

// leaseURL is the URL the lease names, or "".
func leaseURL(lease string) string {
	var doc struct{ URL string }
	if raw, err := os.ReadFile(lease); err == nil {
		_ = json.Unmarshal(raw, &doc)
	}
	return doc.URL
}

// watchAdmission samples, every 250 ms, how many servers of the checkout
// say they hold the lease, which is when they admit new sessions, and the
// peak RSS of the process the lease names.
func (s *soaker) watchAdmission(ctx context.Context) {
	probe := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 300 * time.Millisecond}
	for pause(ctx, 250*time.Millisecond) {
		urls := map[string]bool{}
		for _, c := range s.live() {
			for _, line := range c.proc.Logs() {
				if !strings.Contains(line, "shared server listening on") {
					continue
				}
				if url, err := logField[string](line, "url"); err == nil {
					urls[url] = true
				}
			}
		}
		admitting := 0
		for u := range urls {
			resp, err := probe.Get(u + "/")
			if err != nil {
				continue
			}
			var id struct{ Leaseholder bool }
			_ = json.NewDecoder(resp.Body).Decode(&id)
			resp.Body.Close()
			if id.Leaseholder {
				admitting++
			}
		}
		if c := s.leaseholder(); c != nil {
			if kb, err := procFile(fmt.Sprintf("/proc/%d/status", c.pid()), "VmHWM"); err == nil {
				raise(&s.leaseholdRS, int64(kb))
			}
		}
		s.rep.Samples++
		if admitting > 1 {
			s.rep.TwoAdmitting++
		}
	}
}
