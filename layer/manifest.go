package layer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// SchemaV1 is the only manifest schema this package reads.
const SchemaV1 = "ai-repository/v1"

// Profile is one member of the fleet roster (manifest mcp.profiles).
type Profile struct {
	Name string // matches ^[a-z0-9][a-z0-9_-]*$, unique in the roster
	Role string // "" when not given
}

// Timings are the manifest's overrides of the server timings
// (docs/design.md#the-lease). A zero field was not set in the manifest;
// callers apply their defaults.
type Timings struct {
	BindGrace          time.Duration
	ProbeTimeout       time.Duration
	ElectionBound      time.Duration
	BusyGrace          time.Duration
	SessionIdleTimeout time.Duration
	BridgeHeartbeat    time.Duration
}

// Manifest is the part of .ai/manifest.yaml this program interprets.
type Manifest struct {
	Path        string    // absolute path of the manifest file
	Schema      string    // always SchemaV1 once loaded
	Name        string    // optional
	Description string    // optional
	Profiles    []Profile // from mcp.profiles; empty when absent (callers default to one profile "default")
	Server      Timings   // from the optional server section
}

// topLevelKeys are the manifest keys accepted at the top level. repo, local,
// sections and context belong to the layer format and are not interpreted.
var topLevelKeys = map[string]bool{
	"schema": true, "name": true, "description": true,
	"repo": true, "local": true, "sections": true, "context": true,
	"mcp": true, "server": true,
}

// serverKeys maps each server key to the Timings field it sets.
var serverKeys = map[string]func(*Timings) *time.Duration{
	"bind_grace_seconds":           func(t *Timings) *time.Duration { return &t.BindGrace },
	"probe_timeout_seconds":        func(t *Timings) *time.Duration { return &t.ProbeTimeout },
	"election_bound_seconds":       func(t *Timings) *time.Duration { return &t.ElectionBound },
	"busy_grace_seconds":           func(t *Timings) *time.Duration { return &t.BusyGrace },
	"session_idle_timeout_seconds": func(t *Timings) *time.Duration { return &t.SessionIdleTimeout },
	"bridge_heartbeat_seconds":     func(t *Timings) *time.Duration { return &t.BridgeHeartbeat },
}

// LoadManifest reads and validates <root>/.ai/manifest.yaml. Every error
// wraps [ErrInvalidManifest] and names the file and the problem(s), joined
// with "; " when there are several.
func LoadManifest(root string) (Manifest, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return Manifest{}, fmt.Errorf("%w: %s: %v", ErrInvalidManifest, root, err)
	}
	path := filepath.Join(abs, filepath.FromSlash(manifestRel))
	data, err := readManifest(path)
	if err != nil {
		return Manifest{}, fmt.Errorf("%w: %s: cannot read: %w", ErrInvalidManifest, path, pathErr(err))
	}
	m, problems := parseManifest(data)
	if len(problems) > 0 {
		return Manifest{}, fmt.Errorf("%w: %s: %s", ErrInvalidManifest, path, strings.Join(problems, "; "))
	}
	m.Path = path
	return m, nil
}

// readManifest reads the manifest, a regular file no larger than an object
// may be: every process reads it, bridges included, and again for each
// inventory.
func readManifest(path string) ([]byte, error) {
	f, st, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > maxObjectSize {
		return nil, fmt.Errorf("it is %d bytes, over the %d-byte limit", st.Size(), maxObjectSize)
	}
	return io.ReadAll(io.LimitReader(f, maxObjectSize+1))
}

// parseManifest decodes a manifest and returns every problem found.
func parseManifest(data []byte) (Manifest, []string) {
	var m Manifest
	var doc yaml.Node
	if err := safeUnmarshal(data, &doc); err != nil {
		return m, []string{"not valid YAML: " + err.Error()}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return m, []string{"empty manifest, want a mapping with schema: " + SchemaV1}
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return m, []string{"not a mapping, want a mapping with schema: " + SchemaV1}
	}
	p := problems{keys: map[string]bool{}}
	var unknown []string
	pairs(top, "", &p, func(key string, v *yaml.Node) {
		switch key {
		case "schema":
			m.Schema = p.str(v, key)
		case "name":
			m.Name = p.str(v, key)
		case "description":
			m.Description = p.str(v, key)
		case "mcp":
			m.Profiles = parseMCP(v, &p)
		case "server":
			m.Server = parseServer(v, &p)
		default:
			if !topLevelKeys[key] {
				unknown = append(unknown, key)
			}
		}
	})
	if len(unknown) > 0 {
		sort.Strings(unknown)
		p.add("unknown top-level key(s): %s", strings.Join(unknown, ", "))
	}
	switch {
	case m.Schema == "" && !p.keys["schema"]:
		p.add("schema missing, want %q", SchemaV1)
	case m.Schema != SchemaV1 && !p.keys["schema"]:
		p.add("schema is %q, want %q", m.Schema, SchemaV1)
	}
	return m, p.list
}

// parseMCP reads the mcp section: only profiles.
func parseMCP(n *yaml.Node, p *problems) []Profile {
	if !p.shaped(n, yaml.MappingNode, "mcp", "a mapping") {
		return nil
	}
	var out []Profile
	pairs(n, "mcp.", p, func(key string, v *yaml.Node) {
		if key != "profiles" {
			p.add("unknown key mcp.%s", key)
			return
		}
		out = parseProfiles(v, p)
	})
	return out
}

