package imports

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// pictureStart opens the picture of the packages, a text block drawn from
// the command down.
const pictureStart = "```text\ncmd/majordomus-mcp "

// The picture of the packages draws what the rules say: the command's
// branches are exactly what cmd may import, what hangs under a branch
// (internal/node) is what it may import, and each package drawn beside
// another (a ── b) is one a may import.
func TestThePackagePictureIsTheRule(t *testing.T) {
	picture := findPicture(t)
	var drawn []string // under cmd
	branch := ""       // the last of them: what the lines drawn deeper hang under
	for line := range strings.Lines(picture) {
		pieces := strings.Split(line, "── ")
		if len(pieces) < 2 {
			continue
		}
		var names []string
		for _, p := range pieces[1:] {
			names = append(names, strings.Fields(p)[0])
		}
		under := "cmd/majordomus-mcp"
		if utf8.RuneCountInString(pieces[0]) > utf8.RuneCountInString("   ├") {
			under = branch
		} else {
			drawn, branch = append(drawn, names[0]), names[0]
		}
		for _, name := range names {
			if !slices.Contains(importRules[under].project, name) {
				t.Errorf("the picture draws %s under %s, which may not import it (its rule: %v)", name, under, importRules[under].project)
			}
			under = name
		}
	}
	rule := importRules["cmd/majordomus-mcp"].project
	slices.Sort(drawn)
	if want := slices.Sorted(slices.Values(rule)); !slices.Equal(drawn, want) {
		t.Errorf("the picture draws %v under cmd/majordomus-mcp; its rule says %v", drawn, want)
	}
}

// findPicture is the picture of the packages, in README.md or a page of
// docs/.
func findPicture(t *testing.T) string {
	t.Helper()
	pages, _ := filepath.Glob("../../docs/*.md")
	for _, page := range append([]string{"../../README.md"}, pages...) {
		raw, err := os.ReadFile(page)
		if err != nil {
			continue
		}
		if _, after, ok := strings.Cut(string(raw), pictureStart); ok {
			picture, _, _ := strings.Cut(after, "```")
			return picture
		}
	}
	t.Fatalf("no page draws the packages (a block opening %q)", pictureStart)
	return ""
}
