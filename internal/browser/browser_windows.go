package browser

import "os/exec"

// hasDesktop: a Windows session has one.
func hasDesktop() bool { return true }

// opener asks the shell's URL handler, which parses nothing of url the way
// `cmd /c start` would.
func opener(url string) *exec.Cmd {
	return exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
}
