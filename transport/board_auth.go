package transport

import (
	"crypto/sha256"
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
	// DefaultBoardTokenTTL is how long a one-time token may wait for its
	// exchange: long enough for a browser to start.
	DefaultBoardTokenTTL = 2 * time.Minute
	// boardTokensKept and boardCookiesKept bound what a server keeps: a
	// new one beyond drops the oldest.
	boardTokensKept  = 16
	boardCookiesKept = 32
)

type keyHash [sha256.Size]byte

func hashKey(k string) keyHash { return sha256.Sum256([]byte(k)) }

// boardKeys holds the pending one-time tokens and the cookies given.
type boardKeys struct {
	mu      sync.Mutex
	ttl     time.Duration
	tokens  map[keyHash]time.Time // when each expires
	torder  []keyHash
	cookies map[keyHash]struct{}
	corder  []keyHash
}

func newBoardKeys(ttl time.Duration) *boardKeys {
	return &boardKeys{ttl: ttl, tokens: map[keyHash]time.Time{}, cookies: map[keyHash]struct{}{}}
}

// issue draws a one-time token valid until now+ttl.
func (k *boardKeys) issue(now time.Time) string {
	t := secret.New()
	h := hashKey(t)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.tokens[h] = now.Add(k.ttl)
	k.torder = append(k.torder, h)
	for len(k.torder) > boardTokensKept {
		delete(k.tokens, k.torder[0])
		k.torder = k.torder[1:]
	}
	return t
}

// exchange spends token (whatever the outcome, it is never good again)
// and, when it was pending and unexpired, returns a new cookie value.
func (k *boardKeys) exchange(token string, now time.Time) (string, bool) {
	if token == "" {
		return "", false
	}
	h := hashKey(token)
	k.mu.Lock()
	defer k.mu.Unlock()
	expires, ok := k.tokens[h]
	if !ok {
		return "", false
	}
	delete(k.tokens, h)
	for i, o := range k.torder {
		if o == h {
			k.torder = append(k.torder[:i:i], k.torder[i+1:]...)
			break
		}
	}
	if !now.Before(expires) {
		return "", false
	}
	c := secret.New()
	ch := hashKey(c)
	k.cookies[ch] = struct{}{}
	k.corder = append(k.corder, ch)
	for len(k.corder) > boardCookiesKept {
		delete(k.cookies, k.corder[0])
		k.corder = k.corder[1:]
	}
	return c, true
}

// admits reports whether value is a cookie this server gave.
func (k *boardKeys) admits(value string) bool {
	if value == "" {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.cookies[hashKey(value)]
	return ok
}
