//go:build !darwin && !windows

package scenarios

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Where nothing can open the link (no $BROWSER, no display), `board`
// prints it and writes nothing: no page holding a live token is left in
// the user's cache.
func TestTheBoardLinkIsOnlyPrintedWhereNothingCanOpenIt(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	url := serverURL(t, a)
	trackSources()
	cache := t.TempDir()
	cmd := exec.CommandContext(ctx(t), bin, "board")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "BROWSER=", "DISPLAY=", "WAYLAND_DISPLAY=", "XDG_CACHE_HOME="+cache)
	out, err := cmd.Output()
	if err != nil || !strings.HasPrefix(string(out), url+"/board?token=") {
		t.Fatalf("board: %v, printed %q", err, out)
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 0 {
		t.Fatalf("board wrote %v into the cache with nothing to open it", entries)
	}
}
