package carry

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
)

// A client keeps its peer id across take-overs (docs/design.md#the-layer):
// the server says a session's id in its initialize result
// (_meta[peerMeta]); a bridge remembers it and carries it with the session;
// and wherever the session is opened again — a re-attach, a take-over, a
// server that restarted — its initialize claims the id: in the peerHeader
// of the POST over HTTP, in the context of an in-process session. The
// server grants a claim when no other session of its holds that id. A
// 2026-07-28 client has no session: its bridge claims the id with every
// request it relays, in the same header (SetPeer).
//
// The session brings its last announcement too, so that it is on the new
// board with it from its first instant and nothing is replayed: in the
// announceHeaderName of the initialize POST (majordomus_announce's arguments,
// base64url), in the context of an in-process session's opening or
// initialize. The server says in the initialize result's
// _meta[announcedMeta] that it took it; one that did not (an announcement
// too long for a header, a server that does not know the header) is sent
// it as a majordomus_announce call marked _meta[replayMeta], which is not
// an execution.
//
// Those marks, and the history a carried session brings (historyMeta),
// are heeded only in what carries a session (Replay, a bridge opening a
// session again): in the context of an in-process session's message, in
// the carryingHeader of a POST. What a client writes in its own _meta is
// data, never a mark: else any client could rewrite the history.

const (
	// peerMeta is the key of the peer id in an initialize result's _meta.
	peerMeta = "io.majordomus/peer"
	// peerHeader carries a claimed peer id on an initialize POST, and on
	// every POST of a 2026-07-28 request a bridge relays.
	peerHeader = "Majordomus-Peer"
	// announceHeaderName carries a session's carried announcement on an
	// initialize POST.
	announceHeaderName = "Majordomus-Announcement"
	// announcedMeta is the key of an initialize result's _meta saying the
	// carried announcement is on the board.
	announcedMeta = "io.majordomus/announced"
	// replayMeta is the key of a replayed announcement's _meta.
	replayMeta = "io.majordomus/replay"
	// historyMeta is the key of the _meta of the majordomus_executions call
	// (historyTool) that gives a server a carried session's history.
	historyMeta = "io.majordomus/history"
	historyTool = "majordomus_executions"
	// generationMeta is the key, beside historyMeta, of the highest
	// generation of the layer a carried session's client was told.
	generationMeta = "io.majordomus/generation"
	// RepositoryTool and ServerTool tell the layer's generation, as the
	// resources repositoryURI and serverURI do (TellsGeneration).
	RepositoryTool = "majordomus_repository"
	ServerTool     = "majordomus_server"
	repositoryURI  = "majordomus://repository"
	serverURI      = "majordomus://server"
	// carryingHeader marks a POST that carries a session (Carrying).
	carryingHeader = "Majordomus-Carrying"
	// sessionHeader names, on a POST of a 2026-07-28 request a bridge
	// relays, the session its client opened too (SetSession).
	sessionHeader = "Majordomus-Session"
)

// maxAnnounceHeader bounds an announceHeaderName: a longer announcement is
// replayed instead (the server reads at most 64 KiB of a request's head).
const maxAnnounceHeader = 16 << 10

type announceKey struct{}

// WithAnnouncement returns ctx bringing args, the arguments of the
// client's last majordomus_announce, to the session an initialize handled
// under it, or an in-process session registered under it, opens.
func WithAnnouncement(ctx context.Context, args json.RawMessage) context.Context {
	if len(args) == 0 {
		return ctx
	}
	return context.WithValue(ctx, announceKey{}, args)
}

// Announcement is the announcement ctx brings, or nil.
func Announcement(ctx context.Context) json.RawMessage {
	args, _ := ctx.Value(announceKey{}).(json.RawMessage)
	return args
}

// SetClaim sets on h, the header of an initialize POST that opens a
// session again, the peer id ctx claims and the announcement it brings
// (ClaimOf reads them). An announcement too long for a header is left
// out: it is replayed instead.
func SetClaim(h http.Header, ctx context.Context) {
	SetPeer(h, PeerClaim(ctx))
	if v := base64.RawURLEncoding.EncodeToString(Announcement(ctx)); v != "" && len(v) <= maxAnnounceHeader {
		h.Set(announceHeaderName, v)
	}
}

