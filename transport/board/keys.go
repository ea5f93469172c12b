package board

import (
	"crypto/sha256"
	"slices"
	"sync"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
)

// The board page's keys. A browser never holds the lease's secret: whoever
// can read the lease (its owner) asks the server, with the secret's token,
// for a one-time token (POST /board/token); the page exchanges it, once
// and within its life, for a cookie that opens the page for as long as
// the server serves. Both are kept here only as their SHA-256, so that a
// look-up's time says nothing of a key.
const (
	// tokenTTL is how long a one-time token may wait for its exchange:
	// long enough for a browser to start.
	tokenTTL = 2 * time.Minute
	// tokensKept and cookiesKept bound what a page keeps: a new one beyond
	// replaces the oldest.
	tokensKept  = 16
	cookiesKept = 32
)

type keyHash [sha256.Size]byte

func hashKey(k string) keyHash { return sha256.Sum256([]byte(k)) }

// keys holds the pending one-time tokens and the cookies given, each in a
// ring; a zero hash is an empty place, which no key hashes to.
type keys struct {
	mu      sync.Mutex
	ttl     time.Duration
	tokens  [tokensKept]token
	cookies [cookiesKept]keyHash
	issued  int // tokens issued, and so the ring's next place
	given   int // cookies given, as issued
}

type token struct {
	hash    keyHash
	expires time.Time
}

// issue draws a one-time token valid until now+ttl.
func (k *keys) issue(now time.Time) string {
	t := secret.New()
	k.mu.Lock()
	defer k.mu.Unlock()
	k.tokens[k.issued%tokensKept] = token{hashKey(t), now.Add(k.ttl)}
	k.issued++
	return t
}

// exchange spends t (whatever the outcome, it is never good again) and,
// when it was pending and unexpired, returns a new cookie value.
func (k *keys) exchange(t string, now time.Time) (string, bool) {
	h := hashKey(t)
	k.mu.Lock()
	defer k.mu.Unlock()
	i := slices.IndexFunc(k.tokens[:], func(o token) bool { return o.hash == h })
	if t == "" || i < 0 {
		return "", false
	}
	expires := k.tokens[i].expires
	k.tokens[i] = token{}
	if !now.Before(expires) {
		return "", false
	}
	c := secret.New()
	k.cookies[k.given%cookiesKept] = hashKey(c)
	k.given++
	return c, true
}

// admits reports whether value is a cookie this page gave.
func (k *keys) admits(value string) bool {
	h := hashKey(value)
	k.mu.Lock()
	defer k.mu.Unlock()
	return value != "" && slices.Contains(k.cookies[:], h)
}
