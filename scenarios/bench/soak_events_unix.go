//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// The soak's harms that found the holes of sharing that stayed broken
// (issue 21): each runs in the chaos loop, which waits for it, so that
// two of them never overlap on the lease directory.

// fileForDirectory kills the leaseholder and, while its bridges elect,
// puts a file where the lease directory was for 2 s, then puts the
// directory back: the clients served alone meanwhile must join again.
func (s *soaker) fileForDirectory(ctx context.Context, mcpDir string) {
	if c := s.leaseholder(); c != nil {
		s.mark(s.harmed, c)
		_ = c.proc.Signal(syscall.SIGKILL)
	}
	away := mcpDir + ".file-swap"
	if os.Rename(mcpDir, away) != nil {
		return
	}
	if err := os.WriteFile(mcpDir, []byte("not a directory"), 0o600); err != nil {
		_ = os.Rename(away, mcpDir)
		return
	}
	s.count(s.rep.Chaos, "kill -9 the leaseholder, a file for its lease directory for 2 s")
	pause(ctx, 2*time.Second)
	_ = os.Remove(mcpDir)
	_ = os.Rename(away, mcpDir)
}

// truncateTwice empties the lease twice within the bind grace (2 s in the
// soak): an empty lease is taken over at once, and touching it never
// re-arms a wait.
func (s *soaker) truncateTwice(ctx context.Context) {
	if os.Truncate(s.lease, 0) != nil || !pause(ctx, time.Second) {
		return
	}
	_ = os.Truncate(s.lease, 0)
	s.count(s.rep.Chaos, "truncate the lease twice, 1 s apart")
}

// floodSessions opens HTTP sessions on the current server until it says
// it is full (503), keeps them for 3 s, and ends them: a client that
// meets it meanwhile is served alone and tries it again as it asks, never
// in a spin. The end of the soak stops it between initializes, never
// during one (floodToCap).
func (s *soaker) floodSessions(ctx context.Context) {
	d, err := s.server(2 * time.Second)
	if err != nil {
		return
	}
	defer d.close()
	sessions, full := floodToCap(ctx, d)
	if full {
		s.count(s.rep.Chaos, "flood the server's sessions to its cap for 3 s")
		pause(ctx, 3*time.Second)
	}
	d.endAll(sessions)
}

// server is a direct HTTP client of the server the lease names, as a user
// of the checkout finds it (the URL and the header from majordomus-mcp
// status), whose requests each wait at most timeout: a soak client's stdio
// is read by its own goroutine only.
func (s *soaker) server(timeout time.Duration) (*directClient, error) {
	url := leaseURL(s.lease)
	auth, err := s.b.authorization(s.dir)
	if url == "" || err != nil {
		return nil, fmt.Errorf("no server to ask (%v)", err)
	}
	d := newDirectClient(url, auth)
	d.hc.Timeout = timeout
	return d, nil
}

// The soak's harms of a take-over that must lose nothing (issue 22): the
// leaseholder ended as each host ends its server, a layer edit that every
// client must hear of, and the history it must keep.

// hostExit ends the leaseholder as one of the hosts ends its stdio
// server: Claude Code with SIGINT, Gemini CLI with SIGTERM, Codex CLI by
// closing stdin, then SIGTERM, then SIGKILL about 30 ms later. Before, it
// notes the newest execution of the history; once a leaseholder serves
// again, it checks that the history still holds it (checkHistory).
func (s *soaker) hostExit(ctx context.Context) {
	c := s.leaseholder()
	if c == nil {
		return
	}
	before, err := s.executions()
	s.mark(s.harmed, c)
	switch s.rng.IntN(3) {
	case 0:
		_ = c.proc.Signal(syscall.SIGINT)
		s.count(s.rep.Chaos, "end the leaseholder as Claude Code does (SIGINT)")
	case 1:
		_ = c.proc.Signal(syscall.SIGTERM)
		s.count(s.rep.Chaos, "end the leaseholder as Gemini CLI does (SIGTERM)")
	default:
		_ = c.proc.CloseStdin()
		_ = c.proc.Signal(syscall.SIGTERM)
		time.AfterFunc(30*time.Millisecond, func() { _ = c.proc.Signal(syscall.SIGKILL) })
		s.count(s.rep.Chaos, "end the leaseholder as Codex CLI does (stdin EOF, SIGTERM, SIGKILL 30 ms later)")
	}
	if err == nil && len(before) > 0 {
		s.checkHistory(ctx, c, before)
	}
}

