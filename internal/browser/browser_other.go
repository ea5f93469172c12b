//go:build !darwin && !windows

package browser

import (
	"os"
	"os/exec"
)

// hasDesktop reports whether a graphical session is there to open a
// browser in: an X or Wayland display.
func hasDesktop() bool { return os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != "" }

func opener(url string) *exec.Cmd { return exec.Command("xdg-open", url) }
