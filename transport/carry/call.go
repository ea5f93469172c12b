package carry

import (
	"context"
	"net/http"
	"strconv"
)

// A call is one tool call of a client, however often it is sent: a bridge
// that left its server unanswered sends it again where that is safe
// (docs/design.md#server-and-bridge), and the server it left may have run
// it, and kept it in the checkout's history, before it went. Whatever
// serves the client names each call with a key of its own, the same on
// every sending (WithCall), in the callHeader of a POST over HTTP and in
// the context of an in-process message; a server does not keep again a
// call its history holds under that key for the same caller.

// callHeader carries a call's key on the POST that sends it.
const callHeader = "Majordomus-Call"

// maxCallKey bounds a call's key: one longer is no key.
const maxCallKey = 64

type callKey struct{}

// WithCall returns ctx naming the call a message sent under it makes, when
// ctx names none yet: a message sent again keeps its key.
func WithCall(ctx context.Context, key string) context.Context {
	if key == "" || Call(ctx) != "" {
		return ctx
	}
	return context.WithValue(ctx, callKey{}, key)
}

// Call is the key of the call ctx names, or "".
func Call(ctx context.Context) string {
	key, _ := ctx.Value(callKey{}).(string)
	return key
}

// SetCall sets on h, the header of a POST made under ctx, the key of the
// call ctx names.
func SetCall(h http.Header, ctx context.Context) {
	if key := Call(ctx); key != "" {
		h.Set(callHeader, key)
	}
}

// Member is ctx naming the i-th member of a batch whose calls ctx names:
// each call of the batch is kept once, as its own.
func Member(ctx context.Context, i int) context.Context {
	if key := Call(ctx); key != "" {
		return context.WithValue(ctx, callKey{}, memberKey(key, i))
	}
	return ctx
}

// SetMember names, on h, the header of a batch's i-th member served on
// its own, that member's call (Member).
func SetMember(h http.Header, i int) {
	if key := h.Get(callHeader); key != "" {
		h.Set(callHeader, memberKey(key, i))
	}
}

func memberKey(key string, i int) string { return key + "." + strconv.Itoa(i) }

// Names reports whether r, a POST, names the call it makes: a bridge's
// tool call, which a bridge sends again where it provably did not run.
func Names(r *http.Request) bool { return r.Header.Get(callHeader) != "" }

// callOf is ctx naming the call r's callHeader names.
func callOf(ctx context.Context, r *http.Request) context.Context {
	if key := r.Header.Get(callHeader); len(key) <= maxCallKey {
		return WithCall(ctx, key)
	}
	return ctx
}