// execution is one entry of majordomus_executions.
type execution struct {
	Tool string    `json:"tool"`
	Peer string    `json:"peer"`
	At   time.Time `json:"at"`
}

// executions asks the server the lease names for its history, newest
// first.
func (s *soaker) executions() ([]execution, error) {
	d, err := s.server(5 * time.Second)
	if err != nil {
		return nil, err
	}
	defer d.close()
	ctx := context.Background() // each request waits at most 5 s
	if err := handshake(ctx, d, "soak-history"); err != nil {
		return nil, err
	}
	var out struct {
		Executions []execution `json:"executions"`
	}
	err = callTool(ctx, d, "majordomus_executions", map[string]any{"limit": historyAsked}, &out)
	return out.Executions, err
}

// historyAsked is how many executions a check asks for: the most the
// tool gives, and all the history keeps (surface.MaxExecutionsLimit).
const historyAsked = 1000

// checkHistory waits (at most a call's bound) for a leaseholder other
// than gone to serve, then asks one of its clients for the history: it
// must hold no fewer records than before, and reach back to before's
// newest, unless more calls than it shows were made meanwhile (which says
// nothing either way).
func (s *soaker) checkHistory(ctx context.Context, gone *pipeClient, beforeAll []execution) {
	before := beforeAll[0]
	// Asked until a leaseholder other than gone answers, within a call's
	// bound: right after a take-over, the lease may name one not yet
	// serving, or none.
	deadline := time.Now().Add(callBound)
	var h []execution
	var err error
	for {
		if c := s.leaseholder(); c != nil && c != gone {
			if h, err = s.executions(); err == nil {
				break
			}
		} else {
			err = errors.New("no other leaseholder yet")
		}
		if !time.Now().Before(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond) // the pace of the question, not a wait for an event
	}
	if err == nil && len(h) < len(beforeAll) {
		s.count(s.rep.History, "lost: fewer records than before")
		s.sample("fewer history records after a take-over", fmt.Sprintf("%d before, %d after", len(beforeAll), len(h)))
	}
	switch {
	case err != nil && ctx.Err() != nil: // the soak ended before anyone could serve
		s.count(s.rep.History, "not checked: the soak ended first")
	case err != nil:
		s.count(s.rep.History, "inconclusive: the history could not be read")
		s.sample("history unread after a take-over", err.Error())
	case len(h) == 0:
		s.count(s.rep.History, "lost: empty after a take-over")
	case !h[len(h)-1].At.After(before.At):
		s.count(s.rep.History, "kept across a take-over")
	case len(h) >= historyAsked:
		s.count(s.rep.History, "inconclusive: more calls since than the tool shows")
	default:
		s.count(s.rep.History, "lost: the history starts after the take-over")
		s.sample("history lost across a take-over", fmt.Sprintf("newest before: %+v; oldest after: %+v", before, h[len(h)-1]))
	}
}

// editLayer edits a layer file while a leaseholder serves and none is
// stopped, then waits (a call's bound: one whose session moves is told
// after an election) for every client handshaken before it to read a
// resources/list_changed after it; those that do not lost a notification.
func (s *soaker) editLayer(ctx context.Context) {
	var listening []*pipeClient
	for _, c := range s.live() {
		if !s.is(s.harmed, c) && s.is(s.ready, c) {
			listening = append(listening, c)
		}
	}
	s.mu.Lock()
	stopped := len(s.stopped) > 0
	s.mu.Unlock()
	if stopped || s.leaseholder() == nil || len(listening) == 0 {
		return
	}
	path := filepath.Join(s.dir, ".ai/repo/prompts/review.md")
	edited := time.Now()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return
	}
	_, err = fmt.Fprintf(f, "- soak edit %d\n", edited.UnixNano())
	f.Close()
	if err != nil {
		return
	}
	s.count(s.rep.Chaos, "edit a layer file")
	const method = "notifications/resources/list_changed"
	deadline := edited.Add(callBound)
	for _, c := range listening {
		for !c.heardSince(method, edited) && time.Now().Before(deadline) && ctx.Err() == nil && !c.hasExited() {
			time.Sleep(20 * time.Millisecond) // the pace of the question, not a wait for an event
		}
		switch {
		case c.heardSince(method, edited):
			s.notified.Add(1)
		case s.is(s.harmed, c) || c.hasExited() || ctx.Err() != nil:
		default:
			s.lost.Add(1)
			s.sample("a notification lost", fmt.Sprintf("pid %d heard no %s within %s of an edit; its log: %s", c.pid(), method, callBound, c.tail(8)))
		}
	}
}
