package wire

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"
)

// Cancels are the 2026-07-28 requests being answered, by id: that
// revision's client cancels one with notifications/cancelled, and it is
// then answered nothing, in process as over HTTP (where a bridge closes
// its stream). The zero Cancels is ready.
type Cancels struct{ m sync.Map }

type cancelling struct {
	cancel context.CancelFunc
	// state is under way, cancelled or ended; each of Cancel and end
	// moves it from under way once, so they agree on which came first.
	state atomic.Int32
}

const (
	stateUnderWay int32 = iota
	stateCancelled
	stateEnded
)

// Begin records the request id, answered under ctx. The context it
// returns ends when the client cancels the request; end forgets it and
// reports whether the client cancelled it first.
func (c *Cancels) Begin(ctx context.Context, id json.RawMessage) (context.Context, func() (cancelled bool)) {
	ctx, cancel := context.WithCancel(ctx)
	key, r := IDKey(id), &cancelling{cancel: cancel}
	c.m.Store(key, r)
	return ctx, func() bool {
		r.state.CompareAndSwap(stateUnderWay, stateEnded)
		c.m.CompareAndDelete(key, r)
		cancel()
		return r.state.Load() == stateCancelled
	}
}

// Cancel cancels the request that params, a notifications/cancelled's,
// names, and reports whether it did so before the request ended: when
// not, whatever the request went on to has it, and may be told.
func (c *Cancels) Cancel(params json.RawMessage) bool {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	v, ok := c.m.Load(IDKey(p.RequestID))
	if !ok {
		return false
	}
	r := v.(*cancelling)
	if r.state.CompareAndSwap(stateUnderWay, stateCancelled) {
		r.cancel()
	}
	return r.state.Load() == stateCancelled
}

// IDKey is how an id is known, however its client spelled it: as mcp-go
// reads ids, decoded (5.0 is 5, "\u0061" is "a"; Screen lets by only
// numbers a float64 holds exactly), which is how mcp-go writes its
// answer's id back.
func IDKey(id json.RawMessage) string {
	var v any
	_ = json.Unmarshal(id, &v)
	switch v := v.(type) {
	case string:
		return "s" + v
	case float64:
		return "n" + strconv.FormatFloat(v, 'g', -1, 64) // -0 is not 0 to mcp-go either
	}
	return string(id)
}
