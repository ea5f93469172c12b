package node

import (
	"encoding/json"
	"sync"

	"go.uber.org/zap/zapcore"
)

// logTap keeps a node's log lines as JSON and says when one is added.
// What is hooked on a message runs as it is logged, in the logging code.
type logTap struct {
	zapcore.Core
	mu    *sync.Mutex
	all   *[]string
	added *chan struct{}
	hooks map[string]func()
}

func newLogTap() logTap {
	added := make(chan struct{})
	return logTap{Core: zapcore.NewNopCore(), mu: &sync.Mutex{}, all: &[]string{}, added: &added, hooks: map[string]func(){}}
}

// hook runs f whenever msg is logged, before the logging call returns.
func (l logTap) hook(msg string, f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hooks[msg] = f
}

func (l logTap) Enabled(zapcore.Level) bool { return true }

func (l logTap) With(fields []zapcore.Field) zapcore.Core { return l } // the tests log no With fields

func (l logTap) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	return ce.AddCore(ent, l)
}

func (l logTap) Write(ent zapcore.Entry, fields []zapcore.Field) error {
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range fields {
		f.AddTo(enc)
	}
	enc.Fields["msg"] = ent.Message
	line, _ := json.Marshal(enc.Fields)
	l.mu.Lock()
	*l.all = append(*l.all, string(line))
	close(*l.added)
	*l.added = make(chan struct{})
	hook := l.hooks[ent.Message]
	l.mu.Unlock()
	if hook != nil {
		hook()
	}
	return nil
}

func (l logTap) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), *l.all...)
}

func (l logTap) changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return *l.added
}

// fresh is the same checkout as another process would see it: nothing
// loaded yet.
func (co *Checkout) fresh() *Checkout {
	return &Checkout{Root: co.Root, RootID: co.RootID, Manifest: co.Manifest, Profile: co.Profile, Strict: co.Strict, Registry: co.Registry, Logger: co.Logger, peerNumbers: co.peerNumbers}
}
