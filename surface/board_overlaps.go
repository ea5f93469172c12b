package surface

import "slices"

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
