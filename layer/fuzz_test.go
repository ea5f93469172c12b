package layer

import (
	"encoding/json"
	"strings"
	"testing"
)

func FuzzParseFrontMatter(f *testing.F) {
	for _, s := range []string{
		"---\nid: a\nkind: rule\nversion: 1\ntags: [x, y]\n---\nbody\n",
		"---\r\nid: a\r\nkind: rule\r\n---\r\n",
		"\xef\xbb\xbf---\nid: a\nkind: rule\n---",
		"---\nid: [\n---\n",
		"---\na: &x [*x]\n---\n",
		"---\na: &a [1,2]\nb: &b [*a,*a,*a]\nc: [*b,*b,*b]\nid: x\nkind: y\n---\n",
		"---\nbase: &b {id: m, kind: rule}\n<<: *b\nv: .nan\nw: !!binary aGk=\nt: 2001-01-01\n---\n",
		"---\n? [a]\n: b\n---\n",
		"---\nid: p\nkind: prompt\narguments:\n  - {name: a, required: true, suggestions: [x]}\n  - b\n  - {name: a}\n---\n{{a}}\n",
		"---\nid: p\nkind: prompt\narguments: &x [{name: a, description: *x}]\n---\n",
		"---\n---\n",
		"---\n",
		"no front matter",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := parseObject(".ai/repo/f.md", data)
		if r.ok {
			if r.obj.ID == "" || r.obj.Kind == "" || r.obj.URI == "" {
				t.Fatalf("object without identity: %+v", r.obj)
			}
			if _, err := json.Marshal(r.obj.Front); err != nil {
				t.Fatalf("front matter not JSON-compatible: %v", err)
			}
			names := map[string]bool{}
			for _, a := range r.obj.Arguments {
				if !validArgumentName(a.Name) || names[a.Name] {
					t.Fatalf("argument %q invalid or declared twice: %+v", a.Name, r.obj.Arguments)
				}
				names[a.Name] = true
			}
		} else if len(r.diags) == 0 {
			t.Fatal("file left out without a diagnostic")
		}
	})
}

// A value is data: whatever the body and the value, rendering with it is
// rendering with a marker, the marker then replaced by the value.
func FuzzRender(f *testing.F) {
	for _, s := range [][2]string{
		{"Review {{change}}.", "HEAD"},
		{"{{ change }}{{change}}", "{{change}}"},
		{"{{{{change}}}} {{ other }} {{", "}} {{"},
		{"", ""},
	} {
		f.Add(s[0], s[1])
	}
	const marker = "\x00value\x00"
	o := Object{Arguments: []Argument{{Name: "change", Required: true}, {Name: "focus"}}}
	f.Fuzz(func(t *testing.T, body, value string) {
		if strings.Contains(body, "\x00") || strings.Contains(value, "\x00") {
			return
		}
		o.Body = body
		got, err := o.Render(map[string]string{"change": value, "focus": value})
		marked, _ := o.Render(map[string]string{"change": marker, "focus": marker})
		if want := strings.ReplaceAll(marked, marker, value); err != nil || got != want {
			t.Fatalf("Render(%q) with %q = %q (%v), want %q", body, value, got, err, want)
		}
	})
}
