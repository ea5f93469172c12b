package surface

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// declared are the options that make what every surface's MCP server
// declares at initialize: its title and its capabilities.
func declared() []server.ServerOption {
	return []server.ServerOption{
		server.WithTitle("Majordomus"),
		server.WithToolCapabilities(false),
		server.WithResourceCapabilities(true, true),
		server.WithPromptCapabilities(true),
		server.WithCompletions(),
		server.WithLogging(),
	}
}

// told is what a client's instructions say.
type told struct {
	peer, checkout string
	objects        int
	state, board   string // the layer's state; the board's summary
	url, alone     string // the shared server's URL; why the client is served alone
}

func (t told) instructions() string {
	var b strings.Builder
	// the checkout's name is its manifest's: a clone's words, quoted as a peer's are
	fmt.Fprintf(&b, "You are peer %s on the majordomus board of the checkout %s (%d objects in its .ai/ layer, state %s).\n",
		t.peer, quoted(t.checkout), t.objects, t.state)
	fmt.Fprintf(&b, "Peers now: %s.\n", t.board)
	b.WriteString("Before you change files, call majordomus_announce with your intent and the paths you will touch (scope): " +
		"it answers with the other peers whose scopes overlap yours. majordomus_peers shows the board; " +
		"majordomus_list, majordomus_search and majordomus_get read the layer's rules, ADRs and prompts.\n")
	if t.url != "" {
		fmt.Fprintf(&b, "This session is served by the checkout's shared server at %s (MCP at %s/mcp); every agent in this checkout shares its board and history.\n", t.url, t.url)
	}
	if t.alone != "" {
		notice := AloneNotice(t.alone)
		b.WriteString(strings.ToUpper(notice[:1]) + notice[1:] + ".\n")
	}
	return b.String()
}

// Greeting is what a live shared server's proof said of it (sealed in its
// identity, GET /) that its answer to a new client's initialize tells.
type Greeting struct {
	// Declared is what the answer says of the server to anyone: the
	// members "capabilities":… and "serverInfo":…, in its order, as
	// mcp-go's own answer gives them on a server that declares what a
	// surface declares.
	Declared   string
	Checkout   string
	Objects    int
	LayerState string
	Board      string // its board's summary, without the new peer
	// Print is the server's GreetingPrint: a client greets with these words
	// only where its own is the same.
	Print string
	URL   string `json:"-"` // where the prover found it
}

// Greeting is what this surface's server greets a new client with, now:
// nothing (no Declared) once the summary a new peer joins would not name
// it, which Greet could not tell.
func (s *Surface) Greeting() Greeting {
	board, n := s.Board.summary()
	if n >= maxSummaryPeers {
		return Greeting{}
	}
	ix := s.cfg.Layer.Current()
	return Greeting{Declared: s.declared(), Checkout: ix.Name, Objects: len(ix.Objects), LayerState: ix.State(), Board: board, Print: GreetingPrint()}
}

// GreetingPrint tells apart builds that greet otherwise: a digest of the
// answers this build's code makes (ReadHandshake, then Greet) to an
// initialize of a plain client's and of one whose name is long, odd and
// quoted (in a checkout whose name is too), and of the revision it answers
// each revision it knows with, and one it does not. Two builds of one
// version number may differ there (one built from changed code, with no
// revision stamped), and a greeting must be its server's words to the
// byte.
var GreetingPrint = sync.OnceValue(func() string {
	g := Greeting{Declared: `"capabilities":{},"serverInfo":{"name":"n","version":"1"}`, Checkout: "c\u201c\n" + strings.Repeat("c", 2*maxQuoted), Objects: 1, LayerState: "ok",
		Board: `p1 "a" (stdio)`, URL: "http://127.0.0.1:1"}
	sum := sha256.New()
	for _, client := range []string{`"b"`, `"<\"é\udc00\u3164 ` + strings.Repeat("n", 2*maxClientText) + `"`} {
		h, ok := ReadHandshake(json.RawMessage(`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"` +
			mcp.LATEST_LEGACY_PROTOCOL_VERSION + `","capabilities":{},"clientInfo":{"name":` + client + `,"version":"1"}}}`))
		fmt.Fprintf(sum, "%t %s\n", ok, Greet(h, "p2", g))
	}
	for _, v := range append(mcp.LegacyProtocolVersions(), "1999-01-01") {
		fmt.Fprintf(sum, "\n%s %s", v, Handshake{version: v}.Protocol())
	}
	return hex.EncodeToString(sum.Sum(nil)[:8])
})

