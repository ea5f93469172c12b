package fsinbox

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/fsnotify/fsnotify"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// Events wait to be taken one a name, however many come meanwhile: a slow
// taker never makes them pile up.
func TestAnInboxKeepsOneEntryAName(t *testing.T) {
	dir := testtemp.Dir(t)
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	in := New(w)
	if err := w.Add(dir); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2000 {
		write("a.md", fmt.Sprint(i))
	}
	write("last.md", "") // once it is in, every write before it is
	last := filepath.Join(dir, "last.md")
	for {
		<-in.Ready()
		in.mu.Lock()
		n, done := len(in.ops), in.ops[last] != 0
		in.mu.Unlock()
		if done {
			if n != 2 {
				t.Fatalf("%d entries wait for 2 names", n)
			}
			return
		}
	}
}
