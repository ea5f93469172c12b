package surface

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text one client supplies (its name, its intent, its scope) is data: it
// reaches other clients' instructions and messages only through quoted,
// never as prose of its own. A quoted text is one line, in double quotes,
// with every control, format and non-printable character escaped, and
// every one that shows as nothing or as a double quote, and at most
// maxQuoted characters of the original (an ellipsis says the rest was
// cut). majordomus_peers returns the same text whole, as JSON data.

// maxQuoted bounds how many characters of a peer's text prose quotes.
const maxQuoted = 64

// quoted renders peer-supplied s for prose.
func quoted(s string) string { return quoteWithin(s, maxQuoted) }

// inline is s as quoteWithin renders it, without the quotes: for a field
// of data another client reads (its log, an answer's overlaps), where the
// text stays one line of printable characters, bounded.
func inline(s string, limit int) string {
	return strings.TrimSuffix(quoteWithin(s, limit)[1:], `"`)
}

// quoteWithin is quoted keeping at most limit characters of s.
func quoteWithin(s string, limit int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	cut := false
	if utf8.RuneCountInString(s) > limit {
		s, cut = string([]rune(s)[:limit]), true
	}
	q := escapeLookalikes(strconv.Quote(s))
	if cut {
		q = q[:len(q)-1] + `…"`
	}
	return q
}

// escapeLookalikes escapes in q, a quoted text, each printable character
// that strconv.Quote leaves as it is but that shows as a double quote or
// as nothing: one would seem to close the quoting, and what follows it to
// be prose of its own; the other would let fillers pass for no name, or
// hide inside a word (the board page escapes both alike). q's own quotes,
// and its escaped ones, are ASCII and stay.
func escapeLookalikes(q string) string {
	if !strings.ContainsFunc(q, shownAmiss) {
		return q
	}
	var b strings.Builder
	for _, r := range q {
		switch {
		case !shownAmiss(r):
			b.WriteRune(r)
		case r > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// shownAmiss reports whether r shows as a quotation mark, or as nothing:
// the default ignorable characters Unicode lists besides the format
// controls, which strconv.Quote escapes already.
func shownAmiss(r rune) bool {
	return looksLikeAQuote(r) || unicode.In(r, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}

// looksLikeAQuote reports whether r, not ASCII, shows as a quotation mark:
// Unicode's quotation marks, the primes, the quotation dingbats and
// ornaments, and the modifier letters and signs drawn as ″.
func looksLikeAQuote(r rune) bool {
	switch {
	case r <= unicode.MaxASCII:
		return false
	case unicode.Is(unicode.Quotation_Mark, r),
		r >= 0x2032 && r <= 0x2037, r == 0x2057,
		r >= 0x275b && r <= 0x2760, r >= 0x1f676 && r <= 0x1f678:
		return true
	}
	return slices.Contains([]rune{0x02ba, 0x02dd, 0x02ee, 0x02f6, 0x05f4, 0x1cd3, 0x3003}, r)
}
