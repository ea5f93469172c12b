package carry

import (
	"fmt"
	"strings"
	"testing"
)

// What a session carries of its subscriptions is bounded: a client that
// subscribes to ever more made-up URIs grows nothing past the bounds
// (100,000 of 8 KB grew a process to 1.9 GB), which leave room for every
// object of any index in use.
func TestTheSubscriptionsCarriedAreBounded(t *testing.T) {
	var h Hearing
	subscribe := func(uri string) { h.NoteHeard("resources/subscribe", []byte(`{"uri":"`+uri+`"}`)) }
	long := strings.Repeat("x", 8000)
	for i := range maxHeardBytes/8000 + 10 {
		subscribe(fmt.Sprint("majordomus://rule/", i, long))
	}
	if n := h.uriBytes(); n > maxHeardBytes || n < maxHeardBytes-8100 {
		t.Fatalf("%d bytes of URIs carried, want at most %d, and close", n, maxHeardBytes)
	}
	h = Hearing{}
	for i := range maxHeard + 10 {
		subscribe(fmt.Sprint("majordomus://rule/r", i))
	}
	if len(h.Subscribed) != maxHeard {
		t.Fatalf("%d subscriptions carried, want %d", len(h.Subscribed), maxHeard)
	}
	h.NoteHeard("resources/unsubscribe", []byte(`{"uri":"majordomus://rule/r0"}`))
	subscribe("majordomus://rule/later")
	if len(h.Subscribed) != maxHeard || h.Subscribed[len(h.Subscribed)-1] != "majordomus://rule/later" {
		t.Fatalf("once one ended, a new one is not carried: %d, last %s", len(h.Subscribed), h.Subscribed[len(h.Subscribed)-1])
	}
}
