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
// and within its life, for a key that reads the board for as long as the
// server serves, or until keysKept newer keys replaced it (a stream it
// opened goes on). Both are kept here only as their SHA-256, so that a
// look-up's time says nothing of a key.
const (
	// tokenTTL is how long a one-time token may wait for its exchange:
	// long enough for a browser to start.
	tokenTTL = 2 * time.Minute
	// tokensKept and keysKept bound what a page keeps: a new one beyond
	// replaces the oldest.
	tokensKept = 16
	keysKept   = 32
)

type keyHash [sha256.Size]byte

func hashKey(k string) keyHash { return sha256.Sum256([]byte(k)) }

// keys holds the pending one-time tokens and the keys given, each in a
// ring; a zero hash is an empty place, which no key hashes to.
type keys struct {
	mu     sync.Mutex
	ttl    time.Duration
	tokens [tokensKept]token
	given  [keysKept]keyHash
	issued int // tokens issued, and so the ring's next place
	gave   int // keys given, as issued
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

// pending reports whether t waits to be spent, unexpired.
func (k *keys) pending(t string, now time.Time) bool {
	h := hashKey(t)
	k.mu.Lock()
	defer k.mu.Unlock()
	i := slices.IndexFunc(k.tokens[:], func(o token) bool { return o.hash == h })
	return t != "" && i >= 0 && now.Before(k.tokens[i].expires)
}

// exchange spends t (whatever the outcome, it is never good again) and,
// when it was pending and unexpired, returns a new key.
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
	key := secret.New()
	k.given[k.gave%keysKept] = hashKey(key)
	k.gave++
	return key, true
}

// admits reports whether key is one this page gave.
func (k *keys) admits(key string) bool {
	h := hashKey(key)
	k.mu.Lock()
	defer k.mu.Unlock()
	return key != "" && slices.Contains(k.given[:], h)
}
