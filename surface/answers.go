package surface

import (
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// The board page's endpoints (transport's /board/api) answer what the
// read-only tools answer: the same views, marshalled the same way, so a
// script reading either gets the same bytes. The page is no peer: its
// peers answer names no caller ("").

// DefaultExecutionsLimit and MaxExecutionsLimit bound majordomus_executions'
// limit, and the endpoint's.
const (
	DefaultExecutionsLimit = 50
	MaxExecutionsLimit     = executionsKept
)

// peersView is majordomus_peers' answer for caller.
type peersView struct {
	Count    int    `json:"count"`
	Departed int    `json:"departed"`
	Caller   string `json:"caller"`
	Peers    []Peer `json:"peers"`
}

func (s *Surface) peersView(caller string) peersView {
	peers, count := s.Board.Peers()
	return peersView{Count: count, Departed: len(peers) - count, Caller: caller, Peers: peers}
}

// executionsView is majordomus_executions' answer.
type executionsView struct {
	Count      int         `json:"count"`
	Executions []Execution `json:"executions"`
}

func (s *Surface) executionsView(limit int) executionsView {
	recent := s.Executions.Recent(limit)
	return executionsView{len(recent), recent}
}

// PeersJSON is majordomus_peers' JSON as a caller that is no peer reads it.
func (s *Surface) PeersJSON() ([]byte, error) { return textJSON(s.peersView("")) }

// ExecutionsJSON is majordomus_executions' JSON for limit, which must be
// within [1, MaxExecutionsLimit].
func (s *Surface) ExecutionsJSON(limit int) ([]byte, error) {
	if limit < 1 || limit > MaxExecutionsLimit {
		return nil, fmt.Errorf("limit must be between 1 and %d", MaxExecutionsLimit)
	}
	return textJSON(s.executionsView(limit))
}

// ServerJSON is majordomus_server's JSON.
func (s *Surface) ServerJSON() ([]byte, error) { return textJSON(s.Report()) }

// OverlapsJSON is the pairs of attached announcers whose scopes overlap,
// by the rule majordomus_announce answers with: {"count":n,"overlaps":[…]},
// n counting them all, the list the first (Board.Overlaps).
func (s *Surface) OverlapsJSON() ([]byte, error) {
	pairs, count := s.Board.Overlaps()
	return textJSON(struct {
		Count    int           `json:"count"`
		Overlaps []OverlapPair `json:"overlaps"`
	}{count, pairs})
}

// ServerReport is the answer of majordomus_server.
type ServerReport struct {
	Name          string  `json:"name"`
	PID           int     `json:"pid"`
	Role          string  `json:"role"`
	URL           *string `json:"url"`
	Leaseholder   bool    `json:"leaseholder"`
	Sessions      int     `json:"sessions"`
	HTTPSessions  int     `json:"http_sessions"`
	UptimeSeconds float64 `json:"uptime_seconds"`
	LeasePath     *string `json:"lease_path"`
	Profile       string  `json:"profile"`
	Version       string  `json:"version"`
	Checkout      string  `json:"checkout"`
	RepositoryID  string  `json:"repository_id"`
	Generation    uint64  `json:"generation"`
	// LayerState is the index's state: ok, or degraded.
	LayerState string `json:"layer_state"`
	// ProtocolRevisions are the MCP revisions this server serves, newest
	// first.
	ProtocolRevisions []string `json:"protocol_revisions"`
	Findings          []string `json:"findings"`
	// LogLinesDropped is how many log lines this process's stderr lost
	// because its host did not read them (docs/design.md#sharing-heals).
	LogLinesDropped uint64 `json:"log_lines_dropped"`
}

// Report describes this process now.
func (s *Surface) Report() ServerReport {
	proc := s.cfg.Process()
	ix := s.cfg.Layer.Current()
	r := ServerReport{
		Name:          Name,
		PID:           os.Getpid(),
		Role:          proc.Role,
		Leaseholder:   proc.Leaseholder,
		Sessions:      s.Sessions(),
		HTTPSessions:  proc.HTTPSessions,
		UptimeSeconds: s.cfg.Now().Sub(s.started).Round(time.Millisecond).Seconds(),
		Profile:       proc.Profile,
		Version:       s.cfg.Version,
		Checkout:      ix.Name,
		RepositoryID:  ix.RepositoryID,
		Generation:    ix.Generation,
		LayerState:    ix.State(),
		Findings:      proc.Findings,

		ProtocolRevisions: slices.Clone(mcp.ValidProtocolVersions),
	}
	if s.cfg.LogLinesDropped != nil {
		r.LogLinesDropped = s.cfg.LogLinesDropped()
	}
	if proc.URL != "" {
		r.URL = &proc.URL
	}
	if proc.LeasePath != "" {
		r.LeasePath = &proc.LeasePath
	}
	if proc.Alone != "" {
		r.Findings = append(slices.Clip(r.Findings), AloneNotice(proc.Alone))
	}
	if why := s.cfg.Layer.Withheld(); why != "" {
		r.Findings = append(slices.Clip(r.Findings), why)
	}
	if r.Findings == nil {
		r.Findings = []string{}
	}
	return r
}
