package node

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// naming is ctx naming the calls msg, a message or a batch, makes
// (carry.WithCall): a tool call, or a batch holding one, that ctx names
// none for yet (a message sent again keeps its key) gets a key of its
// own, random, so that no other client can name it before it has seen
// it. A batch's members are named from it (carry.Member).
func naming(ctx context.Context, msg json.RawMessage) context.Context {
	if carry.Call(ctx) != "" || !slices.ContainsFunc(wire.Members(msg), func(m json.RawMessage) bool {
		env, err := wire.ReadEnvelope(m)
		return err == nil && env.IsRequest() && env.Method == string(mcp.MethodToolsCall)
	}) {
		return ctx
	}
	return carry.WithCall(ctx, secret.NewChallenge()) // random hex, as a challenge is
}
