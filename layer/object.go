package layer

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"
	"golang.org/x/text/unicode/norm"

	"github.com/majordomus-mcp/majordomus-mcp/internal/blank"
)

// URIScheme prefixes every object URI.
const URIScheme = "majordomus://"

// Diagnostic levels.
const (
	LevelError   = "error"   // the file is left out; the index is degraded
	LevelWarning = "warning" // informational; the index stays ok
)

// Object is one layer object: a Markdown file under .ai/repo with a front
// matter holding at least id and kind.
type Object struct {
	URI         string   // majordomus://<kind>/<id>@<version>, "@<version>" only when version is set
	Kind        string   // matches ^[a-z][a-z0-9_-]*$
	ID          string   // non-empty, no whitespace, '/', '@', '?' or '#'
	Version     string   // the YAML literal of version (int, float or string); "" when unset
	Title       string   // optional
	Description string   // optional
	Status      string   // optional
	Tags        []string // optional, in file order, without blanks and repeats
	Path        string   // slash-separated, relative to the checkout root
	// Front is the whole front matter as decoded: map[string]any, []any,
	// string, int, float64, bool and nil only (JSON-compatible).
	Front map[string]any
	Body  string // the Markdown after the closing --- line
	// Arguments are a prompt's declared arguments, in file order; nil for
	// other kinds.
	Arguments []Argument
}

// Diagnostic is one finding about a file of the layer.
type Diagnostic struct {
	Level   string // LevelError or LevelWarning
	Path    string // slash-separated, relative to the checkout root
	Message string
}

// String renders the diagnostic as "level: path: message".
func (d Diagnostic) String() string { return d.Level + ": " + d.Path + ": " + d.Message }

// ObjectURI returns the URI of an object with the given kind, id and version.
func ObjectURI(kind, id, version string) string {
	u := URIScheme + kind + "/" + id
	if version != "" {
		u += "@" + version
	}
	return u
}

// parsed is the outcome of reading one file.
type parsed struct {
	obj     Object
	doc     searchDoc // obj's search fields, filled in by readObject
	ok      bool      // obj is an object
	diags   []Diagnostic
	stamp   stamp // the file as it was read
	stamped bool
}

// parseObject turns one file's bytes into an object. rel is the file's
// slash-separated path relative to the checkout root. It never panics.
func parseObject(rel string, data []byte) parsed {
	var r parsed
	fail := func(level, format string, args ...any) parsed {
		r.diags = append(r.diags, Diagnostic{Level: level, Path: rel, Message: fmt.Sprintf(format, args...)})
		return r
	}
	front, body, err := splitFrontMatter(data)
	if err == errNoFrontMatter {
		return fail(LevelWarning, "no front matter (the file does not start with a --- line): not an object")
	}
	if err != nil {
		return fail(LevelError, "%v", err)
	}
	fm, top, err := decodeFrontMatter(front)
	if err != nil {
		return fail(LevelError, "%v", err)
	}
	o := Object{Path: rel, Front: fm, Body: string(body)}
	var ok bool
	if o.ID, ok = fm["id"].(string); !ok || strings.TrimSpace(o.ID) == "" {
		return fail(LevelError, "front matter needs a non-empty string id")
	}
	if bad := uriUnsafe(o.ID); bad != "" {
		return fail(LevelError, "id %q contains %s, not allowed in an object URI", o.ID, bad)
	}
	if o.Kind, ok = fm["kind"].(string); !ok || o.Kind == "" {
		return fail(LevelError, "front matter needs a non-empty string kind")
	}
	if !kindName.MatchString(o.Kind) {
		return fail(LevelError, "kind %q must match ^[a-z][a-z0-9_-]*$", o.Kind)
	}
	if o.Version, ok = versionOf(fm["version"], field(top, "version")); !ok {
		return fail(LevelError, "version must be a string or a number")
	}
	if bad := uriUnsafe(o.Version); bad != "" && o.Version != "" {
		return fail(LevelError, "version %q contains %s, not allowed in an object URI", o.Version, bad)
	}
	o.URI = ObjectURI(o.Kind, o.ID, o.Version)
	for _, f := range []struct {
		key string
		dst *string
	}{{"title", &o.Title}, {"description", &o.Description}, {"status", &o.Status}} {
		if s, ok := textOf(fm[f.key], field(top, f.key)); ok {
			*f.dst = s
		} else {
			fail(LevelWarning, "%s is not text: ignored", f.key)
		}
	}
	if o.Tags, ok = tagsOf(fm["tags"], field(top, "tags")); !ok {
		fail(LevelWarning, "tags must be a list of words: non-text tags ignored")
	}
	if o.Kind == KindPrompt {
		o.Arguments = argumentsOf(fm["arguments"], field(top, "arguments"), func(format string, args ...any) { fail(LevelWarning, format, args...) })
	}
	r.obj, r.ok = o, true
	return r
}

