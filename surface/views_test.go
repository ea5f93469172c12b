package surface

import (
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"majordomus-mcp/example"
	"majordomus-mcp/layer"
)

// Diagnostics speak snake_case, like every other answer.
func TestDiagnosticsAreSnakeCase(t *testing.T) {
	f := newFixture(t)
	if err := example.WriteBrokenObject(f.root); err != nil {
		t.Fatal(err)
	}
	ix, err := layer.Build(f.root, 2)
	if err != nil {
		t.Fatal(err)
	}
	f.s = New(Config{Layer: fixedLayer{ix}})
	c := f.connect("codex")
	out, _ := c.tool("majordomus_repository", nil)
	var repo struct {
		Diagnostics []map[string]any `json:"diagnostics"`
	}
	mustDecode(t, out, &repo)
	if len(repo.Diagnostics) != 1 {
		t.Fatalf("diagnostics: %s", out)
	}
	d := repo.Diagnostics[0]
	if len(d) != 3 || d["level"] != "error" || d["path"] != example.BrokenObject || !strings.Contains(d["message"].(string), "not valid YAML") {
		t.Fatalf("diagnostic: %v", d)
	}
	var read struct{ Contents []mcp.TextResourceContents }
	mustDecode(t, c.rpc("resources/read", map[string]any{"uri": repositoryURI}), &read)
	if read.Contents[0].Text != string(out) {
		t.Fatalf("the resource says otherwise than the tool:\n%s\n%s", read.Contents[0].Text, out)
	}
}

// fixedLayer serves one index.
type fixedLayer struct{ ix *layer.Index }

func (l fixedLayer) Current() *layer.Index { return l.ix }
