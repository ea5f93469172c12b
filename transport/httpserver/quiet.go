package httpserver

import (
	"sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Quiet returns log, writing each of its messages at most once a second
// (by the entries' clock), and counting what it held back into the next
// line of that message (unlogged): for the refusals that anyone who can
// reach the port may cause, no token asked, which would otherwise fill a
// log, and the host's copy of it, as fast as they are sent. Its messages
// must be a few constant texts: it remembers each.
func Quiet(log *zap.Logger) *zap.Logger {
	held := &heldBack{last: map[string]time.Time{}, count: map[string]int{}}
	return log.WithOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core { return quietCore{c, held} }))
}

// quietCore writes through heldBack's judgement.
type quietCore struct {
	zapcore.Core
	held *heldBack
}

func (q quietCore) With(fields []zapcore.Field) zapcore.Core {
	return quietCore{q.Core.With(fields), q.held}
}

func (q quietCore) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if !q.Enabled(ent.Level) {
		return ce
	}
	return ce.AddCore(ent, q)
}

func (q quietCore) Write(ent zapcore.Entry, fields []zapcore.Field) error {
	unlogged, write := q.held.judge(ent.Message, ent.Time)
	if !write {
		return nil
	}
	if unlogged > 0 {
		fields = append(fields, zap.Int("unlogged", unlogged))
	}
	return q.Core.Write(ent, fields)
}

// heldBack is when each message was last written, and how many of it were
// held back since.
type heldBack struct {
	mu    sync.Mutex
	last  map[string]time.Time
	count map[string]int
}

// judge reports whether message, at now, is written, and how many of it
// were held back before.
func (h *heldBack) judge(message string, now time.Time) (unlogged int, write bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if last, ok := h.last[message]; ok && now.Sub(last) < time.Second {
		h.count[message]++
		return 0, false
	}
	unlogged = h.count[message]
	h.last[message], h.count[message] = now, 0
	return unlogged, true
}