// parseProfiles reads mcp.profiles: a list of names or {name, role} mappings.
func parseProfiles(n *yaml.Node, p *problems) []Profile {
	if !p.shaped(n, yaml.SequenceNode, "mcp.profiles", "a list") {
		return nil
	}
	out := make([]Profile, 0, len(n.Content))
	seen := map[string]bool{}
	for i, e := range n.Content {
		e = resolved(e)
		where := fmt.Sprintf("mcp.profiles[%d]", i)
		var pr Profile
		switch e.Kind {
		case yaml.ScalarNode:
			pr.Name = p.str(e, where)
		case yaml.MappingNode:
			pairs(e, where+".", p, func(key string, v *yaml.Node) {
				switch key {
				case "name":
					pr.Name = p.str(v, where+".name")
				case "role":
					pr.Role = p.str(v, where+".role")
				default:
					p.add("unknown key %s.%s", where, key)
				}
			})
		default:
			p.add("%s: must be a profile name or a mapping with name and role", where)
			continue
		}
		switch {
		case pr.Name == "":
			p.add("%s: name missing", where)
		case !profileName.MatchString(pr.Name):
			p.add("%s: profile name %q must match ^[a-z0-9][a-z0-9_-]{0,63}$", where, pr.Name)
		case seen[pr.Name]:
			p.add("%s: duplicate profile %q", where, pr.Name)
		default:
			seen[pr.Name] = true
			out = append(out, pr)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// parseServer reads the server section: positive numbers of seconds.
func parseServer(n *yaml.Node, p *problems) Timings {
	var t Timings
	if !p.shaped(n, yaml.MappingNode, "server", "a mapping") {
		return t
	}
	pairs(n, "server.", p, func(key string, v *yaml.Node) {
		field, ok := serverKeys[key]
		if !ok {
			p.add("unknown key server.%s", key)
			return
		}
		d, err := seconds(v)
		if err != nil {
			p.add("server.%s: %v", key, err)
			return
		}
		*field(&t) = d
	})
	return t
}

// seconds converts a YAML number of seconds to a positive Duration.
func seconds(v *yaml.Node) (time.Duration, error) {
	if v.Kind != yaml.ScalarNode || (v.ShortTag() != "!!int" && v.ShortTag() != "!!float") {
		return 0, errors.New("must be a positive number of seconds")
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(v.Value, "_", ""), 64)
	if err != nil {
		if i, ierr := strconv.ParseInt(v.Value, 0, 64); ierr == nil {
			f, err = float64(i), nil
		}
	}
	if err != nil || math.IsNaN(f) {
		return 0, fmt.Errorf("%q is not a number of seconds", v.Value)
	}
	if f <= 0 {
		return 0, fmt.Errorf("%s must be positive", v.Value)
	}
	if f >= float64(math.MaxInt64)/float64(time.Second) { // float64(MaxInt64) is 2^63, which no Duration holds
		return 0, fmt.Errorf("%s seconds is too long", v.Value)
	}
	d := time.Duration(f * float64(time.Second))
	if d <= 0 {
		return 0, fmt.Errorf("%s must be positive", v.Value)
	}
	return d, nil
}

// problems collects manifest problems in the order found.
type problems struct {
	list []string
	keys map[string]bool // keys whose value already produced a problem
}

func (p *problems) add(format string, args ...any) {
	p.list = append(p.list, fmt.Sprintf(format, args...))
}

// str reads a string scalar (null reads as ""); anything else is a problem.
func (p *problems) str(v *yaml.Node, where string) string {
	if isNull(v) {
		return ""
	}
	if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str" {
		p.add("%s: must be a string", where)
		p.keys[where] = true
		return ""
	}
	return v.Value
}

// shaped reports whether n is a node of kind; a null n is absent, and one
// of another kind a problem: where must be what.
func (p *problems) shaped(n *yaml.Node, kind yaml.Kind, where, what string) bool {
	if isNull(n) {
		return false
	}
	if n.Kind != kind {
		p.add("%s: must be %s", where, what)
		return false
	}
	return true
}

// pairs calls fn for each key of mapping n in order, reporting non-string
// and duplicate keys (prefixed with where) instead.
func pairs(n *yaml.Node, where string, p *problems, fn func(key string, v *yaml.Node)) {
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolved(n.Content[i]), resolved(n.Content[i+1]) // an alias reads as what it names
		if k.Kind != yaml.ScalarNode {
			p.add("%snon-scalar key at line %d", where, k.Line)
			continue
		}
		if seen[k.Value] {
			p.add("duplicate key %s%s", where, k.Value)
			continue
		}
		seen[k.Value] = true
		fn(k.Value, v)
	}
}

// isNull reports whether n is absent or an explicit YAML null.
func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// safeUnmarshal parses YAML, one document at most, into a node, turning a
// parser panic into an error. A document that follows the first (after a
// "..." or "---" line) is refused, not ignored, unless it is empty: what
// it says would be read by no one.
func safeUnmarshal(data []byte, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml parser failed: %v", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for i := 0; ; i++ {
		var more yaml.Node
		into := n
		if i > 0 {
			into = &more
		}
		switch err := dec.Decode(into); {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		case i > 0 && len(more.Content) > 0 && !isNull(more.Content[0]):
			return fmt.Errorf("a second document begins at line %d; one is read", more.Line)
		}
	}
}
