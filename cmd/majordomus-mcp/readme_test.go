package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"majordomus-mcp/machine"
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
