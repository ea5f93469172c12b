package wire

import (
	"bytes"
	"testing"
)

// What waits for the next frame (a bridge's tuning, which stops the
// world) runs once that frame is out, never before it.
func TestWhatWaitsForTheNextFrameRunsOnceItIsWritten(t *testing.T) {
	var out bytes.Buffer
	f := NewFrameWriter(&out)
	runs := 0
	f.AfterNextWrite(func() {
		runs++
		if out.String() != "{\"id\":1}\n" {
			t.Errorf("ran with %q written, want the first frame whole", out.String())
		}
	})
	for i := range 3 {
		if err := f.Write([]byte(`{ "id": 1 }`)); err != nil {
			t.Fatal(err)
		}
		if runs != 1 {
			t.Fatalf("after frame %d: ran %d times, want once", i+1, runs)
		}
	}
}

// A request is one whatever case its keys are in, or however they are
// escaped, as Go's decoders read them: the stdio loop bounds requests
// under way by it, and a request taken for a notification would escape
// the bound.
func TestMayBeRequest(t *testing.T) {
	for msg, want := range map[string]bool{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`:         true,
		`{"jsonrpc":"2.0","ID":1,"METHOD":"ping"}`:         true,
		`{"jsonrpc":"2.0","\u0069d":1,"method":"ping"}`:    true,
		`{"jsonrpc":"2.0","method":"notifications/x"}`:     false,
		`{"jsonrpc":"2.0","id":1,"result":{}}`:             false,
		`{"jsonrpc":"2.0","method":"x","params":{"id":1}}`: true, // may be: counted
	} {
		if got := MayBeRequest([]byte(msg)); got != want {
			t.Errorf("%s: %v, want %v", msg, got, want)
		}
	}
}
