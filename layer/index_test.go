package layer

import (
	"encoding/json"
	"fmt"
	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// realistic is a small but realistic layer: rules, an ADR, a prompt.
var realistic = map[string]string{
	".ai/manifest.yaml": testManifest,
	".ai/repo/rules/project/alpha.v1.md": `---
id: project.alpha
version: 1
kind: rule
title: Alpha rule
description: Keep modules small.
status: active
tags: [style, Modules]
depends_on: [project.beta]
---
Modules stay under four hundred lines.
`,
	".ai/repo/rules/project/beta.md": "---\r\nid: project.beta\r\nkind: rule\r\nversion: \"2.1\"\r\ntitle: Beta\r\n---\r\nErrors are values.\r\n",
	".ai/repo/adrs/0044-per-checkout.md": `---
id: "0044"
kind: adr
version: 1.0
title: One server per checkout
status: accepted
tags: architecture
date: 2024-05-01
---
# Decision
Every linked worktree has its own server.
`,
	".ai/repo/prompts/continue.md": `---
id: continue
kind: prompt
---
Continue where the last session stopped.
`,
	".ai/repo/README.md":             "# The layer\nNo front matter here.\n",
	".ai/repo/notes.txt":             "not markdown",
	".ai/repo/.drafts/hidden.md":     "---\nid: hidden\nkind: rule\n---\n",
	".ai/repo/.hidden.md":            "---\nid: hidden2\nkind: rule\n---\n",
	".ai/local/state/secret.md":      "---\nid: secret\nkind: rule\n---\n",
	".ai/local/rules/also-secret.md": "---\nid: [broken\n---\n",
	"docs/outside.md":                "---\nid: outside\nkind: rule\n---\n",
}

func buildTree(t *testing.T, files map[string]string) *Index {
	t.Helper()
	root := testtemp.Dir(t)
	writeTree(t, root, files)
	ix, err := Build(root, 7)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func TestBuildRealistic(t *testing.T) {
	ix := buildTree(t, realistic)
	type row struct{ URI, Kind, ID, Version, Title, Status, Path string }
	var got []row
	for _, o := range ix.Objects {
		got = append(got, row{o.URI, o.Kind, o.ID, o.Version, o.Title, o.Status, o.Path})
	}
	want := []row{
		{"majordomus://adr/0044@1.0", "adr", "0044", "1.0", "One server per checkout", "accepted", ".ai/repo/adrs/0044-per-checkout.md"},
		{"majordomus://prompt/continue", "prompt", "continue", "", "", "", ".ai/repo/prompts/continue.md"},
		{"majordomus://rule/project.alpha@1", "rule", "project.alpha", "1", "Alpha rule", "active", ".ai/repo/rules/project/alpha.v1.md"},
		{"majordomus://rule/project.beta@2.1", "rule", "project.beta", "2.1", "Beta", "", ".ai/repo/rules/project/beta.md"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("objects =\n%v\nwant\n%v", got, want)
	}
	if ix.State() != "ok" || ix.Generation != 7 || ix.Name != filepath.Base(ix.Root) {
		t.Errorf("state %q generation %d name %q", ix.State(), ix.Generation, ix.Name)
	}
	if len(ix.RepositoryID) != 32 || ix.RepositoryID != RepositoryID(ix.Root) || strings.ToLower(ix.RepositoryID) != ix.RepositoryID {
		t.Errorf("repository id %q", ix.RepositoryID)
	}
	wantDiags := []Diagnostic{{LevelWarning, ".ai/repo/README.md", "no front matter (the file does not start with a --- line): not an object"}}
	if !reflect.DeepEqual(ix.Diagnostics, wantDiags) {
		t.Errorf("diagnostics = %v, want %v", ix.Diagnostics, wantDiags)
	}

	alpha, ok := ix.Lookup("majordomus://rule/project.alpha@1")
	if !ok {
		t.Fatal("Lookup alpha failed")
	}
	if !reflect.DeepEqual(alpha.Tags, []string{"style", "Modules"}) || alpha.Description != "Keep modules small." {
		t.Errorf("alpha tags %v description %q", alpha.Tags, alpha.Description)
	}
	if alpha.Body != "Modules stay under four hundred lines.\n" {
		t.Errorf("alpha body %q", alpha.Body)
	}
	if deps, _ := alpha.Front["depends_on"].([]any); !reflect.DeepEqual(deps, []any{"project.beta"}) || alpha.Front["version"] != 1 {
		t.Errorf("alpha front %#v", alpha.Front)
	}
	adr, _ := ix.Lookup("majordomus://adr/0044@1.0")
	if adr.Front["date"] != "2024-05-01" || !reflect.DeepEqual(adr.Tags, []string{"architecture"}) {
		t.Errorf("adr front %#v tags %v", adr.Front, adr.Tags)
	}
	if beta, _ := ix.Lookup("majordomus://rule/project.beta@2.1"); beta.Body != "Errors are values.\r\n" {
		t.Errorf("beta body %q", beta.Body)
	}
	if o, ok := ix.Lookup("majordomus://prompt/continue"); !ok || o.ID != "continue" {
		t.Error("Lookup continue failed")
	}
	if o, ok := ix.Lookup("majordomus://rule/project.alpha"); !ok || o.Version != "1" {
		t.Error("version-less Lookup of the only alpha failed")
	}
	if _, ok := ix.Lookup("majordomus://rule/project"); ok {
		t.Error("Lookup of a prefix succeeded")
	}
	if got := ix.Kinds(); !reflect.DeepEqual(got, map[string]int{"adr": 1, "prompt": 1, "rule": 2}) {
		t.Errorf("Kinds = %v", got)
	}
	if got := uris(ix.List("rule", "")); !reflect.DeepEqual(got, []string{"majordomus://rule/project.alpha@1", "majordomus://rule/project.beta@2.1"}) {
		t.Errorf("List(rule) = %v", got)
	}
	if got := uris(ix.List("", "modules")); !reflect.DeepEqual(got, []string{"majordomus://rule/project.alpha@1"}) {
		t.Errorf("List(tag modules) = %v", got)
	}
	if got := ix.List("skill", ""); len(got) != 0 {
		t.Errorf("List(skill) = %v", got)
	}
}

func TestBuildDiagnostics(t *testing.T) {
	ok := "---\nid: fine\nkind: rule\n---\nbody\n"
	tests := []struct {
		name      string
		files     map[string]string
		wantState string
		wantURIs  []string
		wantDiags []Diagnostic
	}{
		{
			name:      "broken YAML",
			files:     map[string]string{".ai/repo/a.md": ok, ".ai/repo/rules/broken.md": "---\nid: x\nkind: rule\ntitle: : bad\n---\n"},
			wantState: "degraded",
			wantURIs:  []string{"majordomus://rule/fine"},
			wantDiags: []Diagnostic{{LevelError, ".ai/repo/rules/broken.md", "front matter is not valid YAML: yaml: line 4: mapping values are not allowed in this context"}},
		},
		{
			name:      "Markdown named in capitals",
			files:     map[string]string{".ai/repo/a.md": ok, ".ai/repo/NOTES.MD": ok, ".ai/repo/b.Md": ok},
			wantState: "ok",
			wantURIs:  []string{"majordomus://rule/fine"},
			wantDiags: []Diagnostic{{LevelWarning, ".ai/repo/NOTES.MD", "named .MD, not .md: skipped"}, {LevelWarning, ".ai/repo/b.Md", "named .Md, not .md: skipped"}},
		},
		{
			name:      "missing id",
			files:     map[string]string{".ai/repo/noid.md": "---\nkind: rule\ntitle: x\n---\n"},
			wantState: "degraded",
			wantDiags: []Diagnostic{{LevelError, ".ai/repo/noid.md", "front matter needs a non-empty string id"}},
		},
		{
			name:      "empty kind",
			files:     map[string]string{".ai/repo/nokind.md": "---\nid: x\nkind: \"\"\n---\n"},
			wantState: "degraded",
			wantDiags: []Diagnostic{{LevelError, ".ai/repo/nokind.md", "front matter needs a non-empty string kind"}},
		},
		{
			name:      "bad kind",
			files:     map[string]string{".ai/repo/k.md": "---\nid: x\nkind: Rule\n---\n"},
			wantState: "degraded",
			wantDiags: []Diagnostic{{LevelError, ".ai/repo/k.md", `kind "Rule" must match ^[a-z][a-z0-9_-]*$`}},
		},
		{
			name:      "id unfit for a URI",
			files:     map[string]string{".ai/repo/i.md": "---\nid: a/b\nkind: rule\n---\n"},
			wantState: "degraded",
			wantDiags: []Diagnostic{{LevelError, ".ai/repo/i.md", `id "a/b" contains '/', not allowed in an object URI`}},
		},
		{
			// each read as another URI by a client, or shown as another
			name: "ids with a character a URI does not show as it is",
			files: map[string]string{
				".ai/repo/nbsp.md": "---\nid: \"a\\u00a0b\"\nkind: rule\n---\n",
				".ai/repo/rlo.md":  "---\nid: \"a\\u202eb\"\nkind: rule\n---\n",
				".ai/repo/zwsp.md": "---\nid: \"a\\u200bb\"\nkind: rule\n---\n",
				".ai/repo/c1.md":   "---\nid: \"a\\u0080b\"\nkind: rule\n---\n",
				".ai/repo/dots.md": "---\nid: \"..\"\nkind: rule\n---\n",
				".ai/repo/ideo.md": "---\nid: \"a\\u3000b\"\nkind: rule\n---\n",
				".ai/repo/cafe.md": "---\nid: café\nkind: rule\n---\n",
				".ai/repo/fa.md":   "---\nid: \"\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645\"\nkind: rule\n---\n", // a joiner the word needs
				".ai/repo/zwj.md":  "---\nid: \"a\u200db\"\nkind: rule\n---\n",                                         // one that only hides: "ab"
				".ai/repo/zwj2.md": "---\nid: \"caf\u00e9\u200d\u00e9\"\nkind: rule\n---\n",                            // and "caféé"
				".ai/repo/ksa.md":  "---\nid: \"\u0915\u094d\u200d\u0937\"\nkind: rule\n---\n",                         // after a virama: needed
			},
			wantState: "degraded",
			wantURIs:  []string{"majordomus://rule/café", "majordomus://rule/\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645", "majordomus://rule/\u0915\u094d\u200d\u0937"},
			wantDiags: []Diagnostic{
				{LevelError, ".ai/repo/c1.md", `id "a\u0080b" contains whitespace, a control or a format character, not allowed in an object URI`},
				{LevelError, ".ai/repo/dots.md", `id ".." contains only dots, a path step, not allowed in an object URI`},
				{LevelError, ".ai/repo/ideo.md", `id "a\u3000b" contains whitespace, a control or a format character, not allowed in an object URI`},
				{LevelError, ".ai/repo/nbsp.md", `id "a\u00a0b" contains whitespace, a control or a format character, not allowed in an object URI`},
				{LevelError, ".ai/repo/rlo.md", `id "a\u202eb" contains whitespace, a control or a format character, not allowed in an object URI`},
				{LevelError, ".ai/repo/zwj.md", `id "a\u200db" contains whitespace, a control or a format character, not allowed in an object URI`},
				{LevelError, ".ai/repo/zwj2.md", `id "café\u200dé" contains whitespace, a control or a format character, not allowed in an object URI`},
				{LevelError, ".ai/repo/zwsp.md", `id "a\u200bb" contains whitespace, a control or a format character, not allowed in an object URI`},
			},
		},
		{
			name:      "unterminated front matter",
			files:     map[string]string{".ai/repo/open.md": "---\nid: x\nkind: rule\n"},
			wantState: "degraded",
			wantDiags: []Diagnostic{{LevelError, ".ai/repo/open.md", "front matter is not closed by a --- line"}},
		},
		{
			name:      "a second document after the end of the first",
			files:     map[string]string{".ai/repo/two.md": "---\nid: a\nkind: rule\n...\nfoo: [\n---\n"},
			wantState: "degraded",
			wantDiags: []Diagnostic{{LevelError, ".ai/repo/two.md", "front matter is not valid YAML: yaml: line 4: did not find expected <document start>"}},
		},
		{
			name:      "a front matter too long to parse on every rebuild",
			files:     map[string]string{".ai/repo/long.md": "---\nid: a\nkind: rule\n" + strings.Repeat("# pad\n", 50_000) + "---\n"},
			wantState: "degraded",
			wantDiags: []Diagnostic{{LevelError, ".ai/repo/long.md", "front matter is 300021 bytes, over the 262144-byte limit"}},
		},
		{
			name:      "front matter not a mapping",
			files:     map[string]string{".ai/repo/list.md": "---\n- a\n---\n"},
			wantState: "degraded",
			wantDiags: []Diagnostic{{LevelError, ".ai/repo/list.md", "front matter is not a mapping"}},
		},
		{
			name:      "no front matter is only a warning",
			files:     map[string]string{".ai/repo/a.md": ok, ".ai/repo/plain.md": "# Just prose\n---\n"},
			wantState: "ok",
			wantURIs:  []string{"majordomus://rule/fine"},
			wantDiags: []Diagnostic{{LevelWarning, ".ai/repo/plain.md", "no front matter (the file does not start with a --- line): not an object"}},
		},
		{
			name:      "duplicate URI: first by path wins",
			files:     map[string]string{".ai/repo/a/dup.md": ok, ".ai/repo/a.md": ok},
			wantState: "degraded",
			wantURIs:  []string{"majordomus://rule/fine"},
			wantDiags: []Diagnostic{{LevelError, ".ai/repo/a/dup.md", "duplicate URI majordomus://rule/fine: already defined by .ai/repo/a.md"}},
		},
		{
			name:      "odd optional fields are warnings",
			files:     map[string]string{".ai/repo/o.md": "---\nid: o\nkind: rule\ntitle: {a: 1}\ntags: [x, [y], x, 3]\n---\n"},
			wantState: "ok",
			wantURIs:  []string{"majordomus://rule/o"},
			wantDiags: []Diagnostic{
				{LevelWarning, ".ai/repo/o.md", "tags must be a list of words: non-text tags ignored"},
				{LevelWarning, ".ai/repo/o.md", "title is not text: ignored"},
			},
		},
		{
			name:      ".ai/repo absent",
			files:     map[string]string{".ai/local/x.md": ok},
			wantState: "ok",
			wantDiags: []Diagnostic{{LevelWarning, ".ai/repo", "directory absent: the index is empty"}},
		},
		{
			name:      ".ai/local ignored",
			files:     map[string]string{".ai/repo/a.md": ok, ".ai/local/broken.md": "---\n[\n---\n", ".ai/local/dup.md": ok},
			wantState: "ok",
			wantURIs:  []string{"majordomus://rule/fine"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.files[".ai/manifest.yaml"] = testManifest
			ix := buildTree(t, tt.files)
			if ix.State() != tt.wantState {
				t.Errorf("State = %q, want %q", ix.State(), tt.wantState)
			}
			if got := uris(ix.Objects); !reflect.DeepEqual(got, tt.wantURIs) {
				t.Errorf("objects = %v, want %v", got, tt.wantURIs)
			}
			if !reflect.DeepEqual(ix.Diagnostics, tt.wantDiags) {
				t.Errorf("diagnostics =\n%q\nwant\n%q", ix.Diagnostics, tt.wantDiags)
			}
		})
	}
}

func TestBuildNotADirectory(t *testing.T) {
	if _, err := Build(testtemp.Dir(t)+"/missing", 1); err == nil {
		t.Fatal("Build of a missing root succeeded")
	}
}

func TestChanged(t *testing.T) {
	base := map[string]string{
		".ai/repo/a.md": "---\nid: a\nkind: rule\n---\nA\n",
		".ai/repo/b.md": "---\nid: b\nkind: rule\ntags: [x]\n---\nB\n",
		".ai/repo/c.md": "---\nid: c\nkind: rule\n---\nC\n",
		".ai/repo/d.md": "---\nid: d\nkind: rule\n---\nD\n",
	}
	next := map[string]string{
		".ai/repo/a.md":    "---\nid: a\nkind: rule\n---\nA\n",             // same
		".ai/repo/b.md":    "---\nid: b\nkind: rule\ntags: [y]\n---\nB\n",  // front matter
		".ai/repo/c.md":    "---\nid: c\nkind: rule\n---\nC changed\n",     // body
		".ai/repo/e.md":    "---\nid: e\nkind: rule\n---\nE\n",             // added; d removed
		".ai/repo/note.md": "---\nid: a2\nkind: rule\n# comment\n---\nA\n", // added
	}
	old, cur := buildTree(t, base), buildTree(t, next)
	want := []string{"majordomus://rule/a2", "majordomus://rule/b", "majordomus://rule/c", "majordomus://rule/d", "majordomus://rule/e"}
	if got := Changed(old, cur); !reflect.DeepEqual(got, want) {
		t.Errorf("Changed = %v, want %v", got, want)
	}
	if got := Changed(old, buildTree(t, base)); len(got) != 0 {
		t.Errorf("Changed(same) = %v", got)
	}
	if got := Changed(nil, old); len(got) != 4 {
		t.Errorf("Changed(nil, old) = %v", got)
	}
}

func uris(objs []Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.URI)
	}
	return out
}

func TestBuildSymlinkedRepo(t *testing.T) {
	base := testtemp.Dir(t)
	shared := filepath.Join(base, "shared")
	writeTree(t, shared, map[string]string{"rules/a.md": "---\nid: a\nkind: rule\n---\n"})
	root := filepath.Join(base, "checkout")
	writeTree(t, root, map[string]string{".ai/manifest.yaml": testManifest})
	if err := os.Symlink(shared, filepath.Join(root, ".ai", "repo")); err != nil {
		t.Fatal(err)
	}
	ix, err := Build(root, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(ix.Objects) != 1 || ix.Objects[0].Path != ".ai/repo/rules/a.md" {
		t.Fatalf("objects %v diagnostics %v", ix.Objects, ix.Diagnostics)
	}
}

// A version merged from an anchor is written as it is written there, as
// one set directly is: "1.0", not the number's "1".
func TestAMergedVersionKeepsItsLiteral(t *testing.T) {
	for _, data := range []string{
		"---\nbase: &b {version: 1.0, kind: adr}\n<<: *b\nid: x\n---\n",
		"---\nbase: &b {version: 1.0}\nmore: &m {kind: adr}\n<<: [*m, *b]\nid: x\n---\n",
		"---\nid: x\nkind: adr\nversion: 1.0\n---\n",
		"---\nk: &v version\nid: x\nkind: adr\n*v : 1.0\n---\n", // the key an alias
	} {
		r := parseObject(".ai/repo/h.md", []byte(data))
		if !r.ok || r.obj.URI != "majordomus://adr/x@1.0" {
			t.Errorf("%q: %v %q %v", data, r.ok, r.obj.URI, r.diags)
		}
	}
}

func TestParseObjectHostile(t *testing.T) {
	bomb := "---\nid: x\nkind: y\na: &a [1,1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n" +
		"c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\n---\n"
	tests := []struct {
		name, data, want string // want: substring of the error diagnostic, "" = object
	}{
		{"alias bomb", bomb, "too many values"},
		{"alias bomb of text", "---\nid: x\nkind: y\na: &a " + strings.Repeat("x", 100<<10) + "\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: [*b,*b]\n---\n",
			"over 1048576 bytes (aliases expanded)"},
		{"self-referring anchor", "---\nid: x\nkind: y\na: &x [*x]\n---\n", "refers to itself"},
		{"nested too deeply", "---\nid: x\nkind: y\na: " + strings.Repeat("[", 300) + strings.Repeat("]", 300) + "\n---\n", "nested too deeply"},
		{"key set twice", "---\nid: x\nkind: y\nid: z\n---\n", `key "id" set twice`},
		{"merge keeps own keys", "---\nbase: &b {id: m, kind: rule, title: T}\n<<: *b\nid: own\n---\n", ""},
		{"version as mapping", "---\nid: x\nkind: y\nversion: {a: 1}\n---\n", "version must be a string or a number"},
		{"non-finite float kept as text", "---\nid: x\nkind: y\nv: .nan\nw: .inf\n---\n", ""},
		{"non-finite int kept as text", "---\nid: x\nkind: y\nv: !!int nan\nw: !!int .inf\n---\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := parseObject(".ai/repo/h.md", []byte(tt.data))
			if tt.want == "" {
				if !r.ok {
					t.Fatalf("not an object: %v", r.diags)
				}
				if _, err := json.Marshal(r.obj.Front); err != nil {
					t.Fatalf("front matter not JSON-compatible: %v", err)
				}
				return
			}
			if r.ok || len(r.diags) != 1 || r.diags[0].Level != LevelError || !strings.Contains(r.diags[0].Message, tt.want) {
				t.Fatalf("got ok=%v %v, want an error containing %q", r.ok, r.diags, tt.want)
			}
		})
	}
	r := parseObject(".ai/repo/h.md", []byte("---\nbase: &b {id: m, kind: rule, title: T}\n<<: *b\nid: own\n---\n"))
	if r.obj.URI != "majordomus://rule/own" || r.obj.Title != "T" {
		t.Errorf("merge gave %s title %q", r.obj.URI, r.obj.Title)
	}
}

// A file removed between the listing and its reading is simply not there,
// as a listing made then would say: no error, no degraded index. (During
// a checkout of another branch, the index was degraded, "cannot read: no
// such file or directory", and under --strict the server refused to start.)
func TestAFileRemovedOnceListedIsNotThere(t *testing.T) {
	root := testtemp.Dir(t)
	writeTree(t, root, map[string]string{".ai/manifest.yaml": testManifest, ".ai/repo/a.md": "---\nid: a\nkind: rule\n---\n"})
	if r := readObject(root, ".ai/repo/gone.md"); r.ok || len(r.diags) != 0 {
		t.Fatalf("a file removed once listed: ok %v, diagnostics %v", r.ok, r.diags)
	}
}

// An id or version shows what it names: characters Unicode says are never
// drawn (a variation selector, the combining grapheme joiner, a Hangul
// filler, the blank braille cell) are refused as format characters are.
// (Each was taken: "review" and "review" plus one of them were two objects,
// and two prompts, that showed as one; an id of a Hangul filler alone was
// an object, and a prompt, whose name showed nothing.)
func TestAnIdOfCharactersNeverDrawnIsRefused(t *testing.T) {
	ix := buildTree(t, map[string]string{
		".ai/manifest.yaml":  testManifest,
		".ai/repo/a.md":      "---\nid: review\nkind: prompt\n---\nThe real one.\n",
		".ai/repo/cgj.md":    "---\nid: \"review\\u034f\"\nkind: prompt\n---\nAnother.\n",
		".ai/repo/vs.md":     "---\nid: \"review\\ufe0f\"\nkind: prompt\n---\nAnother.\n",
		".ai/repo/vs2.md":    "---\nid: \"review\\U000e0100\"\nkind: prompt\n---\nAnother.\n",
		".ai/repo/filler.md": "---\nid: \"\\u3164\"\nkind: prompt\n---\nShows nothing.\n",
		".ai/repo/cell.md":   "---\nid: \"\\u2800\"\nkind: prompt\n---\nShows nothing.\n",
		".ai/repo/khmer.md":  "---\nid: \"review\\u17b4\"\nkind: prompt\n---\nAnother.\n",
		".ai/repo/ver.md":    "---\nid: review\nkind: prompt\nversion: \"1\\ufe0e\"\n---\nAnother.\n",
	})
	var uris []string
	for _, o := range ix.Objects {
		uris = append(uris, o.URI)
	}
	if want := []string{"majordomus://prompt/review"}; !reflect.DeepEqual(uris, want) {
		t.Errorf("objects %+q, want %q", uris, want)
	}
	refused := map[string]bool{}
	for _, d := range ix.Diagnostics {
		if d.Level == LevelError && strings.Contains(d.Message, "not allowed in an object URI") {
			refused[d.Path] = true
		}
	}
	for _, f := range []string{"cgj", "vs", "vs2", "filler", "cell", "khmer", "ver"} {
		if !refused[".ai/repo/"+f+".md"] {
			t.Errorf(".ai/repo/%s.md not refused: %v", f, ix.Diagnostics)
		}
	}
}

// A directory removed between its parent's listing and its own is simply
// not there either, as a file so removed is not: switching branches
// removes whole directories of the layer while a rebuild walks it. (Each
// was an error, "cannot read: no such file or directory": the index was
// degraded, and under --strict a start refused and a rebuild withheld.)
func TestADirectoryRemovedOnceListedIsNotThere(t *testing.T) {
	root := testtemp.Dir(t)
	const dirs = 400
	for round := range 5 {
		files := map[string]string{".ai/manifest.yaml": testManifest}
		for i := range dirs {
			files[fmt.Sprintf(".ai/repo/d%04d/a.md", i)] = fmt.Sprintf("---\nid: a%d\nkind: rule\n---\n", i)
		}
		writeTree(t, root, files)
		removed := make(chan error, 1)
		go func() { // from the last, while the walk goes from the first
			for i := dirs - 1; i >= 0; i-- {
				if err := os.RemoveAll(filepath.Join(root, ".ai", "repo", fmt.Sprintf("d%04d", i))); err != nil {
					removed <- err
					return
				}
			}
			removed <- nil
		}()
		ix, err := Build(root, 1)
		if err := <-removed; err != nil {
			t.Fatal(err)
		}
		if err != nil {
			t.Fatal(err)
		}
		if ix.State() != "ok" {
			t.Fatalf("round %d: a directory removed during the build degraded the index: %v", round, ix.firstError())
		}
	}
	// Its directory replaced by a file once the file was listed.
	writeTree(t, root, map[string]string{".ai/repo/d0000": "now a file"})
	if r := readObject(root, ".ai/repo/d0000/a.md"); r.ok || len(r.diags) != 0 {
		t.Fatalf("a file whose directory is a file now: ok %v, diagnostics %v", r.ok, r.diags)
	}
}

// An id or version is written in its composed form (NFC), so that two
// objects never show as one: "café" typed and "café" decomposed (as some
// systems write a name) were two objects, and two prompts, each listed
// as "café".
func TestAnIdInDecomposedFormIsRefused(t *testing.T) {
	ix := buildTree(t, map[string]string{
		".ai/manifest.yaml":   testManifest,
		".ai/repo/nfc.md":     "---\nid: \"caf\\u00e9\"\nkind: prompt\n---\nComposed.\n",
		".ai/repo/nfd.md":     "---\nid: \"cafe\\u0301\"\nkind: prompt\n---\nDecomposed.\n",
		".ai/repo/version.md": "---\nid: tea\nkind: prompt\nversion: \"e\\u0301\"\n---\nDecomposed.\n",
	})
	var uris []string
	for _, o := range ix.Objects {
		uris = append(uris, o.URI)
	}
	if want := []string{"majordomus://prompt/caf\u00e9"}; !reflect.DeepEqual(uris, want) {
		t.Errorf("objects %+q, want %+q", uris, want)
	}
	refused := map[string]bool{}
	for _, d := range ix.Diagnostics {
		if d.Level == LevelError && strings.Contains(d.Message, "not allowed in an object URI") {
			refused[d.Path] = true
		}
	}
	for _, f := range []string{".ai/repo/nfd.md", ".ai/repo/version.md"} {
		if !refused[f] {
			t.Errorf("%s not refused: %v", f, ix.Diagnostics)
		}
	}
}

// A number in a title, the tags or a prompt argument's declaration reads
// as it is written, as a version does: tags 3.10 and 017 were "3.1" and
// "15", so that majordomus_list tag=3.10 found nothing.
func TestANumberReadsAsWritten(t *testing.T) {
	ix := buildTree(t, map[string]string{
		".ai/manifest.yaml": testManifest,
		".ai/repo/a.md": "---\nid: a\nkind: prompt\nx: &x 2.50\ntitle: 3.10\ntags: [3.10, 1.0, 017, 1e3, *x]\n" +
			"arguments:\n  - name: python\n    description: 2.0\n    suggestions: [3.10, 3.12]\n---\nBody.\n",
	})
	if len(ix.Objects) != 1 {
		t.Fatalf("objects %v, diagnostics %v", ix.Objects, ix.Diagnostics)
	}
	o := ix.Objects[0]
	if o.Title != "3.10" {
		t.Errorf("title %q, want 3.10", o.Title)
	}
	if want := []string{"3.10", "1.0", "017", "1e3", "2.50"}; !reflect.DeepEqual(o.Tags, want) {
		t.Errorf("tags %q, want %q", o.Tags, want)
	}
	if len(o.Arguments) != 1 || o.Arguments[0].Description != "2.0" || !reflect.DeepEqual(o.Arguments[0].Suggestions, []string{"3.10", "3.12"}) {
		t.Errorf("arguments %+v, want a description of 2.0 and suggestions 3.10 and 3.12", o.Arguments)
	}
}

// What the index serves of a number is the number as its file writes it
// (a title, a tag, a prompt argument's suggestion: "3.10" stays 3.10), so
// an edit that writes it otherwise — Python 3.1 corrected to 3.10 — is a
// change: it is rebuilt and published, and its digest moves, so that a
// server taking over never serves it under the generation that served the
// old text.
func TestAnEditOfHowANumberIsWrittenIsAChange(t *testing.T) {
	root := testtemp.Dir(t)
	const file = ".ai/repo/prompts/test.md"
	before := "---\nid: test\nkind: prompt\ntitle: 1.0\ntags: [3.1]\narguments:\n  - name: python\n    suggestions: [3.9, 3.1]\n---\nTest on Python {{python}}.\n"
	writeTree(t, root, map[string]string{".ai/manifest.yaml": "schema: ai-repository/v1\n", file: before})
	l, err := Open(Config{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	first := l.Current()
	write(t, root, file, strings.NewReplacer("title: 1.0", "title: 1.00", "[3.1]", "[3.10]", "3.9, 3.1]", "3.9, 3.10]").Replace(before))
	old, ix, published := l.rebuild()
	if !published {
		t.Fatalf("the edit was not published: generation %d still serves title %q, tags %q, suggestions %q",
			l.Current().Generation, old.Objects[0].Title, old.Objects[0].Tags, old.Objects[0].Arguments[0].Suggestions)
	}
	o := ix.Objects[0]
	if o.Title != "1.00" || !slices.Equal(o.Tags, []string{"3.10"}) || !slices.Equal(o.Arguments[0].Suggestions, []string{"3.9", "3.10"}) {
		t.Fatalf("served title %q, tags %q, suggestions %q", o.Title, o.Tags, o.Arguments[0].Suggestions)
	}
	if got := Changed(first, ix); !slices.Equal(got, []string{o.URI}) {
		t.Errorf("Changed = %v, want %s", got, o.URI)
	}
	if first.Digest() == ix.Digest() {
		t.Errorf("both indexes have the digest %s", ix.Digest())
	}
}

// An id refused for not being in NFC is told how NFC writes it: a
// precomposed letter Unicode excludes from composition (Devanagari's
// U+0958 qa, as text converted from older encodings has it) is written
// decomposed in NFC, and a CJK compatibility ideograph is another
// character, so "write it composed" would send its author the wrong way.
func TestAnIdNotInNFCIsToldHowNFCWritesIt(t *testing.T) {
	ix := buildTree(t, map[string]string{
		".ai/manifest.yaml": testManifest,
		".ai/repo/qa.md":    "---\nid: \"\\u0958\"\nkind: prompt\n---\nExcluded from composition.\n",
	})
	if len(ix.Objects) != 0 {
		t.Fatalf("objects %+v", ix.Objects)
	}
	for _, d := range ix.Diagnostics {
		if d.Path == ".ai/repo/qa.md" {
			if strings.Contains(d.Message, "write it composed") || !strings.Contains(d.Message, `"\u0915\u093c"`) {
				t.Errorf("the refusal does not say how NFC writes the id: %s", d.Message)
			}
			return
		}
	}
	t.Fatalf("not refused: %v", ix.Diagnostics)
}
