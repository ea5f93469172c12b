// Package browser opens a link in the desktop's browser, for a person:
// `majordomus-mcp board`'s link, as Jupyter opens its own. It opens
// nothing where no desktop is (a server, a CI runner, an ssh session on
// Linux), and never waits for the browser, which may outlive the caller.
package browser

// Open hands url to the desktop's opener when a desktop exists, and says
// whether it did.
func Open(url string) (bool, error) {
	if !hasDesktop() {
		return false, nil
	}
	c := opener(url)
	if err := c.Start(); err != nil {
		return false, err
	}
	return true, c.Process.Release()
}
