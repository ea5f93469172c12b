package browser

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// $BROWSER names the browser as Python's webbrowser module reads it: the
// first entry that can be found, the url in place of "%s" or after the
// arguments, one argument whatever it holds.
func TestTheBrowserNamedInTheEnvironmentIsUsed(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	url := "file:///home/u/.cache/majordomus-mcp/board 1.html; rm -rf ~"
	missing := filepath.Join(os.TempDir(), fmt.Sprintf("majordomus-no-such-browser-%d", os.Getpid())) // never made
	for _, tc := range []struct {
		list string
		want []string
	}{
		{self, []string{self, url}},
		{self + " --new-window", []string{self, "--new-window", url}},
		{self + " --open=%s --quiet", []string{self, "--open=" + url, "--quiet"}},
		{missing + string(filepath.ListSeparator) + self, []string{self, url}},
	} {
		c := named(tc.list, url)
		if c == nil || !slices.Equal(c.Args, tc.want) {
			t.Errorf("BROWSER=%q: %v, want %q", tc.list, c, tc.want)
		}
	}
	for _, list := range []string{"", missing, string(filepath.ListSeparator)} {
		if c := named(list, url); c != nil {
			t.Errorf("BROWSER=%q names %q", list, c.Args)
		}
	}
}
