package node

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
)

// The tool calls of this process's client are each named once, however
// often one is sent (carry.WithCall): by a random prefix, drawn once and
// unlike any other process's, and a count.
var (
	callPrefix = sync.OnceValue(secret.NewChallenge) // random hex, as a challenge is
	callCount  atomic.Uint64
)

// naming is ctx naming the call a message of method makes: a tool call
// that ctx names none for yet (a message sent again keeps its key).
func naming(ctx context.Context, method string) context.Context {
	if method != string(mcp.MethodToolsCall) || carry.Call(ctx) != "" {
		return ctx
	}
	return carry.WithCall(ctx, callPrefix()+"."+strconv.FormatUint(callCount.Add(1), 10))
}
