//go:build !darwin && !windows

package scenarios

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Where nothing opens the link (no $BROWSER and no display, or a display
// without its opener), `board` prints it and leaves nothing behind: no
// page holding a live token stays in the user's cache.
func TestTheBoardLinkIsOnlyPrintedWhereNothingOpensIt(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	url := serverURL(t, a)
	trackSources()
	for _, tc := range []struct {
		name string
		env  []string
		code int
	}{
		{"no display", []string{"DISPLAY="}, 0},
		{"no opener", []string{"DISPLAY=:99", "PATH=" + t.TempDir()}, 13},
	} {
		cache := t.TempDir()
		cmd := exec.CommandContext(ctx(t), bin, "board")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), append(tc.env, "BROWSER=", "WAYLAND_DISPLAY=", "XDG_CACHE_HOME="+cache)...)
		out, _ := cmd.Output()
		if cmd.ProcessState.ExitCode() != tc.code || !strings.HasPrefix(string(out), url+"/board?token=") {
			t.Fatalf("%s: board exited %d, printed %q", tc.name, cmd.ProcessState.ExitCode(), out)
		}
		if pages, _ := filepath.Glob(filepath.Join(cache, "majordomus-mcp", "*")); len(pages) != 0 {
			t.Fatalf("%s: board left %v in the cache", tc.name, pages)
		}
	}
}
