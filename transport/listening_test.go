package transport

import (
	"slices"
	"testing"
)

func TestWhatAClientAskedToHearIsKeptAndReplayed(t *testing.T) {
	var h hearing
	for _, m := range []struct{ method, params string }{
		{"resources/subscribe", `{"uri":"majordomus://rules/a"}`},
		{"resources/subscribe", `{"uri":"majordomus://rules/b"}`},
		{"resources/subscribe", `{"uri":"majordomus://rules/a"}`}, // again: once
		{"resources/unsubscribe", `{"uri":"majordomus://rules/b"}`},
		{"resources/subscribe", `{"uri":""}`},   // no uri: nothing
		{"resources/subscribe", `"not params"`}, // nothing
		{"logging/setLevel", `{"level":"debug"}`},
		{"logging/setLevel", `{"level":"info"}`},
		{"tools/list", `{}`}, // not what it hears
	} {
		h.noteHeard(m.method, []byte(m.params))
	}
	if want := []string{"majordomus://rules/a"}; !slices.Equal(h.Subscribed, want) || h.LogLevel != "info" {
		t.Fatalf("heard = %+v, want %v at info", h, want)
	}
	frames := h.replayFrames()
	want := []string{
		`{"jsonrpc":"2.0","id":"majordomus-bridge-log-level","method":"logging/setLevel","params":{"level":"info"}}`,
		`{"jsonrpc":"2.0","id":"majordomus-bridge-subscribe","method":"resources/subscribe","params":{"uri":"majordomus://rules/a"}}`,
	}
	if len(frames) != len(want) {
		t.Fatalf("replay = %q", frames)
	}
	for i := range want {
		if string(frames[i]) != want[i] {
			t.Errorf("replay[%d] = %s, want %s", i, frames[i], want[i])
		}
	}
	c := h.clone()
	c.Subscribed[0] = "changed"
	if h.Subscribed[0] != "majordomus://rules/a" {
		t.Error("a clone shares its subscriptions")
	}
}
