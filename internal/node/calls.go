package node

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
)

// naming is ctx naming the call a message of method makes
// (carry.WithCall): a tool call that ctx names none for yet (a message
// sent again keeps its key) gets a key of its own, random, so that no
// other client can name it before it has seen it.
func naming(ctx context.Context, method string) context.Context {
	if method != string(mcp.MethodToolsCall) || carry.Call(ctx) != "" {
		return ctx
	}
	return carry.WithCall(ctx, secret.NewChallenge()) // random hex, as a challenge is
}
