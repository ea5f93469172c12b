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
