package together

import (
	"strings"
	"testing"
)

// JSON's whitespace is space, tab, CR and LF (RFC 8259 §2), nothing else:
// a line that holds other white space (a no-break space, a form feed, a
// line separator), alone or around a message, is no JSON text, and is
// answered -32700 with id null as any other, not taken for a blank line or
// for the message inside it.
func TestOnlyJSONWhitespaceIsTrimmedFromALine(t *testing.T) {
	s := newSession(t, nil)
	for _, line := range []string{
		"\u00a0",
		"\f",
		"\u2028",
		`{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\u00a0",
		"\v" + `{"jsonrpc":"2.0","id":3,"method":"ping"}`,
		"\u0085" + `{"jsonrpc":"2.0","id":4,"method":"ping"}`,
	} {
		s.send(line, `{"jsonrpc":"2.0","id":"fence","method":"ping"}`)
		if got := s.next(); !strings.Contains(got, `"id":null,"error":{"code":-32700`) {
			t.Errorf("line %q is answered %s, want -32700 with id null", line, got)
			if !strings.Contains(got, `"fence"`) {
				s.next() // the fence's
			}
			continue
		}
		s.next() // the fence's
	}
	// CR, tab and space around a message are JSON's own: it is served
	s.send("\t " + `{"jsonrpc":"2.0","id":5,"method":"ping"}` + " \r")
	if got := s.next(); got != `{"jsonrpc":"2.0","id":5,"result":{}}` {
		t.Errorf("a message within JSON whitespace is answered %s", got)
	}
	s.close()
}
