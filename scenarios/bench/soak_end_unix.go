//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"time"
)

// The end of a soak: the harms' effects are undone, every client is
// brought to one board, and what is left is counted.

// settle ends the chaos's effects, lets every client converge with one
// call, checks where each is served, and closes them all.
func (s *soaker) settle() {
	s.mu.Lock()
	var stopped []*pipeClient
	for c := range s.stopped {
		stopped = append(stopped, c)
	}
	live := make([]*pipeClient, 0, len(s.clients))
	for _, c := range s.clients {
		if c != nil && !c.hasExited() {
			live = append(live, c)
		}
	}
	s.mu.Unlock()
	for _, c := range stopped {
		s.cont(c)
	}
	sort.Slice(live, func(i, j int) bool { return live[i].pid() < live[j].pid() })
	s.rep.ClientsAtTheEnd = len(live)
	served := s.converge(live)
	var doc struct{ URL string }
	if raw, err := os.ReadFile(s.lease); err == nil {
		_ = json.Unmarshal(raw, &doc)
		var shown map[string]any
		if json.Unmarshal(raw, &shown) == nil {
			shown["secret"] = "(not shown)" // a report is published; a lease's secret never is
			raw, _ = json.Marshal(shown)
		}
		s.rep.EndLease = string(raw)
	}
	for _, c := range live {
		s.rep.EndServed = append(s.rep.EndServed, fmt.Sprintf("pid %d: at %q", c.pid(), served[c]))
		if doc.URL == "" || served[c] != doc.URL {
			s.rep.OffBoard++
		}
	}
	if len(live) > 0 {
		n, err := boardOf(live[0])
		s.rep.OnTheBoard = n
		if err != nil {
			s.sample("other: the board at the end", err.Error())
		}
	}
	for _, c := range live {
		_ = c.proc.CloseStdin()
	}
	for _, c := range live {
		if !c.waitExit(30 * time.Second) {
			s.rep.LeftProcesses++
			c.kill()
		}
	}
	_, err := os.Stat(s.lease)
	s.rep.LeftLease = err == nil
}

// settleBound is how long the end of a soak waits for every client to be
// on one board: past the longest wait of a client served alone (8 s) and
// an election.
const settleBound = 40 * time.Second

// converge asks every live client, once a second, what serves it, until
// all answer, served by the server the lease names, none alone, or
// settleBound passes; it records the boards and the clients alone it saw
// last, and how long it took.
func (s *soaker) converge(live []*pipeClient) map[*pipeClient]string {
	began := time.Now()
	var served map[*pipeClient]string
	for {
		served = map[*pipeClient]string{}
		boards, alone := map[string]bool{}, 0
		for _, c := range live {
			ctx, cancel := context.WithTimeout(context.Background(), 2*callBound)
			_, _ = c.call(ctx, "tools/call", toolParams("majordomus_peers", map[string]any{})) // its next message: it converges
			res, err := c.call(ctx, "tools/call", toolParams("majordomus_server", map[string]any{}))
			cancel()
			var out struct {
				StructuredContent struct {
					URL  *string `json:"url"`
					Role string  `json:"role"`
				} `json:"structuredContent"`
			}
			if err == nil && json.Unmarshal(res, &out) == nil {
				if out.StructuredContent.Role == "alone" {
					alone++
				}
				if out.StructuredContent.URL != nil {
					served[c] = *out.StructuredContent.URL
					boards[served[c]] = true
				}
			}
		}
		lease := leaseURL(s.lease)
		// every client answered, and by the lease's server: a client whose
		// question went unanswered is not on the board
		one := alone == 0 && len(served) == len(live) && len(boards) == 1 && boards[lease]
		if one || time.Since(began) > settleBound {
			s.rep.Boards, s.rep.AloneAtTheEnd = len(boards)+alone, alone
			s.rep.SettledSeconds = time.Since(began).Seconds()
			return served
		}
		time.Sleep(time.Second) // the pace of the question, not a wait for an event
	}
}

// leaseURL is the URL the lease names, or "".
func leaseURL(lease string) string {
	var doc struct{ URL string }
	if raw, err := os.ReadFile(lease); err == nil {
		_ = json.Unmarshal(raw, &doc)
	}
	return doc.URL
}

// boardOf counts the attached peers on the board c is served by.
func boardOf(c *pipeClient) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), callBound)
	defer cancel()
	res, err := c.call(ctx, "tools/call", toolParams("majordomus_peers", map[string]any{}))
	if err != nil {
		return 0, err
	}
	var out struct {
		StructuredContent struct {
			Peers []struct{ Attached bool } `json:"peers"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(res, &out); err != nil {
		return 0, fmt.Errorf("majordomus_peers: %w", err)
	}
	n := 0
	for _, p := range out.StructuredContent.Peers {
		if p.Attached {
			n++
		}
	}
	return n, nil
}
