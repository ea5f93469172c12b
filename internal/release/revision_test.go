package release

import (
	"encoding/binary"
	"strings"
	"testing"
)

func TestStartupRevisionIdentifiesThisBuild(t *testing.T) {
	r := StartupRevision()
	if !strings.HasPrefix(r.Startup, Number+"+") {
		t.Fatalf("startup revision %q: a test binary carries at least its build ID", r.Startup)
	}
	if StartupRevision() != r {
		t.Fatal("the startup revision is not stable")
	}
	note := func(name string, typ uint32, desc string) []byte {
		b := binary.LittleEndian.AppendUint32(nil, uint32(len(name)))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(desc)))
		b = binary.LittleEndian.AppendUint32(b, typ)
		return append(append(b, name...), desc...)
	}
	if got := goBuildID(note("Go\x00\x00", 4, "abc/def"), binary.LittleEndian); string(got) != "abc/def" {
		t.Errorf("goBuildID = %q", got)
	}
	for _, bad := range [][]byte{note("GNU\x00", 4, "x"), note("Go\x00\x00", 3, "x"), note("Go\x00\x00", 4, "x")[:14], nil} {
		if got := goBuildID(bad, binary.LittleEndian); got != nil {
			t.Errorf("goBuildID(%q) = %q, want nothing", bad, got)
		}
	}
	// Mach-O and PE: the text at the start of the code.
	if got := goBuildIDText([]byte("MZ...\xff Go build ID: \"abc/def\"\n \xff...")); string(got) != "abc/def" {
		t.Errorf("goBuildIDText = %q", got)
	}
	for _, bad := range []string{"", "\xff Go build ID: \"abc", "Go build ID: abc", "\xff Go build ID: \"\"\n \xff"} {
		if got := goBuildIDText([]byte(bad)); got != nil {
			t.Errorf("goBuildIDText(%q) = %q, want nothing", bad, got)
		}
	}
}
