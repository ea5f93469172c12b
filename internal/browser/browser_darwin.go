package browser

import "os/exec"

// hasDesktop: a macOS user session has one (over ssh, open fails and says
// so).
func hasDesktop() bool { return true }

func opener(url string) *exec.Cmd { return exec.Command("open", url) }
