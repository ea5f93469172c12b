package layer

import "testing"

// A joiner stands in an id where a word needs it, as IDNA's CONTEXTJ
// rule says, and nowhere else: elsewhere it only makes a URI that shows as
// another. (Any joiner between two non-ASCII letters was taken, so that
// alef, ZWNJ, beh showed as alef, beh; and a Khmer or Myanmar word's was
// refused.)
func TestAJoinerStandsOnlyWhereAWordNeedsIt(t *testing.T) {
	for _, tc := range []struct {
		id string
		ok bool
	}{
		{"\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645", true}, // Persian: a dual-joining yeh, then khah
		{"\u0915\u094d\u200d\u0937", true},                         // Devanagari: after a virama
		{"\u1780\u17d2\u200c\u1780", true},                         // Khmer: after its coeng
		{"\u1000\u103a\u200d\u1000", true},                         // Myanmar: after its asat
		{"\u0628\u064e\u200c\u062e", true},                         // a mark between the letter and the ZWNJ
		{"\u0627\u200c\u0628", false},                              // after alef, which joins nothing after it
		{"\u0621\u200c\u0628", false},                              // after hamza, which joins nothing
		{"\ufe91\u200c\ufe91", false},                              // presentation forms are shapes
		{"caf\u00e9\u200d\u00e9", false},
		{"a\u200db", false},
		{"\u200cab", false},
		{"\u0628\u200d\u0628", false}, // a ZWJ wants a virama before it
	} {
		if got := uriUnsafe(tc.id) == ""; got != tc.ok {
			t.Errorf("%+q: taken %v, want %v", tc.id, got, tc.ok)
		}
	}
}
