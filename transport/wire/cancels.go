package wire

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
)

// Cancels are the 2026-07-28 requests being answered, by id: that
// revision's client cancels one with notifications/cancelled, and it is
// then answered nothing, in process as over HTTP (where a bridge closes
// its stream). The zero Cancels is ready.
type Cancels struct{ m sync.Map }

type cancelling struct {
	cancel    context.CancelFunc
	cancelled atomic.Bool
}

// Begin records the request id, answered under ctx. The context it
// returns ends when the client cancels the request; end forgets it and
// reports whether the client cancelled it.
func (c *Cancels) Begin(ctx context.Context, id json.RawMessage) (context.Context, func() (cancelled bool)) {
	ctx, cancel := context.WithCancel(ctx)
	key, r := string(id), &cancelling{cancel: cancel}
	c.m.Store(key, r)
	return ctx, func() bool {
		c.m.CompareAndDelete(key, r)
		cancel()
		return r.cancelled.Load()
	}
}

// Cancel cancels the request that params, a notifications/cancelled's,
// names, and reports whether it was being answered.
func (c *Cancels) Cancel(params json.RawMessage) bool {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	v, ok := c.m.Load(string(p.RequestID))
	if ok {
		v.(*cancelling).cancelled.Store(true)
		v.(*cancelling).cancel()
	}
	return ok
}
