package carry

import (
	"fmt"
	"strings"
	"testing"
)

// What a session carries of its subscriptions is bounded: a client that
// subscribes to ever more made-up URIs grows nothing past the bound
// (100,000 of 8 KB grew a process to 1.9 GB).
func TestTheSubscriptionsCarriedAreBounded(t *testing.T) {
	var h Hearing
	subscribe := func(uri string) { h.NoteHeard("resources/subscribe", []byte(`{"uri":"`+uri+`"}`)) }
	subscribe("majordomus://rule/" + strings.Repeat("x", maxHeardURI))
	if len(h.Subscribed) != 0 {
		t.Fatalf("a URI of %d bytes is carried", len(h.Subscribed[0]))
	}
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
