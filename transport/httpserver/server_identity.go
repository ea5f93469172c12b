package httpserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
)

// Identity is the answer of GET / to a client that carries the token, the
// probe. Whoever does not learns only publicIdentity.
type Identity struct {
	Name         string `json:"name"`
	Version      string `json:"version"`
	Checkout     string `json:"checkout"`
	RepositoryID string `json:"repository_id"`
	Profile      string `json:"profile"`
	Instance     string `json:"instance"`
	Leaseholder  bool   `json:"leaseholder"`
	// Sessions is every session the server serves, as its Identity func
	// counts them (its process's own stdio client's, in process, and the
	// HTTP ones), and never fewer than its HTTP sessions.
	Sessions int `json:"sessions"`
	// HTTPSessions is the number of live HTTP sessions (an open
	// 2026-07-28 subscriptions/listen stream is one), of Sessions.
	HTTPSessions int `json:"http_sessions"`
	// Full is true while the session cap is reached: no new session is
	// opened until one ends.
	Full bool `json:"full,omitempty"`
	// Peers is who is on the server's board; nil when not told.
	Peers *IdentityPeers `json:"peers,omitempty"`
	// Greeting is what a prover greets its client with (internal/node):
	// given only sealed, to a prover that asks (Config.Greeting).
	Greeting any `json:"greeting,omitempty"`
	// Proof answers the request's challenge (see internal/secret).
	Proof string `json:"proof,omitempty"`
}

// IdentityPeers is a server's board as GET / tells it, in the shape of
// majordomus_peers: the attached peers, the leaseholder's own client
// among them.
type IdentityPeers struct {
	Count int            `json:"count"`
	Peers []IdentityPeer `json:"peers"`
}

// IdentityPeer is one attached peer. Client is the name the client gave
// itself: data, never prose.
type IdentityPeer struct {
	ID        string `json:"id"`
	Client    string `json:"client"`
	Transport string `json:"transport"`
}

// publicIdentity is all GET / tells a client without the token: that a
// server of that name listens, and, to a challenge, whether it holds the
// lease, with a proof only a holder of the secret can check (docs/security.md).
type publicIdentity struct {
	Name        string `json:"name"`
	Leaseholder *bool  `json:"leaseholder,omitempty"`
	Proof       string `json:"proof,omitempty"`
	// Sealed is the whole identity, which only the prover that holds the
	// secret and sent the challenge can open (secret.Seal).
	Sealed string `json:"sealed,omitempty"`
}

// maxSealed bounds the identity a probe's answer seals: a larger one (a
// board of long names) is left out, well within what a probe reads.
const maxSealed = 16 << 10

// sealed is id, with the greeting, sealed for the prover that sent
// challenge, or "" when it is too large. A full server (id.Full) gives no
// greeting: the session it promises would be refused; the prover learns
// that it is full instead.
func (h *Server) sealed(id Identity, challenge string) string {
	if h.cfg.Greeting != nil && !id.Full {
		id.Greeting = h.cfg.Greeting()
	}
	whole, _ := json.Marshal(id)
	if len(whole) > maxSealed {
		return ""
	}
	s, _ := secret.Seal(h.cfg.Secret, challenge, whole)
	return s
}

// serveIdentity answers the probe. It is answered whatever the server's
// state: a server that lost its lease says so here.
func (h *Server) serveIdentity(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, errCodeMethodNotAllowed, r.Method+" / is not served; GET it")
		return
	}
	challenge := r.URL.Query().Get("challenge")
	if challenge != "" && !secret.ValidChallenge(challenge) {
		writeError(w, http.StatusBadRequest, errCodeInvalidRequest,
			fmt.Sprintf("a challenge is %d to %d hexadecimal digits", 2*secret.ChallengeSize, 8*secret.ChallengeSize))
		return
	}
	// A probe asks who serves, not who is served: the board could outgrow
	// what a probe reads, and is not made for it.
	authorized := h.authorized(r)
	id := h.cfg.Identity(authorized && challenge == "")
	id.Leaseholder = id.Leaseholder && !h.closing.Load() // a stopping server is nobody's to attach to
	id.HTTPSessions = h.table.count()
	id.Sessions = max(id.Sessions, id.HTTPSessions)
	id.Full = h.table.places() >= h.cfg.MaxSessions
	if challenge != "" {
		id.Peers = nil
		id.Proof = secret.Proof(h.cfg.Secret, challenge, id.Leaseholder)
	}
	var answer any = id
	if !authorized {
		public := publicIdentity{Name: id.Name}
		if challenge != "" {
			public.Leaseholder, public.Proof = &id.Leaseholder, id.Proof
			if secret.AsksSealed(r.URL.Query().Get("seal"), h.cfg.Secret, challenge) {
				h.conns.prove(connOf(r)) // an election's probe or a bridge's dial: its owner's connection
				public.Sealed = h.sealed(id, challenge)
				if id.Leaseholder {
					h.conns.coming(connOf(r), h.table.awaitComing) // its next request attaches
				}
			}
		}
		answer = public
	}
	b, _ := json.Marshal(answer)
	b = append(b, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(b)
	}
}
