//go:build unix

package together

import (
	"context"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// An initialize whose client hung up while it was handled leaves no
// session behind that nothing ends: mcp-go, finding its request's context
// ended, returned without registering the session or naming it, and the
// peer its initialize had put on the board (surface's AfterInitialize)
// stayed there for good. Now every initialized session is either ended or
// registered, and then live until it ends or idles out. Three hundred
// clients write an initialize and reset their connections before the
// server takes them (which Windows, unlike Unix, may never let it do).
func TestAnInitializeWhoseClientHungUpWhileItWasHandledLeavesNoPeer(t *testing.T) {
	f := newFixture()
	var mu sync.Mutex
	initialized, ended := map[string]bool{}, map[string]bool{}
	f.hooks.AddAfterInitialize(func(ctx context.Context, _ any, _ *mcp.InitializeRequest, _ *mcp.InitializeResult) {
		if s := server.ClientSessionFromContext(ctx); s != nil {
			mu.Lock()
			initialized[s.SessionID()] = true
			mu.Unlock()
		}
	})
	f.hooks.AddOnUnregisterSession(func(_ context.Context, s server.ClientSession) {
		mu.Lock()
		ended[s.SessionID()] = true
		mu.Unlock()
	})
	for range 3 { // a hundred at a time: what a listen backlog holds everywhere
		hangUpInitializes(t, f, 100, true)
	}
	mu.Lock()
	defer mu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	for id := range initialized {
		if _, registered := f.sessions[id]; !ended[id] && !registered {
			t.Errorf("session %s was initialized, and neither ended nor registered (of %d initialized)", id, len(initialized))
		}
	}
}
