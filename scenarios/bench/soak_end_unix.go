//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"time"
)

// The end of a soak: the harms' effects are undone, every client is
// brought to one board, and what is left is counted.

// settle ends the chaos's effects, lets every client converge with one
// call, checks where each is served, and closes them all.
func (s *soaker) settle() {
	s.mu.Lock()
	stopped := slices.Collect(maps.Keys(s.stopped))
	s.mu.Unlock()
	for _, c := range stopped {
		s.cont(c)
	}
	live := s.live()
	sort.Slice(live, func(i, j int) bool { return live[i].pid() < live[j].pid() })
	s.rep.ClientsAtTheEnd = len(live)
	served := s.converge(live)
	url := leaseURL(s.lease)
	if raw, err := os.ReadFile(s.lease); err == nil {
		var shown map[string]any
		if json.Unmarshal(raw, &shown) == nil {
			shown["secret"] = "(not shown)" // a report is published; a lease's secret never is
			raw, _ = json.Marshal(shown)
		}
		s.rep.EndLease = string(raw)
	}
	for _, c := range live {
		s.rep.EndServed = append(s.rep.EndServed, fmt.Sprintf("pid %d: at %q", c.pid(), served[c]))
		if url == "" || served[c] != url {
			s.rep.OffBoard++
		}
	}
	if len(live) > 0 {
		board, err := boardOf(live[0])
		for _, p := range board.Peers {
			if p.Attached {
				s.rep.OnTheBoard++
				s.rep.EndBoard = append(s.rep.EndBoard, string(p.raw))
			}
		}
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
			_ = callTool(ctx, c, "majordomus_peers", nil, nil) // its next message: it converges
			var server struct {
				URL  *string `json:"url"`
				Role string  `json:"role"`
			}
			err := callTool(ctx, c, "majordomus_server", nil, &server)
			cancel()
			if err == nil && server.Role == "alone" {
				alone++
			}
			if err == nil && server.URL != nil {
				served[c] = *server.URL
				boards[served[c]] = true
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
