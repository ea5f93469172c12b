// Package browser opens a link in a browser, for a person: `majordomus-mcp
// board`'s link, as Jupyter opens its own. The browser named in $BROWSER
// (a command, as Python's webbrowser module and xdg-open read it) is
// used where it is set; otherwise the desktop's opener, and nothing where
// no desktop is (a server, a CI runner, an ssh session on Linux). It never
// waits for the browser, which may outlive the caller.
package browser

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Open hands url to the browser $BROWSER names or, when a desktop exists,
// to the desktop's opener, and says whether it did.
func Open(url string) (bool, error) {
	c := named(os.Getenv("BROWSER"), url)
	if c == nil {
		if !hasDesktop() {
			return false, nil
		}
		c = opener(url)
	}
	if err := c.Start(); err != nil {
		return false, err
	}
	return true, c.Process.Release()
}

// Found says whether Open would hand a link to a browser: $BROWSER names
// one that can be found, or a desktop exists.
func Found() bool { return named(os.Getenv("BROWSER"), "") != nil || hasDesktop() }

// named is the command of the first browser of list (a $BROWSER: entries
// separated as in PATH, each a command with its arguments, "%s" standing
// for the url, which is appended when none does) that can be found, or
// nil. The url is one argument: no shell reads it.
func named(list, url string) *exec.Cmd {
	for _, entry := range filepath.SplitList(list) {
		fields := strings.Fields(entry)
		if len(fields) == 0 {
			continue
		}
		path, err := exec.LookPath(fields[0])
		if err != nil {
			continue
		}
		args, placed := fields[1:], false
		for i, a := range args {
			if strings.Contains(a, "%s") {
				args[i], placed = strings.ReplaceAll(a, "%s", url), true
			}
		}
		if !placed {
			args = append(args, url)
		}
		return exec.Command(path, args...)
	}
	return nil
}
