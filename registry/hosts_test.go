package registry

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

func TestHostsAreRememberedForADayAndBounded(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	h := parseHosts([]byte("a:1 3 9:9 1799999000\nnot a line\nb:2 x 9:9 1\nc:3 4 8:8 1799900000\nold 5 9:9 1700000000\n"))
	gone := func(string) bool { return false }
	if n, ok := h.lookup("a:1", now, gone); !ok || n != 3 {
		t.Fatalf("a:1 = %d %v, want 3", n, ok)
	}
	if _, ok := h.lookup("a:1", now, func(p string) bool { return p == "9:9" }); ok {
		t.Fatal("a number whose process still runs is given again")
	}
	if _, ok := h.lookup("old", now, gone); ok {
		t.Fatal("a host remembered more than a day ago is forgotten")
	}
	if _, ok := h.lookup("b:2", now, gone); ok {
		t.Fatal("a line that cannot be read is dropped")
	}
	h = h.remember("a:1", 7, "9:10", now)
	if n, _ := h.lookup("a:1", now, gone); n != 7 {
		t.Fatalf("remembered again: %d, want 7", n)
	}
	for i := range 2 * hostsKept {
		h = h.remember(fmt.Sprintf("h:%d", i), i+1, "9:9", now)
	}
	if len(h) != hostsKept {
		t.Fatalf("kept %d, want %d", len(h), hostsKept)
	}
	if again := parseHosts(h.format()); len(again) != hostsKept || again[0] != h[0] {
		t.Fatalf("format does not read back: %v", again[:1])
	}
}

// A host's second client here gets the first one's number back once the
// first one's process has ended, a new one while it runs; another host
// gets the next number of the counter.
func TestAHostsSecondClientGetsTheFirstOnesNumber(t *testing.T) {
	lease := hostsLease(t)
	now := time.Now()
	running := map[string]bool{"1:1": true}
	alive := func(p string) bool { return running[p] }
	first, again, err := PeerOfHost(lease, "100:42", "1:1", alive, now)
	if err != nil || again {
		t.Fatalf("first: %d %v %v", first, again, err)
	}
	sibling, again, err := PeerOfHost(lease, "100:42", "2:2", alive, now)
	if err != nil || again || sibling == first {
		t.Fatalf("while the first runs: %d %v %v, want a new number", sibling, again, err)
	}
	running["2:2"] = false
	second, again, err := PeerOfHost(lease, "100:42", "3:3", alive, now.Add(time.Second))
	if err != nil || !again || second != sibling {
		t.Fatalf("after the last one ended: %d %v %v, want %d again", second, again, err, sibling)
	}
	other, again, err := PeerOfHost(lease, "200:43", "4:4", alive, now)
	if err != nil || again || other != sibling+1 {
		t.Fatalf("another host: %d %v %v, want %d", other, again, err, sibling+1)
	}
	if _, _, err := PeerOfHost(lease, "a key with spaces", "5:5", alive, now); err == nil {
		t.Fatal("a key with spaces is refused")
	}
}

// TestAHostsMemoryThatShrinksIsPaddedNotTruncated: a memory whose stale
// hosts are dropped is written over the old one, its tail blank lines
// that read as nothing, and it is read back as written.
func TestAHostsMemoryThatShrinksIsPaddedNotTruncated(t *testing.T) {
	lease := hostsLease(t)
	now := time.Now()
	stale := strings.Repeat("h", 200) + " 7 9:9 " + strconv.FormatInt(now.Add(-2*hostKeptFor).Unix(), 10) + "\n"
	if err := os.WriteFile(HostsPath(lease), []byte(stale), 0o600); err != nil {
		t.Fatal(err)
	}
	gone := func(string) bool { return false }
	first, _, err := PeerOfHost(lease, "100:42", "1:1", gone, now)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(HostsPath(lease))
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) != len(stale) || strings.Contains(string(raw), "hhh") {
		t.Fatalf("the memory is %q, want the stale host gone and the file as long as before (%d bytes)", raw, len(stale))
	}
	if h := parseHosts(raw); len(h) != 1 || h[0].host != "100:42" || h[0].number != first {
		t.Fatalf("read back %+v, want only 100:42 as p%d", h, first)
	}
	again, was, err := PeerOfHost(lease, "100:42", "2:2", gone, now)
	if err != nil || !was || again != first {
		t.Fatalf("the host again: %d %v %v, want %d again", again, was, err, first)
	}
}

// hostsLease is a lease path in a private directory of its own, beside
// which the hosts' memory is kept.
func hostsLease(t *testing.T) string {
	dir := filepath.Join(testtemp.Dir(t), "mcp") // wine cannot RemoveAll a TempDir
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "server.json")
}
