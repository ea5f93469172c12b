// Package docs holds the tests that keep the repository's documents true:
// the package table of architecture.md, the sections that comments and
// documents name, and the rule that nothing points outside the repository.
package docs

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// tracked returns every file git tracks in the repository, relative to its
// root, with the root.
func tracked(t *testing.T) (string, []string) {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		t.Fatal("git ls-files lists nothing")
	}
	return root, files
}

// read returns a tracked file's contents, or nil for one that is gone from
// the working tree (deleted, not yet committed) or is not a regular file.
func read(t *testing.T, root, file string) []byte {
	t.Helper()
	path := filepath.Join(root, filepath.FromSlash(file))
	info, err := os.Lstat(path)
	if err != nil || !info.Mode().IsRegular() {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// The repository stands alone: no file names a document outside it. The
// patterns are built here so that this file does not name them itself.
func TestNothingPointsOutsideTheRepository(t *testing.T) {
	outside := []*regexp.Regexp{
		regexp.MustCompile(`\.\./` + `shared\b`),
		regexp.MustCompile(`/work/` + `shared\b`),
		// a section of the outside contract, even wrapped over two comment lines
		regexp.MustCompile(`SP` + `EC[\s/#]*§`),
	}
	root, files := tracked(t)
	for _, f := range files {
		data := read(t, root, f)
		for _, o := range outside {
			for _, loc := range o.FindAllIndex(data, -1) {
				line := 1 + bytes.Count(data[:loc[0]], []byte("\n"))
				t.Errorf("%s:%d names %q, outside the repository: name a section of docs/ or a scenario", f, line, data[loc[0]:loc[1]])
			}
		}
	}
}

var (
	// docs/<name>.md with an optional #section, as a comment or a
	// document names it (also ../docs/… in a Markdown link), never a path
	// that merely ends in docs/ (a test's .ai/repo/docs/).
	docsRef = regexp.MustCompile(`(?:^|[\s(\x60\[]|\.\./)docs/([a-z-]+\.md)(?:#([a-z0-9-]+))?`)
	// The root README's sections, named from outside Markdown links.
	readmeRef = regexp.MustCompile(`(?:^|[\s(])README\.md#([a-z0-9-]+)`)
	// A Markdown link to a file beside this one, or to a section of it.
	localLink = regexp.MustCompile(`\]\(([a-z-]+\.md)?(?:#([a-z0-9-]+))?\)`)
	heading   = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
)

// anchors returns the anchors a Markdown file's headings get, as GitHub
// makes them: lower case, punctuation dropped, spaces made hyphens.
func anchors(doc []byte) map[string]bool {
	got := map[string]bool{}
	for _, m := range heading.FindAllSubmatch(doc, -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(string(m[1])) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9'):
				b.WriteRune(r)
			}
		}
		got[b.String()] = true
	}
	return got
}

// Every section of docs/ (or of the README) that a comment or a document
// names exists, so that a reader who follows one finds what it promises.
func TestEveryNamedSectionExists(t *testing.T) {
	root, files := tracked(t)
	sections := map[string]map[string]bool{}
	sectionsOf := func(file string) map[string]bool {
		if s, ok := sections[file]; ok {
			return s
		}
		data := read(t, root, file)
		if data == nil {
			sections[file] = nil
			return nil
		}
		sections[file] = anchors(data)
		return sections[file]
	}
	check := func(from string, n int, file, anchor string) {
		s := sectionsOf(file)
		switch {
		case s == nil:
			t.Errorf("%s:%d names %s, which does not exist", from, n, file)
		case anchor != "" && !s[anchor]:
			t.Errorf("%s:%d names %s#%s, which has no such section", from, n, file, anchor)
		}
	}
	named := 0
	for _, f := range files {
		data := read(t, root, f)
		for n, line := range strings.Split(string(data), "\n") {
			for _, m := range docsRef.FindAllStringSubmatch(line, -1) {
				check(f, n+1, "docs/"+m[1], m[2])
				named++
			}
			for _, m := range readmeRef.FindAllStringSubmatch(line, -1) {
				check(f, n+1, "README.md", m[1])
				named++
			}
			if !strings.HasSuffix(f, ".md") {
				continue
			}
			for _, m := range localLink.FindAllStringSubmatch(line, -1) {
				target := f
				if m[1] != "" {
					target = filepath.ToSlash(filepath.Join(filepath.Dir(f), m[1]))
				}
				check(f, n+1, target, m[2])
				named++
			}
		}
	}
	if named == 0 {
		t.Fatal("no file names a section: the patterns are wrong")
	}
}

// The package table of architecture.md names every package of the module,
// and only those.
func TestTheDocsNameEveryPackage(t *testing.T) {
	root, files := tracked(t)
	doc := string(read(t, root, "docs/architecture.md"))
	_, section, ok := strings.Cut(doc, "\n## Packages\n")
	if !ok {
		t.Fatal(`docs/architecture.md has no "## Packages" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	named := map[string]bool{}
	for line := range strings.Lines(section) {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cell := strings.Split(line, "|")[1]
		for _, part := range strings.Split(cell, ",") {
			named[strings.Trim(strings.TrimSpace(part), "`")] = true
		}
	}
	found := map[string]bool{}
	for _, f := range files {
		if !strings.HasSuffix(f, ".go") || strings.HasSuffix(f, "_test.go") || read(t, root, f) == nil {
			continue
		}
		pkg := filepath.ToSlash(filepath.Dir(f))
		if pkg != "tools" && !strings.Contains(pkg, "testdata") && !strings.HasPrefix(pkg, ".") {
			found[pkg] = true
		}
	}
	for pkg := range found {
		if !named[pkg] {
			t.Errorf("package %s is missing from the table in docs/architecture.md", pkg)
		}
	}
	for pkg := range named {
		if !found[pkg] {
			t.Errorf("the table in docs/architecture.md names %s, which is no package", pkg)
		}
	}
}
