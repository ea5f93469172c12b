package surface

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Text one client supplies (its name, its intent, its scope) is data: it
// reaches other clients' instructions and messages only through quoted,
// never as prose of its own. A quoted text is one line, in double quotes,
// with every control, format and non-printable character escaped, and at
// most maxQuoted characters of the original (an ellipsis says the rest was
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
	q := lookalikeQuotes.Replace(strconv.Quote(s))
	if cut {
		q = q[:len(q)-1] + `…"`
	}
	return q
}

// lookalikeQuotes escapes the printable characters that show as a double
// quote, which strconv.Quote leaves as they are: one would seem to close
// the quoting, and what follows it to be prose of its own.
var lookalikeQuotes = strings.NewReplacer(
	"\u201c", `\u201c`, "\u201d", `\u201d`, "\u201e", `\u201e`, "\u201f", `\u201f`,
	"\u2033", `\u2033`, "\u2036", `\u2036`, "\u301d", `\u301d`, "\u301e", `\u301e`, "\u301f", `\u301f`, "\uff02", `\uff02`,
	"\u02ba", `\u02ba`, "\u02dd", `\u02dd`, "\u02ee", `\u02ee`, "\u02f6", `\u02f6`, "\u05f4", `\u05f4`, "\u3003", `\u3003`, "\u1cd3", `\u1cd3`,
)
