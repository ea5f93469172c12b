package surface

import (
	"fmt"
	"testing"
	"time"
)

// A peer id a claim was granted names that peer for good: a new peer is
// never given it later, though the checkout's counter stood below it when
// it was granted (a 2026-07-28 client's claim of a free id, a counter
// started again after its file was lost) and the claimant has left the
// board since. The id is in the history as the claimant's.
func TestAGrantedIDIsNeverGivenToAnotherPeer(t *testing.T) {
	at := time.Date(2026, 7, 1, 8, 0, 0, 0, time.UTC)
	counter := 0
	numbers := func(atLeast int) (int, error) { counter = max(counter+1, atLeast); return counter, nil } // as registry.NextPeer
	b := newBoard(func() time.Time { return at }, time.Minute, numbers, &changes{})
	if id := b.Open("carried", "http", "p3", nil); id != "p3" {
		t.Fatalf("the free claim of p3 gave %s", id)
	}
	b.Detach("carried") // it leaves, having announced nothing: off the board
	for i := range 5 {
		if id := b.Open(fmt.Sprintf("new%d", i), "http", "", nil); id == "p3" {
			t.Fatalf("the new peer number %d was given p3, the id of the claimant that was", i+1)
		}
	}
	// A 2026-07-28 client's claim of a free id, the same.
	m := b.Sight(ModernRequest{Claim: "p9", Client: &Client{Name: "modern"}, Transport: "http"})
	if m != "p9" {
		t.Fatalf("the modern claim of p9 gave %s", m)
	}
	at = at.Add(2 * time.Minute) // unheard for the idle timeout: gone
	for i := range 5 {
		if id := b.Open(fmt.Sprintf("later%d", i), "http", "", nil); id == "p9" {
			t.Fatalf("the later peer number %d was given p9, the id of the modern claimant that was", i+1)
		}
	}
}

// The numbers granted to claims are kept only while the checkout's
// counter may still give them here: those it has passed (given elsewhere,
// as every id a take-over's carried sessions claim was) are forgotten, so
// the board does not keep one for every claim it ever granted.
func TestGrantedNumbersTheCounterPassedAreForgotten(t *testing.T) {
	at := time.Date(2026, 7, 1, 8, 0, 0, 0, time.UTC)
	counter := 1000 // the checkout's counter, as a take-over finds it
	numbers := func(atLeast int) (int, error) { counter = max(counter+1, atLeast); return counter, nil }
	b := newBoard(func() time.Time { return at }, time.Minute, numbers, &changes{})
	for i := 1; i <= 500; i++ { // carried sessions claim the ids they held, and leave
		if id := b.Open(fmt.Sprint("c", i), "http", fmt.Sprint("p", i), nil); id != fmt.Sprint("p", i) {
			t.Fatalf("the claim of p%d gave %s", i, id)
		}
		b.Detach(fmt.Sprint("c", i))
	}
	if id := b.Open("above", "http", "p1003", nil); id != "p1003" { // one past the counter: kept
		t.Fatalf("the claim of p1003 gave %s", id)
	}
	b.Detach("above")
	for i := range 5 {
		if id := b.Open(fmt.Sprint("n", i), "http", "", nil); id == "p1003" {
			t.Fatalf("new peer %d was given p1003, a claimant's", i)
		}
	}
	if n := len(b.granted); n != 0 {
		t.Errorf("granted keeps %d numbers the counter (now %d) has passed", n, counter)
	}
}