// SetPeer sets on h, the header of a POST of a 2026-07-28 request a
// bridge relays, the peer id of its client, which the server reads as the
// request's claim (ClaimOf), as it would read _meta[peerMeta]: the body
// goes as the client wrote it, within the size limit it was read under.
func SetPeer(h http.Header, id string) {
	if id != "" {
		h.Set(peerHeader, id)
	}
}

// SetSession sets on h, the header of a POST of a 2026-07-28 request a
// bridge relays, the id of the session its client opened too with
// initialize (a client that speaks both revisions, as a dual-era client
// falling back does): the server knows the request's client as that
// session's peer, as it knows an in-process client by its one session
// (SessionOf). A session's peer is claimed by naming the session, which
// only its client was told, never by its id alone.
func SetSession(h http.Header, sid string) {
	if sid != "" {
		h.Set(sessionHeader, sid)
	}
}

type sessionKey struct{}

// SessionOf is the session a 2026-07-28 request handled under ctx names
// as its client's (SetSession), or "".
func SessionOf(ctx context.Context) string {
	sid, _ := ctx.Value(sessionKey{}).(string)
	return sid
}

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

type carryingKey struct{}

// WithCarrying returns ctx marking what is sent under it as the carrying
// of a session, whose _meta marks are heeded (Carrying).
func WithCarrying(ctx context.Context) context.Context {
	return context.WithValue(ctx, carryingKey{}, true)
}

// Carrying reports whether a message handled under ctx carries a session:
// only then are its replay and history marks heeded.
func Carrying(ctx context.Context) bool { return ctx.Value(carryingKey{}) != nil }

// SetCarrying marks h, the header of a POST made under ctx, as carrying a
// session when ctx does.
func SetCarrying(h http.Header, ctx context.Context) {
	if Carrying(ctx) {
		h.Set(carryingHeader, "1")
	}
}

// ClaimOf is the HTTP server's context for a request: the claim of its
// peerHeader, the announcement of its announceHeaderName, whether it
// carries a session (carryingHeader), the session its client opened too
// (sessionHeader), and the call it makes (callHeader).
func ClaimOf(ctx context.Context, r *http.Request) context.Context {
	ctx = callOf(ctx, r)
	if sid := r.Header.Get(sessionHeader); sid != "" {
		ctx = context.WithValue(ctx, sessionKey{}, sid)
	}
	if r.Header.Get(carryingHeader) != "" {
		ctx = WithCarrying(ctx)
	}
	ctx = WithPeerClaim(ctx, r.Header.Get(peerHeader))
	if v := r.Header.Get(announceHeaderName); v != "" && len(v) <= maxAnnounceHeader {
		if args, err := base64.RawURLEncoding.DecodeString(v); err == nil && json.Valid(args) {
			ctx = WithAnnouncement(ctx, args)
		}
	}
	return ctx
}

// Opened is what an initialize (or server/discover) answer says of the
// session it opened: its peer id ("" when none), and whether the carried
// announcement is on the board.
func Opened(answer []byte) (peer string, announced bool) {
	var a struct {
		Result struct {
			Meta map[string]any `json:"_meta"`
		} `json:"result"`
	}
	_ = json.Unmarshal(answer, &a)
	peer, _ = a.Result.Meta[peerMeta].(string)
	announced, _ = a.Result.Meta[announcedMeta].(bool)
	return peer, announced
}

// ProtocolOf is the protocol version an initialize answer negotiated.
func ProtocolOf(answer []byte) string {
	var a struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	_ = json.Unmarshal(answer, &a)
	return a.Result.ProtocolVersion
}

// Unmarked is an initialize's answer without the mark Opened reads, which
// a server writes where an announcement came with the session: what the
// client sees of the session its bridge opened again, as in process. The
// mark is a key of the answer's _meta, written before the peer's (mcp-go
// orders its keys), and a JSON text holds its quoted form nowhere else.
func Unmarked(answer []byte) []byte {
	return bytes.Replace(answer, []byte(`"`+announcedMeta+`":true,`), nil, 1)
}

// AnnounceTool is the tool a client announces itself with.
const AnnounceTool = "majordomus_announce"
