package surface

import (
	"sync"
	"time"
)

// executionsKept bounds the history.
const executionsKept = 256

// Execution is one tool call answered by this server.
type Execution struct {
	Tool       string    `json:"tool"`
	Peer       string    `json:"peer"`
	At         time.Time `json:"at"`
	DurationMS float64   `json:"duration_ms"`
	OK         bool      `json:"ok"`
}

// Executions is the recent tool-call history, newest last. It is safe for
// concurrent use.
type Executions struct {
	mu   sync.Mutex
	ring []Execution
}

// Record adds one call, dropping the oldest past the bound.
func (e *Executions) Record(x Execution) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ring = append(e.ring, x)
	if len(e.ring) > executionsKept {
		e.ring = append(e.ring[:0:0], e.ring[len(e.ring)-executionsKept:]...)
	}
}

// Recent returns up to limit calls, newest first.
func (e *Executions) Recent(limit int) []Execution {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Execution, 0, min(limit, len(e.ring)))
	for i := len(e.ring) - 1; i >= 0 && len(out) < limit; i-- {
		out = append(out, e.ring[i])
	}
	return out
}
