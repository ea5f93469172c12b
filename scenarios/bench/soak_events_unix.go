//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
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
		s.harm(c)
		_ = c.cmd.Process.Signal(syscall.SIGKILL)
	}
	away := mcpDir + ".file-swap"
	if os.Rename(mcpDir, away) != nil {
		return
	}
	if err := os.WriteFile(mcpDir, []byte("not a directory"), 0o600); err != nil {
		_ = os.Rename(away, mcpDir)
		return
	}
	s.count(s.chaos, "kill -9 the leaseholder, a file for its lease directory for 2 s")
	select { // the harm's own length, not a wait for an event
	case <-ctx.Done():
	case <-time.After(2 * time.Second):
	}
	_ = os.Remove(mcpDir)
	_ = os.Rename(away, mcpDir)
}

// truncateTwice empties the lease twice within the bind grace (2 s in the
// soak): an empty lease is taken over at once, and touching it never
// re-arms a wait.
func (s *soaker) truncateTwice(ctx context.Context) {
	if os.Truncate(s.lease, 0) != nil {
		return
	}
	select {
	case <-ctx.Done():
		return
	case <-time.After(time.Second):
	}
	_ = os.Truncate(s.lease, 0)
	s.count(s.chaos, "truncate the lease twice, 1 s apart")
}

// floodSessions opens HTTP sessions on the current server until it says
// it is full (503), keeps them for 3 s, and ends them: a client that
// elects meanwhile must wait as the server asks, never spin.
func (s *soaker) floodSessions(ctx context.Context) {
	url := s.leaseURL()
	auth, err := s.b.authorization(s.dir) // as a user finds it: majordomus-mcp status
	if url == "" || err != nil {
		return
	}
	client := &http.Client{Timeout: 2 * time.Second}
	var sessions []string
	full := false
	for range floodBound {
		sid, status := openSession(client, url, auth)
		if status == http.StatusServiceUnavailable {
			full = true
			break
		}
		if sid == "" {
			break
		}
		sessions = append(sessions, sid)
	}
	if full {
		s.count(s.chaos, "flood the server's sessions to its cap for 3 s")
		select {
		case <-ctx.Done():
		case <-time.After(3 * time.Second):
		}
	}
	for _, sid := range sessions {
		req, _ := http.NewRequest(http.MethodDelete, url+"/mcp", nil)
		req.Header.Set("Authorization", auth)
		req.Header.Set("Mcp-Session-Id", sid)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
		}
	}
}

// floodBound bounds the sessions a flood opens: past the servers' cap.
const floodBound = 1024

// openSession opens one session and says its id and the HTTP status.
func openSession(client *http.Client, url, auth string) (string, int) {
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"soak-flood","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", auth)
	resp, err := client.Do(req)
	if err != nil {
		return "", 0
	}
	defer resp.Body.Close()
	return resp.Header.Get("Mcp-Session-Id"), resp.StatusCode
}

// settleBound is how long the end of a soak waits for every client to be
// on one board: past the longest wait of a client served alone (8 s) and
// an election.
const settleBound = 40 * time.Second

// converge asks every live client, once a second, what serves it, until
// all are served by the server the lease names and none is alone, or
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
		lease := s.leaseURL()
		one := alone == 0 && len(boards) == 1 && boards[lease]
		if one || time.Since(began) > settleBound {
			s.rep.Boards, s.rep.AloneAtTheEnd = len(boards)+alone, alone
			s.rep.SettledSeconds = time.Since(began).Seconds()
			return served
		}
		time.Sleep(time.Second) // the pace of the question, not a wait for an event
	}
}

// leaseURL is the URL the lease names, or "".
func (s *soaker) leaseURL() string {
	var doc struct{ URL string }
	if raw, err := os.ReadFile(s.lease); err == nil {
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
