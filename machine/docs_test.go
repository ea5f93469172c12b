package machine

import (
	"os"
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
