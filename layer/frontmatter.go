package layer

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Limits on one front matter, so that a hostile file cannot exhaust memory,
// nor stall every rebuild (8 MiB of it take seconds to parse). Aliases are
// counted as expanded: a long anchored string listed by nested aliases
// made 200 KiB expand to 865 MB, within the count of values.
const (
	maxFrontNodes = 100_000   // values produced, aliases expanded
	maxFrontText  = 1 << 20   // the bytes of its scalars and keys, aliases expanded
	maxFrontDepth = 200       // nesting of mappings and sequences
	maxFrontBytes = 256 << 10 // the block itself
)

// errNoFrontMatter marks a file that does not start with a "---" line.
var errNoFrontMatter = errors.New("no front matter")

// splitFrontMatter splits a file into its front matter block and body. The
// block returned starts with the opening "---" line (a YAML document start
// marker, so YAML line numbers are file line numbers) and stops before the
// closing "---" line. A UTF-8 byte order mark is ignored.
func splitFrontMatter(data []byte) (front []byte, body []byte, err error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	first, rest, _ := bytes.Cut(data, []byte{'\n'})
	if !isFence(first) {
		return nil, nil, errNoFrontMatter
	}
	off := len(data) - len(rest)
	for len(rest) > 0 {
		line, next, _ := bytes.Cut(rest, []byte{'\n'})
		if isFence(line) {
			return data[:off], next, nil
		}
		off += len(rest) - len(next)
		rest = next
	}
	return nil, nil, errors.New("front matter is not closed by a --- line")
}

// isFence reports whether a line is "---", ignoring trailing blanks and CR.
func isFence(line []byte) bool {
	return string(bytes.TrimRight(line, " \t\r")) == "---"
}

// decodeFrontMatter parses a front matter block into a JSON-compatible
// mapping and returns the mapping's node too (for literal scalar values).
func decodeFrontMatter(front []byte) (map[string]any, *yaml.Node, error) {
	if len(front) > maxFrontBytes {
		return nil, nil, fmt.Errorf("front matter is %d bytes, over the %d-byte limit", len(front), maxFrontBytes)
	}
	var doc yaml.Node
	if err := safeUnmarshal(front, &doc); err != nil {
		return nil, nil, fmt.Errorf("front matter is not valid YAML: %v", err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return nil, nil, errors.New("front matter is empty")
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, nil, errors.New("front matter is not a mapping")
	}
	c := converter{budget: maxFrontNodes, text: maxFrontText, active: map[*yaml.Node]bool{}}
	v, err := c.value(top, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("front matter: %v", err)
	}
	return v.(map[string]any), top, nil
}

// converter turns YAML nodes into JSON-compatible values: map[string]any,
// []any, string, int, float64, bool and nil. Timestamps, binary values and
// non-finite floats stay strings; mapping keys are their scalar text.
type converter struct {
	budget int
	text   int                 // bytes of scalars and keys left to produce
	active map[*yaml.Node]bool // anchors being expanded, to refuse cycles
}

func (c *converter) value(n *yaml.Node, depth int) (any, error) {
	c.budget--
	if c.budget < 0 {
		return nil, errors.New("too many values (aliases expanded)")
	}
	if depth > maxFrontDepth {
		return nil, errors.New("nested too deeply")
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return c.value(n.Content[0], depth)
	case yaml.AliasNode:
		if n.Alias == nil || c.active[n.Alias] {
			return nil, fmt.Errorf("line %d: alias %q refers to itself", n.Line, n.Value)
		}
		c.active[n.Alias] = true
		defer delete(c.active, n.Alias)
		return c.value(n.Alias, depth)
	case yaml.ScalarNode:
		if err := c.spend(n.Value); err != nil {
			return nil, err
		}
		return scalarValue(n), nil
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			v, err := c.value(e, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		return c.mapping(n, depth)
	}
	return nil, fmt.Errorf("line %d: unsupported YAML node", n.Line)
}

// mapping converts a mapping; "<<" merge keys contribute keys that the
// mapping does not set itself; a key set twice is an error.
func (c *converter) mapping(n *yaml.Node, depth int) (map[string]any, error) {
	out := make(map[string]any, len(n.Content)/2)
	var merged map[string]any
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			src, err := c.value(v, depth+1)
			if err != nil {
				return nil, err
			}
			if merged == nil {
				merged = map[string]any{}
			}
			if err := mergeInto(merged, src, k.Line); err != nil {
				return nil, err
			}
			continue
		}
		key, err := c.key(k)
		if err != nil {
			return nil, err
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("line %d: key %q set twice", k.Line, key)
		}
		val, err := c.value(v, depth+1)
		if err != nil {
			return nil, err
		}
		out[key] = val
	}
	return out, mergeInto(out, merged, n.Line) // a mapping merges without error
}

// key returns the text of a scalar mapping key (following an alias).
func (c *converter) key(k *yaml.Node) (string, error) {
	if k.Kind == yaml.AliasNode && k.Alias != nil {
		k = k.Alias
	}
	if k.Kind != yaml.ScalarNode {
		return "", fmt.Errorf("line %d: mapping key is not a scalar", k.Line)
	}
	return k.Value, c.spend(k.Value)
}

// spend counts s against the text the front matter may produce.
func (c *converter) spend(s string) error {
	if c.text -= len(s); c.text < 0 {
		return fmt.Errorf("its text is over %d bytes (aliases expanded)", maxFrontText)
	}
	return nil
}

// mergeInto adds the keys of a merge source (a mapping or a list of
// mappings, earlier ones winning) that dst does not hold yet.
func mergeInto(dst map[string]any, src any, line int) error {
	switch s := src.(type) {
	case map[string]any:
		for k, v := range s {
			if _, set := dst[k]; !set {
				dst[k] = v
			}
		}
	case []any:
		for _, e := range s {
			m, ok := e.(map[string]any)
			if !ok {
				return fmt.Errorf("line %d: merge value is not a mapping", line)
			}
			if err := mergeInto(dst, m, line); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("line %d: merge value is not a mapping", line)
	}
	return nil
}

// scalarValue resolves a scalar by its tag.
func scalarValue(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool":
		switch strings.ToLower(n.Value) {
		case "true", "yes", "y", "on":
			return true
		case "false", "no", "n", "off":
			return false
		}
	case "!!int":
		if i, err := strconv.ParseInt(n.Value, 0, 64); err == nil {
			if int64(int(i)) == i {
				return int(i)
			}
			return float64(i)
		}
		fallthrough // not an int64: read as a float
	case "!!float":
		if f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			return f
		}
	}
	return n.Value
}

// field is the value node of key in the mapping n, aliases followed, or
// nil; a key n does not set itself is looked for in what n merges ("<<"),
// earlier sources first, as the converter merges them: a version of 1.0
// merged from an anchor is "1.0", as written, not the number's "1".
func field(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	var merged []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolved(n.Content[i]), resolved(n.Content[i+1]) // a key may be an alias too, as the converter reads it
		switch {
		case k.Kind != yaml.ScalarNode:
		case k.ShortTag() == "!!merge" && v.Kind == yaml.SequenceNode:
			merged = append(merged, v.Content...)
		case k.ShortTag() == "!!merge":
			merged = append(merged, v)
		case k.Value == key:
			return v
		}
	}
	for _, m := range merged {
		if m = resolved(m); m.Kind == yaml.MappingNode {
			if v := field(m, key); v != nil {
				return v
			}
		}
	}
	return nil
}

// resolved is what n names, when it is an alias.
func resolved(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}
