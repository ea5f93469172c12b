package main

import (
	"encoding/json"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
)

// The host set-ups the README and docs/hosts.md give are well formed and
// pass only flags the command has: a user pastes them as they are.
func TestTheREADMEsHostSetUpsUseRealFlags(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	hosts, err := os.ReadFile("../../docs/hosts.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "## Configuring your MCP clients")
	section, _, _ = strings.Cut(section, "\n## ")
	section += string(hosts)
	var o options
	fs := flagSet(commands()[0], &o, io.Discard) // the stdio command, which hosts spawn
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
