package transport

import (
	"context"
	"encoding/json"
	"net/http"
)

// A client keeps its peer id across take-overs (SPEC §3): the server says
// a session's id in its initialize result (_meta[PeerMeta]); a bridge
// remembers it and carries it with the session; and wherever the session
// is opened again — a re-attach, a take-over, a server that restarted — its
// initialize claims the id: in the PeerHeader of the POST over HTTP, in the
// context of an in-process session. The server grants a claim when no
// other session of its holds that id.

const (
	// PeerMeta is the key of the peer id in an initialize result's _meta.
	PeerMeta = "io.majordomus/peer"
	// PeerHeader carries a claimed peer id on an initialize POST.
	PeerHeader = "Majordomus-Peer"
)

type peerClaimKey struct{}

// WithPeerClaim returns ctx claiming peer id for the session an initialize
// handled under it opens.
func WithPeerClaim(ctx context.Context, id string) context.Context {
	if id == "" {
		return ctx
	}
	return context.WithValue(ctx, peerClaimKey{}, id)
}

// PeerClaim is the peer id ctx claims, or "".
func PeerClaim(ctx context.Context) string {
	id, _ := ctx.Value(peerClaimKey{}).(string)
	return id
}

// peerClaimOf is the HTTP server's context for a request: the claim of its
// PeerHeader.
func peerClaimOf(ctx context.Context, r *http.Request) context.Context {
	return WithPeerClaim(ctx, r.Header.Get(PeerHeader))
}

// peerOf is the peer id an initialize answer gives, or "".
func peerOf(answer []byte) string {
	var a struct {
		Result struct {
			Meta map[string]any `json:"_meta"`
		} `json:"result"`
	}
	_ = json.Unmarshal(answer, &a)
	id, _ := a.Result.Meta[PeerMeta].(string)
	return id
}
