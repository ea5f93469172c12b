// Package secret is the lease's secret and what is made from it
// (docs/security.md): the bearer token every /mcp request carries, the
// proof a server gives a probe that it holds the secret, and what the
// server seals into that answer for the prover alone (sealed.go).
//
// Model: the leaseholder draws a secret (256 bits) when it writes its lease,
// which only its user can read. Neither the secret nor anything a client
// sends lets a listener compute a proof: the token and the proof are
// HMAC-SHA256 of the secret under different labels, so a process that took
// a dead server's port and was sent a token still cannot pass a probe, and
// no client attaches to it. Tokens and proofs are compared in constant
// time. This package depends on the standard library alone, so that the
// server (transport) and the prober (registry) share one definition.
package secret

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Size is a secret's length in bytes.
const Size = 32

// ChallengeSize is a probe's challenge length in bytes.
const ChallengeSize = 16

// Scheme is the HTTP authentication scheme of the token.
const Scheme = "Bearer"

// Labels keep the token and the proof apart: knowing one says nothing of
// the other.
const (
	tokenLabel = "majordomus-mcp token v1"
	proofLabel = "majordomus-mcp probe v1"
)

// New returns a fresh secret in lowercase hex.
func New() string { return random(Size) }

// NewChallenge returns a fresh probe challenge in lowercase hex.
func NewChallenge() string { return random(ChallengeSize) }

func random(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go ≥ 1.24)
	return hex.EncodeToString(b)
}

// Token is the bearer token of secret: what an /mcp request carries.
func Token(secret string) string { return mac(secret, tokenLabel) }

// Authorization is the value of the Authorization header for secret.
func Authorization(secret string) string { return Scheme + " " + Token(secret) }

// Authorized reports whether an Authorization header value carries
// secret's token. An empty secret authorizes nothing.
func Authorized(header, secret string) bool {
	scheme, token, ok := strings.Cut(header, " ")
	if secret == "" || !ok || !strings.EqualFold(scheme, Scheme) {
		return false
	}
	return hmac.Equal([]byte(strings.TrimSpace(token)), []byte(Token(secret)))
}

// ValidChallenge reports whether c has the form of a challenge: hex, of
// ChallengeSize to 4×ChallengeSize bytes. A server proves nothing else, so
// that a proof is never computed over text of an unbounded size.
func ValidChallenge(c string) bool {
	if len(c) < 2*ChallengeSize || len(c) > 8*ChallengeSize {
		return false
	}
	_, err := hex.DecodeString(c)
	return err == nil
}

// Proof is what a server holding secret answers challenge with, saying
// whether it is the leaseholder: the claim is part of what is proved.
func Proof(secret, challenge string, leaseholder bool) string {
	claim := "not-leaseholder"
	if leaseholder {
		claim = "leaseholder"
	}
	return mac(secret, proofLabel+"\n"+challenge+"\n"+claim)
}

// Proves reports whether proof is secret's answer to challenge with that
// claim. An empty secret proves nothing.
func Proves(proof, secret, challenge string, leaseholder bool) bool {
	if secret == "" || challenge == "" {
		return false
	}
	return hmac.Equal([]byte(proof), []byte(Proof(secret, challenge, leaseholder)))
}

func mac(secret, message string) string {
	h := hmac.New(sha256.New, []byte(secret))
	h.Write([]byte(message))
	return hex.EncodeToString(h.Sum(nil))
}
