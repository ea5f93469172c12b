package layer

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestPromptArguments(t *testing.T) {
	tests := []struct {
		name      string
		front     string // after id and kind
		want      []Argument
		wantWarns []string // the warnings' messages, in order
	}{
		{name: "none", front: "", want: nil},
		{
			name: "declared",
			front: "arguments:\n  - name: change\n    description: The change to review.\n    required: true\n" +
				"  - {name: focus, suggestions: [tests, naming, tests, ' '], required: false}\n  - name: Level_2-b\n",
			want: []Argument{
				{Name: "change", Description: "The change to review.", Required: true},
				{Name: "focus", Suggestions: []string{"tests", "naming"}},
				{Name: "Level_2-b"},
			},
		},
		{
			name:  "not a list",
			front: "arguments: change\n",
			wantWarns: []string{
				"arguments must be a list of {name, description, required, suggestions}: ignored",
			},
		},
		{
			name: "what cannot be read is left out, the rest kept",
			front: "arguments:\n  - change\n  - {name: 2x}\n  - {name: a b}\n  - {description: no name}\n" +
				"  - {name: ok, require: true}\n  - {name: req, required: 'yes'}\n  - {name: d, description: [x]}\n" +
				"  - {name: s, suggestions: {a: 1}}\n  - {name: kept}\n  - {name: kept, required: true}\n  - {name: " + strings.Repeat("n", 65) + "}\n",
			want: []Argument{{Name: "kept"}},
			wantWarns: []string{
				"arguments[0]: not a mapping with a name: this argument is ignored",
				"arguments[1]: name must match ^[A-Za-z][A-Za-z0-9_-]*$ (at most 64 characters): this argument is ignored",
				"arguments[2]: name must match ^[A-Za-z][A-Za-z0-9_-]*$ (at most 64 characters): this argument is ignored",
				"arguments[3]: name must match ^[A-Za-z][A-Za-z0-9_-]*$ (at most 64 characters): this argument is ignored",
				`arguments[4]: unknown key "require" (name, description, required and suggestions are read): this argument is ignored`,
				"arguments[5]: required must be true or false: this argument is ignored",
				"arguments[6]: description is not text: this argument is ignored",
				"arguments[7]: suggestions must be a list of text: this argument is ignored",
				`arguments[9]: "kept" is declared twice: the second is ignored`,
				"arguments[10]: name must match ^[A-Za-z][A-Za-z0-9_-]*$ (at most 64 characters): this argument is ignored",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := parseObject(".ai/repo/p.md", []byte("---\nid: p\nkind: prompt\n"+tt.front+"---\nbody\n"))
			if !r.ok {
				t.Fatalf("not an object: %v", r.diags)
			}
			if !reflect.DeepEqual(r.obj.Arguments, tt.want) {
				t.Errorf("arguments %+v, want %+v", r.obj.Arguments, tt.want)
			}
			var warns []string
			for _, d := range r.diags {
				if d.Level != LevelWarning || d.Path != ".ai/repo/p.md" {
					t.Errorf("diagnostic %v, want a warning about the file", d)
				}
				warns = append(warns, d.Message)
			}
			if !reflect.DeepEqual(warns, tt.wantWarns) {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warns, "\n"), strings.Join(tt.wantWarns, "\n"))
			}
		})
	}
}

// Only prompts declare arguments: another kind may use the key for
// something else, without a warning.
func TestArgumentsOfOtherKindsAreNotRead(t *testing.T) {
	r := parseObject(".ai/repo/r.md", []byte("---\nid: r\nkind: rule\narguments: whatever\n---\n"))
	if !r.ok || r.obj.Arguments != nil || len(r.diags) != 0 {
		t.Fatalf("ok=%v arguments %v diagnostics %v", r.ok, r.obj.Arguments, r.diags)
	}
}

func TestRenderFillsInDeclaredArgumentsLiterally(t *testing.T) {
	o := Object{
		Arguments: []Argument{{Name: "change", Required: true}, {Name: "focus"}},
		Body:      "\n\nReview {{change}}; look at {{ focus }}.\n{{other}} {{change {{ change}}} }} {{\n\n",
	}
	tests := []struct {
		values map[string]string
		want   string
	}{
		{map[string]string{"change": "HEAD~2..HEAD", "focus": "tests"},
			"Review HEAD~2..HEAD; look at tests.\n{{other}} {{change HEAD~2..HEAD} }} {{"},
		{map[string]string{"change": "x"}, // an optional argument not given is empty
			"Review x; look at .\n{{other}} {{change x} }} {{"},
		{map[string]string{"change": "{{focus}} $1 \\n %s", "focus": "{{change}}", "unknown": "y"}, // values are data
			"Review {{focus}} $1 \\n %s; look at {{change}}.\n{{other}} {{change {{focus}} $1 \\n %s} }} {{"},
	}
	for _, tt := range tests {
		if got, err := o.Render(tt.values); err != nil || got != tt.want {
			t.Errorf("Render(%v):\n%q (%v)\nwant\n%q", tt.values, got, err, tt.want)
		}
	}
	// braces around a placeholder are text: only the last "{{" opens it
	o.Body = "a {{{change}}} b {{{{change}}}} c {{{change}} d"
	if got, err := o.Render(map[string]string{"change": "V"}); err != nil || got != "a {V} b {{V}} c {V d" {
		t.Errorf("placeholders among braces: %q (%v)", got, err)
	}
	// blank lines around the body go; the first line keeps its indentation
	o.Body = " \n\t\n    code {{change}}\n\n  "
	if got, err := o.Render(map[string]string{"change": "x"}); err != nil || got != "    code x" {
		t.Errorf("an indented body: %q (%v)", got, err)
	}
}

// A client's values cannot multiply a body into an unbounded text.
func TestRenderIsBounded(t *testing.T) {
	o := Object{Arguments: []Argument{{Name: "a"}}, Body: strings.Repeat("{{a}}", 9)}
	value := strings.Repeat("x", 1<<20)
	if _, err := o.Render(map[string]string{"a": value}); !errors.Is(err, ErrPromptTooLarge) {
		t.Fatalf("9 MiB: %v", err)
	}
	if got, err := o.Render(map[string]string{"a": value[:MaxPromptBytes/9]}); err != nil || len(got) > MaxPromptBytes {
		t.Fatalf("within the bound: %d bytes, %v", len(got), err)
	}
	// The text after the last placeholder counts too.
	o.Body = "{{a}}" + strings.Repeat("y", MaxPromptBytes)
	if got, err := o.Render(map[string]string{"a": "x"}); !errors.Is(err, ErrPromptTooLarge) {
		t.Fatalf("a value and the text after it over the bound: %d bytes, %v", len(got), err)
	}
}
