package layer

import (
	"slices"
	"unicode"
)

// The joiners are format characters that words of some scripts need
// (Persian, the Indic ones); anywhere else one only makes a URI that shows
// as another. An id may hold one where IDNA's CONTEXTJ rule allows it
// (joins).
const zwnj, zwj = '\u200c', '\u200d'

// joins reports whether the joiner at runes[i] is one a word needs: either
// after a character of combining class 9 (a virama), or a ZWNJ between a
// left- or dual-joining letter and a right- or dual-joining one, marks
// between them aside. The joining letters known here are the Arabic
// script's; another joining script's ZWNJ is refused.
func joins(runes []rune, i int) bool {
	if i == 0 || i == len(runes)-1 {
		return false
	}
	if slices.Contains(viramas, runes[i-1]) {
		return true
	}
	if runes[i] != zwnj {
		return false
	}
	b, a := i-1, i+1
	for b >= 0 && unicode.Is(unicode.Mn, runes[b]) {
		b--
	}
	for a < len(runes) && unicode.Is(unicode.Mn, runes[a]) {
		a++
	}
	return b >= 0 && a < len(runes) && joinsLeft(runes[b]) && joinsRight(runes[a])
}

// joinsRight reports whether c is an Arabic letter that joins the letter
// before it (dual- or right-joining); presentation forms are shapes, not
// letters, and join nothing.
func joinsRight(c rune) bool {
	return unicode.Is(unicode.Arabic, c) && unicode.IsLetter(c) && c != '\u0621' && c != '\u0674' &&
		(c < 0xfb50 || c > 0xfdff) && (c < 0xfe70 || c > 0xfeff)
}

// joinsLeft reports whether c is an Arabic letter that joins the letter
// after it (dual-joining: not one of the right-joining ones).
func joinsLeft(c rune) bool { return joinsRight(c) && !slices.Contains(rightJoining, c) }

// viramas are the characters of combining class 9 (Unicode 15).
var viramas = []rune{
	0x094d, 0x09cd, 0x0a4d, 0x0acd, 0x0b4d, 0x0bcd, 0x0c4d, 0x0ccd,
	0x0d3b, 0x0d3c, 0x0d4d, 0x0dca, 0x0e3a, 0x0eba, 0x0f84, 0x1039,
	0x103a, 0x1714, 0x1715, 0x1734, 0x17d2, 0x1a60, 0x1b44, 0x1baa,
	0x1bab, 0x1bf2, 0x1bf3, 0x2d7f, 0xa806, 0xa82c, 0xa8c4, 0xa953,
	0xa9c0, 0xaaf6, 0xabed, 0x10a3f, 0x11046, 0x11070, 0x1107f, 0x110b9,
	0x11133, 0x11134, 0x111c0, 0x11235, 0x112ea, 0x1134d, 0x11442, 0x114c2,
	0x115bf, 0x1163f, 0x116b6, 0x1172b, 0x11839, 0x1193d, 0x1193e, 0x119e0,
	0x11a34, 0x11a47, 0x11a99, 0x11c3f, 0x11d44, 0x11d45, 0x11d97, 0x11f41,
	0x11f42,
}

// rightJoining are the Arabic letters that join only the letter before
// them (alef, dal, reh, waw and their kin).
var rightJoining = []rune{
	0x0622, 0x0623, 0x0624, 0x0625, 0x0627, 0x0629, 0x062f, 0x0630,
	0x0631, 0x0632, 0x0648, 0x0671, 0x0672, 0x0673, 0x0675, 0x0676,
	0x0677, 0x0688, 0x0689, 0x068a, 0x068b, 0x068c, 0x068d, 0x068e,
	0x068f, 0x0690, 0x0691, 0x0692, 0x0693, 0x0694, 0x0695, 0x0696,
	0x0697, 0x0698, 0x0699, 0x06c0, 0x06c3, 0x06c4, 0x06c5, 0x06c6,
	0x06c7, 0x06c8, 0x06c9, 0x06ca, 0x06cb, 0x06cd, 0x06cf, 0x06d2,
	0x06d3, 0x06d5, 0x06ee, 0x06ef,
}
