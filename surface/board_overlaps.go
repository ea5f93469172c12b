package surface

import (
	"path"
	"slices"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/majordomus-mcp/majordomus-mcp/layer"
)

// What the board's list of overlaps holds at most: the pairs it lists,
// and each side's paths in a pair. Every pair repeats both sides' paths,
// so unbounded the list grows with the square of the announcers: 97 peers
// each announcing 100 long paths that all meet made it 431 MB.
const (
	maxListedPairs = 100
	maxPairPaths   = 10
)

// OverlapPair is two attached peers whose announced scopes overlap, with
// the paths of each that overlap the other's, as majordomus_announce
// would answer each: Paths A's, BPaths B's, each at most maxPairPaths,
// More and BMore how many more of each. Each pair is listed once, A the
// earlier attached.
type OverlapPair struct {
	A      string   `json:"a"`
	B      string   `json:"b"`
	Paths  []string `json:"paths"`
	BPaths []string `json:"b_paths"`
	More   int      `json:"more,omitempty"`
	BMore  int      `json:"b_more,omitempty"`
}

// claim is an attached announcer's scope, as announced and cleaned.
type claim struct {
	id           string
	scope, clean []string
}

// Overlaps counts the overlapping pairs of attached announcers and lists
// the first maxListedPairs of them, in attachment order. The board is
// read under its lock and the scopes compared after it: an announcement
// is replaced whole, never changed.
func (b *Board) Overlaps() (listed []OverlapPair, count int) {
	b.mu.Lock()
	b.expire(b.now())
	var claims []claim
	for _, p := range b.order {
		if p.Attached && p.Announcement != nil {
			claims = append(claims, claim{id: p.ID, scope: p.Announcement.Scope})
		}
	}
	root := b.root
	b.mu.Unlock()
	for i, c := range claims {
		claims[i].clean = cleanPaths(root, c.scope)
	}
	listed = []OverlapPair{}
	for i, p := range claims {
		for _, q := range claims[i+1:] {
			if !slices.ContainsFunc(p.clean, func(c string) bool { return meets(c, q.clean) }) {
				continue
			}
			if count++; len(listed) < maxListedPairs {
				pair := OverlapPair{A: p.id, B: q.id}
				pair.Paths, pair.More = meeting(p, q)
				pair.BPaths, pair.BMore = meeting(q, p)
				listed = append(listed, pair)
			}
		}
	}
	return listed, count
}

// meets reports whether the cleaned path c overlaps one of theirs.
func meets(c string, theirs []string) bool {
	return slices.ContainsFunc(theirs, func(t string) bool { return pathsOverlap(c, t) })
}

// meeting is the first maxPairPaths of mine's paths that overlap theirs,
// and how many more do.
func meeting(mine, theirs claim) (paths []string, more int) {
	for i, c := range mine.clean {
		if !meets(c, theirs.clean) {
			continue
		}
		if len(paths) < maxPairPaths {
			paths = append(paths, mine.scope[i])
		} else {
			more++
		}
	}
	return paths, more
}

// overlappingPaths returns the paths of mine that overlap theirs by path
// prefix, component by component ("lib" overlaps "lib/parse", "lib/parser"
// does not; "lib/*.go" overlaps "lib/parse.go": cleanPath). An empty
// scope claims nothing. Each path is cleaned once.
func overlappingPaths(root string, mine, theirs []string) []string {
	var out []string
	clean := cleanPaths(root, theirs)
	for _, m := range mine {
		if meets(cleanPath(root, m), clean) {
			out = append(out, m)
		}
	}
	return out
}

// cleanPaths is each of paths cleaned (cleanPath).
func cleanPaths(root string, paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = cleanPath(root, p)
	}
	return out
}

// cleanPath is a path of the checkout as overlaps compare it: "./lib",
// "src/../lib/" and "lib" are "lib", "" is the whole checkout, a Windows
// client's "src\lib" is "src/lib", and a path under root (slashes), as
// the agents whose tools take absolute paths write it, is the path within
// (its drive's letter, C: or c:, in either case); one that holds root is
// the whole checkout, as "/" is. A glob, as agents write scopes
// ("lib/*.go", "src/**/*.ts"), is the directory its first wildcard is in:
// it claims files there that it may not match, but never misses one it
// does, and comparing it stays as cheap as comparing any path
// (docs/security.md#bounded). A name is compared composed (NFC): "café"
// typed and "café" as macOS lists it (decomposed) show alike and name one
// file there; and where names ignore their case (macOS, Windows:
// layer.NamesIgnoreCase), "Lib/Parse.go" is lib/parse.go.
func cleanPath(root, p string) string {
	p = path.Clean(norm.NFC.String(strings.ReplaceAll(p, `\`, "/")))
	root = norm.NFC.String(root)
	if layer.NamesIgnoreCase {
		p, root = strings.ToLower(p), strings.ToLower(root)
	}
	if drive(root) && drive(p) && strings.EqualFold(p[:1], root[:1]) {
		p = root[:1] + p[1:] // one drive, however a tool spells its letter
	}
	if root != "" && strings.HasPrefix(root, p+"/") {
		return "" // a directory above the checkout: all of it
	}
	if within, ok := strings.CutPrefix(p, root); ok && root != "" && (within == "" || within[0] == '/') {
		p = within
	}
	p = strings.Trim(path.Clean("/"+p), "/")
	if i := strings.IndexAny(p, globChars); i >= 0 {
		p = p[:max(0, strings.LastIndexByte(p[:i], '/'))]
	}
	return p
}

// globChars are the characters that make a name a pattern, as agents
// write them: not "[", which names a route's directory in web projects
// (app/blog/[slug]/page.tsx) far more often than it opens a class.
const globChars = "*?"

// drive reports whether p starts with a Windows drive's letter ("C:").
func drive(p string) bool {
	return len(p) >= 2 && p[1] == ':' && ('a' <= p[0] && p[0] <= 'z' || 'A' <= p[0] && p[0] <= 'Z')
}

// pathsOverlap reports whether two cleaned paths (cleanPath) are one, or
// one holds the other.
func pathsOverlap(a, b string) bool {
	if a == "" || b == "" {
		return true // the whole checkout
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	return b == a || strings.HasPrefix(b, a+"/")
}
