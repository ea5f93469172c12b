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
// page holding a live token stays in the user's cache. Where nothing
// would open it, no page is written at all: a cache that cannot be made
// (a container's missing home) fails nothing.
func TestTheBoardLinkIsOnlyPrintedWhereNothingOpensIt(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	url := serverURL(t, a)
	trackSources()
	notADirectory := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADirectory, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  []string
		code int
	}{
		{"no display", []string{"DISPLAY="}, 0},
		{"no opener", []string{"DISPLAY=:99", "PATH=" + t.TempDir()}, 13},
		{"no display, no cache", []string{"DISPLAY=", "XDG_CACHE_HOME=" + filepath.Join(notADirectory, "cache")}, 0},
	} {
		cache := t.TempDir()
		cmd := exec.CommandContext(ctx(t), bin, "board")
		cmd.Dir = dir
		cmd.Env = append(append(os.Environ(), "BROWSER=", "WAYLAND_DISPLAY=", "XDG_CACHE_HOME="+cache), tc.env...)
		out, _ := cmd.Output()
		if cmd.ProcessState.ExitCode() != tc.code || !strings.HasPrefix(string(out), url+"/board?token=") {
			t.Fatalf("%s: board exited %d, printed %q", tc.name, cmd.ProcessState.ExitCode(), out)
		}
		if pages, _ := filepath.Glob(filepath.Join(cache, "majordomus-mcp", "*")); len(pages) != 0 {
			t.Fatalf("%s: board left %v in the cache", tc.name, pages)
		}
	}
}
