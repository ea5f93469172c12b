package layer

import (
	"encoding/json"
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
		} else if len(r.diags) == 0 {
			t.Fatal("file left out without a diagnostic")
		}
	})
}
