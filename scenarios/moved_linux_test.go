package scenarios

import (
	"os"
	"testing"
)

// A checkout moved while served (mv), with something made at its old path
// since (here an empty directory: the server takes its checkout for gone
// and serves on), is still served by that server: a client started where
// the checkout is now finds its lease held by its owner (the lock tells),
// not the lease at the old path, and attaches. (It took the lease for a
// copy's, waited the busy grace, and started a second server for the
// checkout beside the first.)
func TestAMovedCheckoutWithSomethingAtItsOldPathKeepsOneServer(t *testing.T) {
	dir := checkoutTimed(t, "  busy_grace_seconds: 15\n")
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	url := serverURL(t, a)
	moved := dir + "-moved"
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir); _ = os.Rename(moved, dir) }) // as the checkout's own cleanup finds it
	call(t, a, "majordomus_list", nil)
	if _, err := a.WaitLog(ctx(t), "the checkout is gone from "+dir); err != nil {
		t.Fatal(err)
	}
	d := shared(t, moved)
	initialize(t, d, "codex")
	attached(t, d, url)
	if board := peersOf(t, d); board.Count != 2 {
		t.Fatalf("the moved checkout's board: %+v", board)
	}
}