func declaredBy(version string) string {
	srv := server.NewMCPServer(Name, version, declared()...)
	frame := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + mcp.LATEST_LEGACY_PROTOCOL_VERSION + `","capabilities":{},"clientInfo":{"name":"","version":""}}}`
	answer, _ := json.Marshal(srv.HandleMessage(context.Background(), json.RawMessage(frame)))
	var r struct {
		Result struct {
			Capabilities json.RawMessage `json:"capabilities"`
			ServerInfo   json.RawMessage `json:"serverInfo"`
		} `json:"result"`
	}
	if json.Unmarshal(answer, &r) != nil || r.Result.Capabilities == nil || r.Result.ServerInfo == nil {
		return ""
	}
	return `"capabilities":` + string(r.Result.Capabilities) + `,"serverInfo":` + string(r.Result.ServerInfo)
}

// Handshake is a client's initialize request as a server's answer depends
// on it, read as mcp-go reads it ([ReadHandshake]).
type Handshake struct {
	id      any // echoed as mcp-go reads it
	version string
	client  string
	// Params are the request's params, which a session carried elsewhere
	// opens with again.
	Params json.RawMessage
}

// Protocol is the protocol revision the answer to h negotiates.
func (h Handshake) Protocol() string { return mcp.NegotiateLegacyVersion(h.version) }

// ReadHandshake reads a legacy initialize request as mcp-go reads one it
// answers; false when msg is none, or mcp-go would refuse it.
func ReadHandshake(msg json.RawMessage) (Handshake, bool) {
	var base struct {
		JSONRPC string          `json:"jsonrpc"`
		Method  string          `json:"method"`
		ID      any             `json:"id"`
		Params  json.RawMessage `json:"params"`
	}
	var req mcp.InitializeRequest
	if json.Unmarshal(msg, &base) != nil || base.JSONRPC != mcp.JSONRPC_VERSION || base.Method != string(mcp.MethodInitialize) ||
		base.ID == nil || json.Unmarshal(msg, &req) != nil {
		return Handshake{}, false
	}
	var modern struct { // read as mcp-go reads it: "params" given twice are one
		Params struct {
			Meta *mcp.Meta `json:"_meta"`
		} `json:"params"`
	}
	if _ = json.Unmarshal(msg, &modern); mcp.IsModernProtocol(modern.Params.Meta.ProtocolVersion()) {
		return Handshake{}, false // of a 2026-07-28 client, which has no handshake
	}
	return Handshake{base.ID, req.Params.ProtocolVersion, req.Params.ClientInfo.Name, base.Params}, true
}

// Greet is the answer to h that the server g describes gives a new HTTP
// session claiming peer, an id no attached peer of its board holds. Its
// server sees the same session open a moment later (internal/node's
// greeting), so the client hears the server's own words one round trip
// sooner: mcp-go's answer, in its order, with the instructions the
// server's surface gives (TestAnAttachingClientIsGreetedWithTheServersOwnAnswer
// holds the two side by side).
func Greet(h Handshake, peer string, g Greeting) []byte {
	board := peerLine(peer, bounded(Client{Name: h.client}, unnamed).Name, "http") // a session opened is the board's last, named as the board names it
	if g.Board != "" {
		board = g.Board + ", " + board
	}
	instructions := told{peer, g.Checkout, g.Objects, g.LayerState, board, g.URL, ""}.instructions()
	marshal := func(v any) []byte { j, _ := json.Marshal(v); return j }
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(marshal(h.id))
	b.WriteString(`,"result":{"_meta":{` + strconv.Quote(PeerMeta) + `:`)
	b.Write(marshal(peer))
	b.WriteString(`},"protocolVersion":`)
	b.Write(marshal(h.Protocol()))
	b.WriteString(`,` + g.Declared + `,"instructions":`)
	b.Write(marshal(instructions))
	b.WriteString(`}}`)
	return b.Bytes()
}
