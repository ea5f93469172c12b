package scenarios

// What the README promises in its tables, held against the binary: the
// tools' arguments, and the wording of the log lines that operators and
// tests match on.

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// readmeSection returns the README's section under heading (its "## " or
// "### " line), up to the next heading of any level.
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("the README has no %q section", heading)
	}
	if i := strings.Index(section, "\n#"); i >= 0 {
		section = section[:i]
	}
	return section
}

// readmeRows returns the cells of each row of a section's table.
func readmeRows(section string) [][]string {
	var rows [][]string
	for line := range strings.Lines(section) {
		if strings.HasPrefix(line, "| `") {
			cells := strings.Split(strings.TrimSpace(line), "|")
			rows = append(rows, cells[1:len(cells)-1])
		}
	}
	return rows
}

var codeSpan = regexp.MustCompile("`([^`]+)`")

// schemaOf is a tool as tools/list answers it: its name and arguments.
type schemaOf struct {
	Name        string `json:"name"`
	InputSchema struct {
		Properties map[string]any `json:"properties"`
		Required   []string       `json:"required"`
	} `json:"inputSchema"`
}

// The README's table of tools names each tool's arguments, an optional one
// marked `?`: each is in the tool's input schema, required unless marked,
// and the schema has no other.
func TestTheREADMEsToolTableIsTheToolsSchema(t *testing.T) {
	rows := readmeRows(readmeSection(t, "### Tools"))
	if len(rows) == 0 {
		t.Fatal("the README's tool table has no row")
	}
	p := start(t, checkout(t), "--standalone")
	initialize(t, p, "claude-code")
	list, err := p.Call(ctx(t), "tools/list", nil)
	if err != nil || list.Error != nil {
		t.Fatalf("tools/list: %v %v", err, list.Error)
	}
	var tools struct {
		Tools []schemaOf `json:"tools"`
	}
	if err := json.Unmarshal(list.Result, &tools); err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != len(rows) {
		t.Errorf("the README lists %d tools; the server %d", len(rows), len(tools.Tools))
	}
	for _, row := range rows {
		name := strings.Trim(strings.TrimSpace(row[0]), "`")
		i := slices.IndexFunc(tools.Tools, func(tool schemaOf) bool { return tool.Name == name })
		if i < 0 {
			t.Errorf("the README lists %s, which the server does not have", name)
			continue
		}
		schema := tools.Tools[i].InputSchema
		documented := map[string]bool{}
		for _, m := range codeSpan.FindAllStringSubmatch(row[1], -1) {
			arg, optional := strings.CutSuffix(m[1], "?")
			arg = strings.TrimSuffix(arg, "[]")
			documented[arg] = true
			if _, ok := schema.Properties[arg]; !ok {
				t.Errorf("the README gives %s the argument %s, which its schema does not have", name, arg)
			}
			if required := slices.Contains(schema.Required, arg); required == optional {
				t.Errorf("the README marks %s's argument %s optional: %v; its schema makes it required: %v", name, arg, optional, required)
			}
		}
		for arg := range schema.Properties {
			if !documented[arg] {
				t.Errorf("%s takes %s, which the README does not list", name, arg)
			}
		}
	}
}

// documentedLine is a line of the README's Logs table, as a pattern: each
// <placeholder> and … stands for any text.
type documentedLine struct {
	text    string
	prefix  string // what every message it documents begins with
	pattern *regexp.Regexp
}

var placeholder = regexp.MustCompile(`<[^>]*>|…`)

// documentedLogLines returns the lines the README's Logs table quotes.
func documentedLogLines(t *testing.T) []documentedLine {
	t.Helper()
	var lines []documentedLine
	for _, row := range readmeRows(readmeSection(t, "## Logs")) {
		for _, m := range codeSpan.FindAllStringSubmatch(row[0], -1) {
			var re strings.Builder
			re.WriteString("^")
			rest := m[1]
			for _, loc := range placeholder.FindAllStringIndex(m[1], -1) {
				re.WriteString(regexp.QuoteMeta(m[1][len(m[1])-len(rest) : loc[0]]))
				re.WriteString(".*")
				rest = m[1][loc[1]:]
			}
			re.WriteString(regexp.QuoteMeta(rest) + "$")
			prefix := m[1]
			if loc := placeholder.FindStringIndex(m[1]); loc != nil {
				prefix = m[1][:loc[0]]
			}
			lines = append(lines, documentedLine{m[1], prefix, regexp.MustCompile(re.String())})
		}
	}
	if len(lines) == 0 {
		t.Fatal("the README's Logs table quotes no line")
	}
	return lines
}

// inREADMEsWords fails the test for each line of logs whose message begins
// as a line of the README's Logs table does but is none of those it quotes:
// the README says that wording is stable, and operators match on it.
func inREADMEsWords(t *testing.T, logs []string) {
	t.Helper()
	documented := documentedLogLines(t)
	for _, line := range logs {
		var entry struct {
			Msg string `json:"msg"`
		}
		if json.Unmarshal([]byte(line), &entry) != nil {
			continue
		}
		var alike []string
		matched := false
		for _, d := range documented {
			if d.pattern.MatchString(entry.Msg) {
				matched = true
				break
			}
			if d.prefix != "" && strings.HasPrefix(entry.Msg, d.prefix) {
				alike = append(alike, d.text)
			}
		}
		if !matched && len(alike) > 0 {
			t.Errorf("logged %q, which the README's Logs table words otherwise: %q", entry.Msg, alike)
		}
	}
}

// A leaseholder whose lease is taken from it while its own client is there
// (the ordinary case: every host's first client) says so in the words the
// README's Logs table gives, as it does when its own client has gone; so
// does its old server, which a plain HTTP session kept serving, when that
// session ends.
func TestALostLeaseIsLoggedInTheREADMEsWords(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	old := plainSession{t: t, c: connect(t, dir)}
	old.sid = openPlainSession(t, old.c)
	if err := os.Remove(leasePath(dir)); err != nil {
		t.Fatal(err)
	}
	if _, err := a.WaitLog(ctx(t), "the lease is no longer this server's"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.WaitLog(ctx(t), "took over as the shared server"); err != nil {
		t.Fatal(err)
	}
	old.end()
	if _, err := a.WaitLog(ctx(t), "http session closed", `"reason":"delete"`); err != nil {
		t.Fatal(err)
	}
	if _, err := a.WaitLog(ctx(t), "shared server stopped"); err != nil {
		t.Fatal(err)
	}
	inREADMEsWords(t, a.Logs())
}
