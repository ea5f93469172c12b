package registry

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// Numbers drawn concurrently from one counter are all different, and the
// counter goes on from where it stood.
func TestPeerNumbersAreUniqueAcrossDrawers(t *testing.T) {
	lease := filepath.Join(testtemp.Dir(t), "server.json")
	const drawers, each = 8, 8
	seen := make(chan int, drawers*each)
	var wg sync.WaitGroup
	for range drawers {
		wg.Go(func() {
			for range each {
				n, err := NextPeer(lease, 0)
				for errors.Is(err, ErrLockTimeout) { // the others held the lock all along, on a loaded machine: nothing was drawn
					n, err = NextPeer(lease, 0)
				}
				if err != nil {
					t.Error(err)
					return
				}
				seen <- n
			}
		})
	}
	wg.Wait()
	close(seen)
	got := map[int]bool{}
	for n := range seen {
		if got[n] {
			t.Fatalf("the number %d was drawn twice", n)
		}
		got[n] = true
	}
	if len(got) != drawers*each || !got[1] || !got[drawers*each] {
		t.Fatalf("drew %d numbers", len(got))
	}
	if err := os.WriteFile(PeerCounterPath(lease), []byte("not a number"), 0o600); err != nil {
		t.Fatal(err)
	}
	if n, err := NextPeer(lease, 0); err != nil || n != 1 {
		t.Fatalf("after garbage: %d %v, want 1", n, err)
	}
}

// A number drawn at least some floor is the floor when the count is
// below it, and counted as given: the counter goes on from there.
func TestAPeerNumberDrawnAtLeastAFloorIsCounted(t *testing.T) {
	lease := filepath.Join(testtemp.Dir(t), "server.json")
	var got []int
	for _, atLeast := range []int{0, 5, 0, 3, maxPeerNumber + 7} {
		n, err := NextPeer(lease, atLeast)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, n)
	}
	if want := []int{1, 5, 6, 7, maxPeerNumber}; !slices.Equal(got, want) {
		t.Fatalf("drew %v, want %v", got, want)
	}
}

// A counter under a missing directory is an error, not a directory made.
func TestNoPeerNumberWithoutTheLeaseDirectory(t *testing.T) {
	lease := filepath.Join(testtemp.Dir(t), "missing", "server.json")
	if _, err := NextPeer(lease, 0); err == nil {
		t.Fatal("a peer was numbered under a missing directory")
	}
	if _, err := os.Stat(filepath.Dir(lease)); !os.IsNotExist(err) {
		t.Fatal("the directory was made")
	}
}

// A process killed while it draws a number leaves the count it read or the
// one it wrote, never an empty counter: the next drawer would number from
// 1 again, and give a new client the id of a peer the history knows.
func TestACounterKilledWhileDrawingGoesOn(t *testing.T) {
	lease := filepath.Join(testtemp.Dir(t), "server.json")
	count := func() (int, error) {
		b, err := os.ReadFile(PeerCounterPath(lease))
		if err != nil {
			return 0, err
		}
		return strconv.Atoi(string(bytes.TrimSpace(b)))
	}
	seen := 0
	for range 25 {
		c := startChild(t, "draw", lease)
		c.Expect(t, "drawing")
		for n, err := count(); err != nil || n < seen+3; n, err = count() { // a few drawn: killed anywhere in a draw
		}
		if err := c.Cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		c.Cmd.Wait()
		n, err := count()
		if err != nil || n < seen+3 {
			t.Fatalf("after a drawer was killed the counter says %d (%v), want at least %d", n, err, seen+3)
		}
		seen = n
	}
}
