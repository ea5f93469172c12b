package main

import (
	"os"
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
