package surface

import "fmt"

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
