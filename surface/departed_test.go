package surface

import (
	"fmt"
	"testing"
	"time"
)

// The board keeps the last departedKept announcers that left: a peer that
// attached first and leaves last stays listed, as the shared state, which
// keeps the latest records, keeps it; the one that left longest ago is
// dropped in its place.
func TestTheAnnouncerThatJustLeftStaysListed(t *testing.T) {
	b := NewBoard(time.Now, time.Minute)
	var state []Peer
	b.keep(nil, func(p Peer) { st := State{Peers: state}; st.apply(record{Peer: &p}); state = st.Peers })
	b.Open("first", "http", "", nil) // p1, attached all along
	if _, _, err := b.Announce("first", "a long refactoring", []string{"lib"}, false); err != nil {
		t.Fatal(err)
	}
	for i := range departedKept + 1 {
		s := fmt.Sprintf("s%d", i)
		b.Open(s, "http", "", nil)
		if _, _, err := b.Announce(s, "a quick fix", []string{"doc"}, false); err != nil {
			t.Fatal(err)
		}
		b.Detach(s)
	}
	b.Detach("first")
	peers, _ := b.Peers()
	listed := false
	for _, p := range peers {
		listed = listed || p.ID == "p1"
	}
	kept := false
	for _, p := range state {
		kept = kept || p.ID == "p1"
	}
	if !listed || !kept || len(peers) != departedKept {
		t.Errorf("p1, which left last, is listed: %t, in the shared state: %t; %d peers listed, want %d", listed, kept, len(peers), departedKept)
	}
}
