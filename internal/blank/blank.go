// Package blank is the one rule for a text that shows nothing, wherever a
// required argument is checked: the transport refuses a required prompt
// argument (-32602) before mcp-go sees it, by the rule the surface
// refuses a tool's, so that no value passes one and fails the other (a
// handler's refusal would be -32603). The layer refuses an object's id
// that holds such a character (Unseen), which would show one URI as
// another.
package blank

import (
	"strings"
	"unicode"
)

// Is reports whether s shows nothing: white space, control and format
// characters that are never drawn (a zero-width space, a direction mark;
// not the marks that prefix a number, which are), variation selectors and
// the other fillers Unicode says to ignore, and the blank braille cell.
func Is(s string) bool { return strings.TrimFunc(s, Unseen) == "" }

// Unseen reports whether r is never drawn, by Is's rule.
func Unseen(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsControl(r) || r == '\u2800' ||
		unicode.Is(unicode.Cf, r) && !unicode.Is(unicode.Prepended_Concatenation_Mark, r) ||
		unicode.In(r, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)
}
