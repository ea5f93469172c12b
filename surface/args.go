package surface

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/majordomus-mcp/majordomus-mcp/internal/blank"
)

// args reads a tool call's arguments with the checks every tool needs. err
// is the first bad argument's, and names it.
type args struct {
	m   map[string]any
	err error
}

func argsOf(req mcp.CallToolRequest) *args {
	a := &args{}
	switch v := req.Params.Arguments.(type) {
	case nil:
		a.m = map[string]any{}
	case map[string]any:
		a.m = v
	default:
		a.err = errors.New("arguments must be a JSON object")
	}
	return a
}

func (a *args) fail(format string, v ...any) {
	if a.err == nil {
		a.err = fmt.Errorf(format, v...)
	}
}

// str returns an optional string argument ("" when absent).
func (a *args) str(name string) string {
	v, ok := a.m[name]
	if !ok || v == nil {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		a.fail("argument '%s' must be a string", name)
	}
	return s
}

// required returns a string argument that must be present and not blank.
func (a *args) required(name string) string {
	s := a.str(name)
	if a.err == nil && blank.Is(s) {
		a.fail("argument '%s' is required and must not be blank", name)
	}
	return strings.TrimSpace(s)
}

// integer returns an optional whole-number argument within [lo, hi].
func (a *args) integer(name string, def, lo, hi int) int {
	v, ok := a.m[name]
	if !ok || v == nil {
		return def
	}
	f, ok := v.(float64)
	if !ok || f != math.Trunc(f) {
		a.fail("argument '%s' must be an integer", name)
		return def
	}
	if f < float64(lo) || f > float64(hi) {
		a.fail("argument '%s' must be between %d and %d", name, lo, hi)
		return def
	}
	return int(f)
}

// strings returns an optional list of strings, trimmed, blanks dropped.
func (a *args) strings(name string) []string {
	v, ok := a.m[name]
	if !ok || v == nil {
		return []string{}
	}
	list, ok := v.([]any)
	if !ok {
		a.fail("argument '%s' must be an array of strings", name)
		return nil
	}
	out := []string{}
	for _, item := range list {
		s, ok := item.(string)
		if !ok {
			a.fail("argument '%s' must be an array of strings", name)
			return nil
		}
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// only refuses arguments the tool does not take (the first by name), and
// returns the first bad argument's error.
func (a *args) only(names ...string) error {
	for _, k := range slices.Sorted(maps.Keys(a.m)) {
		if !slices.Contains(names, k) {
			a.fail("argument '%s' is not taken by this tool", k)
		}
	}
	return a.err
}
