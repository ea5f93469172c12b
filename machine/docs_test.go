package machine

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The diagram in docs/state-machine.md is the one the process runs.
func TestTheDocsShowTheMachineAsItIs(t *testing.T) {
	doc, err := os.ReadFile("../docs/state-machine.md")
	if err != nil {
		t.Fatal(err)
	}
	diagram, err := Graph("mermaid")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "```mermaid\n"+diagram) {
		t.Fatalf("docs/state-machine.md's diagram differs from `majordomus-mcp graph --format mermaid`; paste it in:\n%s", diagram)
	}
}

// The prose of docs/state-machine.md names every trigger of the graph, and
// no other.
func TestTheDocsNameEveryTrigger(t *testing.T) {
	doc, err := os.ReadFile("../docs/state-machine.md")
	if err != nil {
		t.Fatal(err)
	}
	_, prose, _ := strings.Cut(string(doc), "Its triggers are facts")
	prose, _, _ = strings.Cut(prose, "\n\n")
	graph, err := Graph("json")
	if err != nil {
		t.Fatal(err)
	}
	want := names(regexp.MustCompile(`"trigger": "([a-z-]+)"`), graph)
	if got := names(regexp.MustCompile("`([a-z-]+)`"), prose); !slices.Equal(got, want) {
		t.Errorf("docs/state-machine.md names the triggers\n%q\nthe graph has\n%q", got, want)
	}
}

// names are the distinct first groups of re in s, sorted.
func names(re *regexp.Regexp, s string) []string {
	var out []string
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return slices.Compact(out)
}
