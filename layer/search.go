package layer

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Search weights, per query term.
const (
	scoreIDExact   = 10 // the term is the whole id
	scoreIDTitle   = 3  // the term occurs in the id or the title
	scoreTagKind   = 2  // the term occurs in a tag or the kind
	scoreDesc      = 2  // the term occurs in the description
	scoreBody      = 1  // per occurrence in the body ...
	maxBodyCount   = 5  // ... counting at most this many
	defaultLimit   = 10
	maxSearchLimit = 100
)

// Hit is one search result.
type Hit struct {
	Object Object
	Score  float64
}

// searchDoc holds an object's lower-cased searchable fields.
type searchDoc struct {
	id, title, kind, desc, body string
	tags                        []string
}

func newSearchDoc(o *Object) searchDoc {
	d := searchDoc{
		id:    fold(o.ID),
		title: fold(o.Title),
		kind:  o.Kind,
		desc:  fold(o.Description),
		body:  fold(o.Body),
	}
	if len(o.Tags) > 0 {
		d.tags = make([]string, len(o.Tags))
		for i, t := range o.Tags {
			d.tags[i] = fold(t)
		}
	}
	return d
}

// fold is s in small letters, each letter in one form whatever its case
// (strings.EqualFold's; List compares tags by it too): lower-casing
// alone leaves Greek's final sigma, the long s or the Kelvin sign apart
// from the small letter their capital lowers to, so a word in capitals
// would not find them. A letter is also in one form however it is
// encoded (NFC): "café" typed composed and "café" decomposed, as text
// taken from a macOS name holds it, are one word.
func fold(s string) string {
	s = strings.ToLower(s)
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return norm.NFC.String(strings.Map(foldRune, s))
		}
	}
	return s
}

// foldRune is the small letter of the first of r's case forms (its
// unicode.SimpleFold orbit), so that every form of a letter gives one.
func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		return r // lowered already: its other forms fold to it
	}
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	return unicode.ToLower(least)
}

// pack lays the docs' text out in one block, in the index's order, which
// is the order a search reads it in: text spread over the heap as the
// files were read costs a cache miss for each field of each object, and
// made a search of 10,000 objects cost more than ten of 1,000 (B7).
func pack(docs []searchDoc) {
	size, tags := 0, 0
	for _, d := range docs {
		size += len(d.id) + len(d.title) + len(d.kind) + len(d.desc) + len(d.body)
		for _, t := range d.tags {
			size += len(t)
		}
		tags += len(d.tags)
	}
	var block strings.Builder
	block.Grow(size)
	type span struct{ from, to int }
	put := func(s string) span {
		block.WriteString(s)
		return span{block.Len() - len(s), block.Len()}
	}
	spans := make([]span, 0, 5*len(docs)+tags)
	for _, d := range docs {
		spans = append(spans, put(d.id), put(d.title), put(d.kind), put(d.desc), put(d.body))
		for _, t := range d.tags {
			spans = append(spans, put(t))
		}
	}
	text, tagBlock := block.String(), make([]string, 0, tags)
	at := func() string { sp := spans[0]; spans = spans[1:]; return text[sp.from:sp.to] }
	for i := range docs {
		d := &docs[i]
		d.id, d.title, d.kind, d.desc, d.body = at(), at(), at(), at(), at()
		if len(d.tags) > 0 {
			start := len(tagBlock)
			for range d.tags {
				tagBlock = append(tagBlock, at())
			}
			d.tags = tagBlock[start:len(tagBlock):len(tagBlock)]
		}
	}
}

// Search ranks the objects (of this kind, "" = any) against the query,
// compared without regard to case. The query is split into blank-separated
// terms (repeats count once, and the first 64 count); each term adds, per
// object: 10 when it is the whole id, else 3 when it occurs in the id; 3
// when it occurs in the title; 2 when it occurs in a tag; 2 in the kind; 2
// in the description; 1 per occurrence in the body, at most 5. Objects scoring 0 are left out. Hits
// are ordered by score, then URI. limit <= 0 means 10; it is capped at 100.
func (ix *Index) Search(query, kind string, limit int) []Hit {
	if limit <= 0 {
		limit = defaultLimit
	}
	limit = min(limit, maxSearchLimit)
	terms := uniqueTerms(query)
	if len(terms) == 0 {
		return nil
	}
	if len(ix.docs) != len(ix.Objects) {
		ix = ix.withTables()
	}
	// Rank positions, not objects: only the hits returned are copied.
	// Objects are sorted by URI, so the position breaks ties by URI. Only
	// the best limit are kept while scanning: the cost stays linear in the
	// objects however many match.
	best := topHits{limit: limit}
	for i := range ix.Objects {
		if kind != "" && ix.Objects[i].Kind != kind {
			continue
		}
		if s := ix.docs[i].score(terms); s > 0 {
			best.offer(ranked{i, s})
		}
	}
	found := best.hits
	if len(found) == 0 {
		return nil
	}
	hits := make([]Hit, len(found))
	for k, r := range found {
		hits[k] = Hit{Object: ix.Objects[r.i], Score: r.score}
	}
	return hits
}

// ranked is an object's position in the index and its score.
type ranked struct {
	i     int
	score float64
}

// before orders hits: higher score first, then lower position (URI).
func (r ranked) before(o ranked) bool {
	if r.score != o.score {
		return r.score > o.score
	}
	return r.i < o.i
}

// topHits keeps the best limit hits offered, in order.
type topHits struct {
	limit int
	hits  []ranked
}

func (t *topHits) offer(r ranked) {
	n := len(t.hits)
	if n == t.limit && !r.before(t.hits[n-1]) {
		return
	}
	at := sort.Search(n, func(k int) bool { return r.before(t.hits[k]) })
	if n < t.limit {
		t.hits = append(t.hits, ranked{})
	}
	copy(t.hits[at+1:], t.hits[at:])
	t.hits[at] = r
}

func (d *searchDoc) score(terms []string) float64 {
	total := 0
	for _, t := range terms {
		switch {
		case d.id == t:
			total += scoreIDExact
		case strings.Contains(d.id, t):
			total += scoreIDTitle
		}
		if strings.Contains(d.title, t) {
			total += scoreIDTitle
		}
		for _, tag := range d.tags {
			if strings.Contains(tag, t) {
				total += scoreTagKind
				break
			}
		}
		if strings.Contains(d.kind, t) {
			total += scoreTagKind
		}
		if strings.Contains(d.desc, t) {
			total += scoreDesc
		}
		if n := countUpTo(d.body, t, maxBodyCount); n > 0 {
			total += n * scoreBody
		}
	}
	return float64(total)
}

// countUpTo counts non-overlapping occurrences of t in s, stopping at max.
func countUpTo(s, t string, max int) int {
	n := 0
	for n < max {
		i := strings.Index(s, t)
		if i < 0 {
			break
		}
		n++
		s = s[i+len(t):]
	}
	return n
}

// maxTerms bounds the terms a query counts: each is looked for in every
// object, and a query may be as long as a message.
const maxTerms = 64

// uniqueTerms lower-cases and splits a query, dropping repeated terms and
// those past the first maxTerms.
func uniqueTerms(query string) []string {
	var out []string
	seen := make(map[string]bool)
	for t := range strings.FieldsSeq(fold(query)) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
		if len(out) == maxTerms {
			break
		}
	}
	return out
}
