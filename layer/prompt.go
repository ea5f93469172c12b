package layer

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// KindPrompt is the kind of the objects that are also MCP prompts.
const KindPrompt = "prompt"

// Argument is one argument a prompt object declares in its front matter:
//
//	arguments:
//	  - name: change
//	    description: The change to review.
//	    required: true
//	  - name: focus
//	    suggestions: [tests, naming]
//
// Its value replaces every {{name}} (or {{ name }}) in the body; see
// [Object.Render].
type Argument struct {
	Name        string   // matches ^[A-Za-z][A-Za-z0-9_-]*$, unique in the prompt
	Description string   // optional
	Required    bool     // a prompts/get without it is refused
	Suggestions []string // offered as completions; any other value is taken too
}

// maxArgumentName bounds an argument's name.
const maxArgumentName = 64

// argumentKeys are the keys an argument declaration may hold.
var argumentKeys = map[string]bool{"name": true, "description": true, "required": true, "suggestions": true}

// argumentsOf reads a prompt's arguments declaration. A declaration that
// cannot be read is left out, and warn says which and why: the prompt is
// still served, like an object whose tags cannot be read.
func argumentsOf(v any, n *yaml.Node, warn func(format string, args ...any)) []Argument {
	if v == nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		warn("arguments must be a list of {name, description, required, suggestions}: ignored")
		return nil
	}
	var out []Argument
	for i, item := range list {
		a, problem := argumentOf(item, member(n, i, len(list)))
		switch {
		case problem != "":
			warn("arguments[%d]: %s: this argument is ignored", i, problem)
		case declared(out, a.Name):
			warn("arguments[%d]: %q is declared twice: the second is ignored", i, a.Name)
		default:
			out = append(out, a)
		}
	}
	return out
}

// argumentOf reads one declaration (n, its node, if known), or says what
// is wrong with it.
func argumentOf(item any, n *yaml.Node) (Argument, string) {
	m, ok := item.(map[string]any)
	if !ok {
		return Argument{}, "not a mapping with a name"
	}
	var a Argument
	for _, key := range slices.Sorted(maps.Keys(m)) {
		if !argumentKeys[key] {
			return a, fmt.Sprintf("unknown key %q (name, description, required and suggestions are read)", key)
		}
	}
	if a.Name, ok = m["name"].(string); !ok || !validArgumentName(a.Name) {
		return a, "name must match ^[A-Za-z][A-Za-z0-9_-]*$ (at most 64 characters)"
	}
	if a.Description, ok = textOf(m["description"], field(n, "description")); !ok {
		return a, "description is not text"
	}
	switch r := m["required"].(type) {
	case nil:
	case bool:
		a.Required = r
	default:
		return a, "required must be true or false"
	}
	if m["suggestions"] != nil {
		if a.Suggestions, ok = tagsOf(m["suggestions"], field(n, "suggestions")); !ok {
			return a, "suggestions must be a list of text"
		}
	}
	return a, ""
}

func declared(args []Argument, name string) bool {
	return slices.ContainsFunc(args, func(a Argument) bool { return a.Name == name })
}

// validArgumentName reports whether s matches ^[A-Za-z][A-Za-z0-9_-]*$
// and is at most maxArgumentName bytes long.
func validArgumentName(s string) bool {
	return len(s) <= maxArgumentName && argumentName.MatchString(s)
}

// MaxPromptBytes bounds a prompt's text once its arguments are filled in:
// a client's values, each bounded by the size of a message, could
// otherwise multiply through a body's placeholders without end.
const MaxPromptBytes = maxObjectSize

// Render returns the body with every placeholder of a declared argument —
// {{name}}, blanks allowed inside the braces — replaced by that argument's
// value in values ("" when not given). The body is read once, left to
// right: a value is data, copied as it is and never read for placeholders
// itself, so a value holding "{{other}}" stays that text. Braces around
// anything but a declared name are left as they are. Blank lines around
// the body are dropped. A text over MaxPromptBytes is an error wrapping
// [ErrPromptTooLarge].
func (o Object) Render(values map[string]string) (string, error) {
	body := trimBlankLines(o.Body)
	var b strings.Builder
	for {
		open := strings.Index(body, "{{")
		if open < 0 {
			break
		}
		end := strings.Index(body[open+2:], "}}")
		if end < 0 {
			break // no placeholder ends after this: the rest is text
		}
		// A name holds no braces, so only the last "{{" before the "}}"
		// can open a placeholder ("{{{x}}}" is "{", x's value, "}"): the
		// text is read once up to that "}}", however many "{{" it holds.
		end += open + 2
		open = strings.LastIndex(body[:end], "{{")
		inner, after := body[open+2:end], body[end+2:]
		b.WriteString(body[:open])
		body = after
		name := strings.Trim(inner, " \t")
		if !declared(o.Arguments, name) {
			b.WriteString("{{" + inner + "}}")
			continue
		}
		b.WriteString(values[name])
		if b.Len() > MaxPromptBytes {
			return "", fmt.Errorf("%w: with the values given its text is over %d bytes", ErrPromptTooLarge, MaxPromptBytes)
		}
	}
	if b.Len()+len(body) > MaxPromptBytes {
		return "", fmt.Errorf("%w: with the values given its text is over %d bytes", ErrPromptTooLarge, MaxPromptBytes)
	}
	b.WriteString(body)
	return b.String(), nil
}

// trimBlankLines drops the blank lines before s's first line of text and
// the white space after its last; the first line keeps its indentation.
func trimBlankLines(s string) string {
	for {
		line, rest, found := strings.Cut(s, "\n")
		if !found || strings.TrimSpace(line) != "" {
			break
		}
		s = rest
	}
	return strings.TrimRight(s, " \t\r\n")
}
