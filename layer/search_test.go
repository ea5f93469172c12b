package layer

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

func TestSearch(t *testing.T) {
	files := map[string]string{
		".ai/manifest.yaml": testManifest,
		// exact id 10 + title 3
		".ai/repo/a.md": "---\nid: lease\nkind: rule\ntitle: Leases\n---\nnothing\n",
		// id substring 3 + title 3
		".ai/repo/b.md": "---\nid: lease-file\nkind: rule\ntitle: The lease file\n---\n",
		// tag 2 + description 2
		".ai/repo/c.md": "---\nid: c\nkind: adr\ntags: [LEASE]\ndescription: about the lease\n---\n",
		// body 1 per occurrence, capped at 5
		".ai/repo/d.md": "---\nid: d\nkind: prompt\n---\nlease lease lease lease lease lease lease\n",
		".ai/repo/e.md": "---\nid: e\nkind: prompt\n---\nlease once\n",
		".ai/repo/f.md": "---\nid: f\nkind: prompt\n---\nunrelated\n",
		// tie with e (score 1): URI order decides
		".ai/repo/g.md": "---\nid: aa\nkind: prompt\n---\nLease\n",
	}
	ix := buildTree(t, files)
	type res struct {
		URI   string
		Score float64
	}
	tests := []struct {
		name        string
		query, kind string
		limit       int
		want        []res
	}{
		{"ranking", "lease", "", 0, []res{
			{"majordomus://rule/lease", 13},
			{"majordomus://rule/lease-file", 6},
			{"majordomus://prompt/d", 5},
			{"majordomus://adr/c", 4},
			{"majordomus://prompt/aa", 1},
			{"majordomus://prompt/e", 1},
		}},
		{"case-insensitive and kind filter", "LEASE", "prompt", 0, []res{
			{"majordomus://prompt/d", 5},
			{"majordomus://prompt/aa", 1},
			{"majordomus://prompt/e", 1},
		}},
		{"limit", "lease", "", 2, []res{{"majordomus://rule/lease", 13}, {"majordomus://rule/lease-file", 6}}},
		{"terms add up, repeats once", "file lease file", "", 2, []res{{"majordomus://rule/lease", 13}, {"majordomus://rule/lease-file", 12}}},
		{"kind matches", "adr", "", 0, []res{{"majordomus://adr/c", 2}}},
		{"nothing matches", "zebra", "", 0, nil},
		{"blank query", "  ", "", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []res
			for _, h := range ix.Search(tt.query, tt.kind, tt.limit) {
				got = append(got, res{h.Object.URI, h.Score})
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Search(%q, %q, %d) =\n%v\nwant\n%v", tt.query, tt.kind, tt.limit, got, tt.want)
			}
		})
	}
}

func TestSearchLimits(t *testing.T) {
	files := map[string]string{".ai/manifest.yaml": testManifest}
	for i := range 150 {
		files[fmt.Sprintf(".ai/repo/n%03d.md", i)] = fmt.Sprintf("---\nid: n%03d\nkind: note\n---\nword\n", i)
	}
	ix := buildTree(t, files)
	if got := len(ix.Search("word", "", 0)); got != 10 {
		t.Errorf("default limit gave %d hits", got)
	}
	if got := len(ix.Search("word", "", 1000)); got != 100 {
		t.Errorf("limit 1000 gave %d hits, want the cap 100", got)
	}
	if h := ix.Search("word", "", 3); h[0].Object.ID != "n000" || h[2].Object.ID != "n002" {
		t.Errorf("ties not in URI order: %v", h)
	}
}

// A query counts its first 64 distinct words: one as long as a message
// looks for no more than that in each object.
func TestAQueryCountsItsFirst64Words(t *testing.T) {
	ix := buildTree(t, map[string]string{
		".ai/manifest.yaml":  testManifest,
		".ai/repo/early.md":  "---\nid: early\nkind: note\n---\nw063x\n",
		".ai/repo/late.md":   "---\nid: late\nkind: note\n---\nw064x\n",
		".ai/repo/repeat.md": "---\nid: repeat\nkind: note\n---\nw000x\n",
	})
	words := make([]string, 0, 200)
	for i := range 100 {
		words = append(words, fmt.Sprintf("w%03dx", i), "w000x") // repeats count once
	}
	var got []string
	for _, h := range ix.Search(strings.Join(words, " "), "", 10) {
		got = append(got, h.Object.ID)
	}
	if want := []string{"early", "repeat"}; !slices.Equal(got, want) {
		t.Errorf("hits %q, want %q: the 64th distinct word counts, the 65th does not", got, want)
	}
}

