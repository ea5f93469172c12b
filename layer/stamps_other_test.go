//go:build !linux && !darwin

package layer

import (
	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
	"testing"
	"time"
)

// Where the system gives no change time a program cannot set back
// (Windows), nothing is proved unchanged: the watcher's start rebuilds.

func TestNothingIsProvedUnchangedWithoutStamps(t *testing.T) {
	root := testtemp.Dir(t)
	writeTree(t, root, stampedTree)
	_, src, err := build(root, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	if unchangedSince(root, src, 0) {
		t.Fatal("an untouched tree was proved unchanged without stamps")
	}
	log, entries := tapLogger(t)
	l, err := Open(Config{Root: root, Debounce: 20 * time.Millisecond, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	l.slack = 0
	watch(t, l)
	// The start rebuilds, finds the same content and says so; a proof
	// would have said rebuilt=false.
	e, _ := waitLog(t, entries, "layer unchanged")
	if _, proved := e.ContextMap()["rebuilt"]; proved {
		t.Fatalf("the start trusted the files (fields %v)", e.ContextMap())
	}
}
