package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/machine"
)

// The README's state diagram is the one the process runs.
func TestTheREADMEShowsTheMachineAsItIs(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	diagram, err := machine.Graph("mermaid")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```mermaid\n"+diagram) {
		t.Fatalf("README.md's diagram differs from `majordomus-mcp graph --format mermaid`; paste it in:\n%s", diagram)
	}
}

// The README's table of packages names every package of the module, and
// only those.
func TestTheREADMENamesEveryPackage(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	section, _, _ := strings.Cut(string(readme[strings.Index(string(readme), "## Working on it"):]), "\n## ")
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
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		if pkg != "tools" && !strings.Contains(pkg, "testdata") && !strings.HasPrefix(pkg, ".") {
			found[pkg] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for pkg := range found {
		if !named[pkg] {
			t.Errorf("package %s is missing from the README's table in \"Working on it\"", pkg)
		}
	}
	for pkg := range named {
		if !found[pkg] {
			t.Errorf("the README's table names %s, which is no package", pkg)
		}
	}
}

// The host set-ups the README gives are well formed and pass only flags
// the command has: a user pastes them as they are.
func TestTheREADMEsHostSetUpsUseRealFlags(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "## Configuring your MCP clients")
	section, _, _ = strings.Cut(section, "\n## ")
	var o options
	fs := flagSet("", &o, io.Discard)
	args := regexp.MustCompile(`"(--[a-z-]+)"`).FindAllStringSubmatch(section, -1)
	if len(args) == 0 {
		t.Fatal("the host set-ups pass no flag: the section moved?")
	}
	for _, m := range args {
		if fs.Lookup(strings.TrimPrefix(m[1], "--")) == nil {
			t.Errorf("the README's host set-ups pass %s, which is no flag of majordomus-mcp", m[1])
		}
	}
	for _, block := range regexp.MustCompile("(?s)```json\n(.*?)```").FindAllStringSubmatch(section, -1) {
		var v map[string]any
		if err := json.Unmarshal([]byte(block[1]), &v); err != nil {
			t.Errorf("a JSON set-up does not parse (%v):\n%s", err, block[1])
		}
	}
}