// versionOf renders version: a string as is, a number as its YAML literal.
func versionOf(v any, n *yaml.Node) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", true
	case string:
		return strings.TrimSpace(x), true
	case int, float64:
		return numeral(x, n, 'f'), true
	}
	return "", false
}

// numeral is the number x as its YAML literal n is written, so that 3.10
// stays 3.10 and 017 stays 017; format renders a float no node says.
func numeral(x any, n *yaml.Node, format byte) string {
	if n != nil && n.Kind == yaml.ScalarNode {
		return n.Value
	}
	if i, ok := x.(int); ok {
		return strconv.Itoa(i)
	}
	return strconv.FormatFloat(x.(float64), format, -1, 64)
}

// textOf renders an optional scalar field as text ("" when absent): a
// number as n, its node (if known), writes it.
func textOf(v any, n *yaml.Node) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", true
	case string:
		return x, true
	case int, float64:
		return numeral(x, n, 'g'), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}

// member is the node of the i-th of count items of the sequence n, or
// nil when n is not that sequence.
func member(n *yaml.Node, i, count int) *yaml.Node {
	if n == nil || n.Kind != yaml.SequenceNode || len(n.Content) != count {
		return nil
	}
	return resolved(n.Content[i])
}

// tagsOf reads tags (n, its node, if known): a list of scalars or one
// string. Blanks and repeats are dropped; ok is false when something had
// to be ignored.
func tagsOf(v any, n *yaml.Node) ([]string, bool) {
	var items []any
	switch x := v.(type) {
	case nil:
		return nil, true
	case string:
		items = []any{x}
	case []any:
		items = x
	default:
		return nil, false
	}
	ok := true
	out := make([]string, 0, len(items))
	for i, it := range items {
		s, isText := textOf(it, member(n, i, len(items)))
		if !isText || it == nil {
			ok = false
			continue
		}
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, ok
}

// The names the layer's files give: a kind, a prompt's argument (at most
// maxArgumentName bytes too) and a profile of the manifest.
var (
	kindName     = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)
	argumentName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)
	profileName  = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`) // as the lease and registry take them
)

// uriUnsafe names the first character of s that cannot appear in an id or a
// version inside an object URI, or returns "": a URI's delimiters, any
// whitespace, control or format character, variation selector or other
// character Unicode says is never drawn (an invisible one, or one that
// turns the text around, would show one URI as another, as would a
// letter written decomposed beside its composed form: text not in NFC,
// whose refusal says how NFC writes it),
// and a dot segment, which a client's URI parser removes.
func uriUnsafe(s string) string {
	if s == "." || s == ".." {
		return "only dots, a path step"
	}
	var runes []rune // for a joiner's neighbours, made only when one is met
	i := 0
	for _, c := range s {
		if (c == zwnj || c == zwj) && runes == nil {
			runes = []rune(s)
		}
		switch {
		case c == '/' || c == '@' || c == '?' || c == '#' || c == '%':
			return fmt.Sprintf("%q", c)
		case (c == zwnj || c == zwj) && joins(runes, i):
		case unicode.IsSpace(c) || unicode.IsControl(c) || unicode.Is(unicode.Cf, c):
			return "whitespace, a control or a format character"
		case blank.Unseen(c): // a filler, a variation selector
			return "a character never drawn"
		}
		i++
	}
	if !norm.NFC.IsNormalString(s) {
		// not always decomposed: NFC writes some precomposed letters
		// decomposed (Devanagari's qa), and a compatibility ideograph as
		// another character
		return fmt.Sprintf("text not in Unicode's normal form NFC (write it as NFC does: %+q)", norm.NFC.String(s))
	}
	return ""
}