func TestTheBestHitsAreKeptInOrderWhileScanning(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		limit := 1 + rng.IntN(12)
		var all []ranked
		best := topHits{limit: limit}
		for i := range rng.IntN(60) {
			r := ranked{i: i, score: float64(rng.IntN(6))}
			all = append(all, r)
			best.offer(r)
		}
		sort.Slice(all, func(a, b int) bool { return all[a].before(all[b]) })
		want := all[:min(limit, len(all))]
		if !slices.Equal(best.hits, want) {
			t.Fatalf("limit %d: kept %v, want %v", limit, best.hits, want)
		}
	}
}

// Packing the docs' text into one block changes no field of any doc.
func TestPackingKeepsEveryField(t *testing.T) {
	docs := []searchDoc{
		{id: "a.one", title: "one", kind: "rule", desc: "first", body: "body of one", tags: []string{"x", "", "y"}},
		{},
		{id: "b.two", kind: "adr", body: "two", tags: []string{}},
		{id: "c.three", title: "three", tags: []string{"z"}},
	}
	want := make([]searchDoc, len(docs))
	for i, d := range docs {
		want[i] = d
		want[i].tags = slices.Clone(d.tags)
	}
	pack(docs)
	if !reflect.DeepEqual(docs, want) {
		t.Fatalf("packed docs %+v, want %+v", docs, want)
	}
	docs[0].tags = append(docs[0].tags, "w") // a doc's tags do not run into the next doc's
	if docs[3].tags[0] != "z" {
		t.Fatalf("appending to one doc's tags changed another's: %q", docs[3].tags)
	}
}

// A search compares without regard to case as List compares tags: a word
// written in capitals finds it in small letters, whichever form a letter
// takes there (Greek's final sigma, the long s, the Kelvin sign).
func TestSearchIgnoresCaseAsTagsDo(t *testing.T) {
	ix := buildTree(t, map[string]string{
		".ai/manifest.yaml": testManifest,
		".ai/repo/a.md":     "---\nid: street\nkind: rule\ntitle: Οδός\ntags: [οδός]\n---\nΟ δρόμος της πόλης\n",
	})
	if got := ix.List("", "ΟΔΌΣ"); len(got) != 1 {
		t.Fatalf("List by the tag in capitals found %d objects, want 1", len(got))
	}
	for _, q := range []string{"ΟΔΌΣ", "οδόσ", "ΠΌΛΗΣ"} {
		if hits := ix.Search(q, "", 0); len(hits) != 1 {
			t.Errorf("Search(%q) found %d objects, want the one whose title, tag or body holds it", q, len(hits))
		}
	}
}

// A search and a tag find a word however its letters are encoded: "café"
// typed (composed, NFC) finds "café" as a file pasted from a macOS name
// holds it (decomposed, NFD), and the other way round, as the board
// compares the paths of a scope and as an id must be written.
func TestSearchIgnoresHowALetterIsComposed(t *testing.T) {
	ix := buildTree(t, map[string]string{
		".ai/manifest.yaml": testManifest,
		".ai/repo/nfd.md":   "---\nid: menu\nkind: rule\ntitle: \"Cafe\\u0301 rules\"\ntags: [\"cafe\\u0301\"]\n---\nThe cafe\u0301 opens early.\n",
		".ai/repo/nfc.md":   "---\nid: dish\nkind: rule\ntitle: \"Cr\\u00e8me\"\n---\nCr\u00e8me br\u00fbl\u00e9e.\n",
	})
	for q, want := range map[string]string{
		"caf\u00e9":          "majordomus://rule/menu", // composed query, decomposed text
		"CAF\u00c9":          "majordomus://rule/menu",
		"cre\u0300me":        "majordomus://rule/dish", // decomposed query, composed text
		"BRU\u0302LE\u0301E": "majordomus://rule/dish",
	} {
		if hits := ix.Search(q, "", 0); len(hits) != 1 || hits[0].Object.URI != want {
			t.Errorf("Search(%+q) found %v, want %s", q, hits, want)
		}
	}
	if got := ix.List("", "CAF\u00c9"); len(got) != 1 {
		t.Errorf("List by the tag composed found %d objects, want the one tagged with it decomposed", len(got))
	}
}
