package node

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/majordomus-mcp/majordomus-mcp/machine"
	"github.com/majordomus-mcp/majordomus-mcp/surface"
)

// boardSource is what the shared server's board page shows
// (board.Source): the surface's own answers, and the machine's graph with
// this process's state.
type boardSource struct {
	*surface.Surface
	state func() machine.State
	// graph is machine.Graph("json"), compacted: rendered once, when a
	// page first asks, not at every server's start.
	graph func() ([]byte, error)
}

func newBoardSource(s *surface.Surface, state func() machine.State) *boardSource {
	return &boardSource{Surface: s, state: state, graph: sync.OnceValues(func() ([]byte, error) {
		g, err := machine.Graph("json")
		if err != nil {
			return nil, fmt.Errorf("rendering the machine's graph: %w", err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte(g)); err != nil {
			return nil, fmt.Errorf("rendering the machine's graph: %w", err)
		}
		return compact.Bytes(), nil
	})}
}

// GraphJSON is the graph `majordomus-mcp graph --format json` prints (its
// bytes, compacted), with the state this process is in now.
func (b *boardSource) GraphJSON() ([]byte, error) {
	graph, err := b.graph()
	if err != nil {
		return nil, err
	}
	state, err := json.Marshal(b.state())
	if err != nil {
		return nil, err
	}
	out := append([]byte(`{"state":`), state...)
	out = append(append(out, `,"graph":`...), graph...)
	return append(out, '}'), nil
}

// Changes is the surface's generation, what majordomus_server says but
// its uptime (its findings, a layer withheld among them, which the
// surface does not signal) and this process's state: the surface signals
// its own changes, and the page's stream reads the rest on its
// keep-alive.
func (b *boardSource) Changes() (string, <-chan struct{}) {
	gen, next := b.Surface.Changes()
	report := b.Report()
	report.UptimeSeconds = 0
	said, err := json.Marshal(report)
	if err != nil {
		said = []byte(err.Error())
	}
	sum := sha256.Sum256(said)
	return fmt.Sprintf("%d %x %s", gen, sum[:8], b.state()), next
}
