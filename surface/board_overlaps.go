package surface

// OverlapPair is two attached peers whose announced scopes overlap, with
// the paths of each that overlap the other's, as majordomus_announce
// would answer each: Paths A's, BPaths B's. Each pair is listed once, A
// the earlier attached.
type OverlapPair struct {
	A      string   `json:"a"`
	B      string   `json:"b"`
	Paths  []string `json:"paths"`
	BPaths []string `json:"b_paths"`
}

// Overlaps lists every overlapping pair of attached announcers, in
// attachment order.
func (b *Board) Overlaps() []OverlapPair {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.expire(b.now())
	out := []OverlapPair{}
	for i, p := range b.order {
		if !p.Attached || p.Announcement == nil {
			continue
		}
		for _, q := range b.order[i+1:] {
			if !q.Attached || q.Announcement == nil {
				continue
			}
			if paths := overlappingPaths(b.root, p.Announcement.Scope, q.Announcement.Scope); len(paths) > 0 {
				out = append(out, OverlapPair{A: p.ID, B: q.ID, Paths: paths, BPaths: overlappingPaths(b.root, q.Announcement.Scope, p.Announcement.Scope)})
			}
		}
	}
	return out
}
