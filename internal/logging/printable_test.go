package logging

import (
	"encoding/json"
	"testing"
)

// What a report quotes is escaped wherever it is not printable, and what
// is escaped reads back as the same text.
func TestPrintableJSONEscapesWhatIsNotPrintable(t *testing.T) {
	in := "{\n  \"a\": \"x\xffy\U000E0001\u202e\u009b\u00e9 \\\"\"\n}\n"
	want := "{\n  \"a\": \"x\\ufffdy\\udb40\\udc01\\u202e\\u009b\u00e9 \\\"\"\n}\n"
	got := string(PrintableJSON([]byte(in)))
	if got != want {
		t.Fatalf("PrintableJSON(%q)\n= %q\nwant %q", in, got, want)
	}
	var v struct{ A string }
	if err := json.Unmarshal([]byte(got), &v); err != nil || v.A != "x\ufffdy\U000E0001\u202e\u009b\u00e9 \"" {
		t.Fatalf("read back %q, %v", v.A, err)
	}
}
