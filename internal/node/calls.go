package node

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
	"github.com/majordomus-mcp/majordomus-mcp/transport/bridge"
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

// modernRequest reports whether msg is a request of the 2026-07-28 revision,
// which its client's cancel leaves answered nothing.
func modernRequest(msg json.RawMessage) bool {
	if !wire.MayHold(msg, mcp.MetaKeyProtocolVersion) {
		return false
	}
	_, version := wire.MetaOf(wire.ParamsOf(msg))
	return mcp.IsModernProtocol(version)
}

// hostClaim is ctx claiming, for what a bridge b relays, the peer id of
// this process's host's earlier client (host.go), as the in-process
// session claims it; a bridge sends it only with the client's first
// initialize.
func (s *clientSession) hostClaim(ctx context.Context, b wire.Backend) context.Context {
	if _, bridged := b.(*bridge.Bridge); bridged {
		if id := s.n.hostPeer(); id != "" {
			return carry.WithPeerClaim(ctx, id)
		}
	}
	return ctx
}
