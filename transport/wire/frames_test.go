package wire

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"
)

// What waits for the client's first frame (a bridge's tuning, which stops
// the world) runs once that frame is out, never before it, and once; asked
// for after a frame went out, it runs at once.
func TestWhatWaitsForAFrameRunsOnceOneIsWritten(t *testing.T) {
	var out bytes.Buffer
	f := NewFrameWriter(&out)
	runs := 0
	f.AfterWritten(func() {
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
	f.AfterWritten(func() { runs++ })
	if runs != 2 {
		t.Fatal("asked for once a frame was out, it did not run at once")
	}
}

// stalledWriter is a client that stopped reading: a write waits until
// release is closed; entered is closed once one waits.
type stalledWriter struct{ entered, release chan struct{} }

func (w *stalledWriter) Write(p []byte) (int, error) {
	select {
	case <-w.entered: // a write after the stall: the client reads again
	default:
		close(w.entered)
	}
	<-w.release
	return len(p), nil
}

// Asking for what follows a frame never waits on a client that does not
// read: the machine that asks would hear no signal meanwhile. What was
// asked for while the first frame was being written runs once it is out.
func TestAskingForAFrameNeverWaitsOnTheClient(t *testing.T) {
	w := &stalledWriter{make(chan struct{}), make(chan struct{})}
	f := NewFrameWriter(w)
	written := make(chan error, 1)
	go func() { written <- f.Write([]byte(`{"id":1}`)) }()
	<-w.entered
	asked, ran := make(chan struct{}), make(chan struct{})
	go func() {
		f.AfterWritten(func() { close(ran) })
		close(asked)
	}()
	select {
	case <-asked:
	case <-time.After(10 * time.Second):
		t.Fatal("AfterWritten waited on a frame the client does not read")
	}
	select {
	case <-ran:
		t.Fatal("it ran before the frame being written was out")
	default:
	}
	close(w.release)
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	<-ran // once that frame was out
}

// A request with a key given twice, one copy of the wrong type, is still
// a request its client waits on: refused, it is answered, alone or in a
// batch.
func TestARequestWithAKeyTwiceIsRefusedWithAnAnswer(t *testing.T) {
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":7,"method":5,"method":"tools/list"}`,
		`[{"jsonrpc":"2.0","id":7,"method":"tools/list","method":5},{"jsonrpc":"2.0","method":"notifications/x"}]`,
	} {
		got := string(RefuseEach([]byte(msg), -32600, "refused"))
		if !bytes.Contains([]byte(got), []byte(`"id":7`)) || !bytes.Contains([]byte(got), []byte(`"refused"`)) {
			t.Errorf("RefuseEach(%s) = %q, want id 7 refused", msg, got)
		}
	}
}

// A line over the message limit made of the smallest requests is refused
// within the bound its answers have (docs/security.md#bounded): each
// refusal is seven times its request, and a 16 MiB line of them was
// answered with 128 MB, more than it was before the refusals were
// bounded (107 MB).
func TestARefusedLineOfRequestsIsBounded(t *testing.T) {
	const member = `{"id":1,"method":"a"}`
	line := "[" + strings.Repeat(member+",", (16<<20)/(len(member)+1)-1) + member + "]"
	got := RefuseEach([]byte(line), -32600, "invalid request: the message is 16777216 bytes, over the limit of 1048576 bytes")
	if len(got) > 2*maxBatchAnswerBytes+maxBatchAnswerBytes/8 { // the bound counts no commas
		t.Fatalf("a line of %d bytes refused with %d bytes: over twice the bound of %d", len(line), len(got), maxBatchAnswerBytes)
	}
	var answers []json.RawMessage
	if err := json.Unmarshal(got, &answers); err != nil || len(answers) == 0 {
		t.Fatalf("the refusals are no array (%v): %.200s", err, got)
	}
}

// A line over the message limit is refused member by member without
// holding its members as a slice of copies: a 16 MiB line of the
// smallest members cost a process 1 GB and 9 s of CPU when its members
// were all split out first. What its refusal allocates stays within
// some times the line (its answers, 16 MiB, are written twice over as
// they are gathered, and a pooled encoder may have to grow again, more
// often under -race): 3.4 GB before, 70 to 134 MB after (229 under
// -race).
func TestARefusedLineOfTinyMembersCostsAFewTimesItsSize(t *testing.T) {
	line := []byte("[" + strings.Repeat("1,", (16<<20)/2-1) + "1]")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got := RefuseEach(line, -32600, "invalid request: over the limit")
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 32*uint64(len(line)) {
		t.Errorf("refusing a line of %d bytes allocated %d MB", len(line), n>>20)
	}
	if !bytes.HasPrefix(got, []byte(`[{"jsonrpc":"2.0","id":null,"error":{"code":-32600`)) {
		t.Fatalf("the members are refused as %.200s", got)
	}
}

// A batch's members are found by following its strings and nesting only:
// each is what a JSON decoder reads, whatever its strings hold.
func TestABatchSplitsAsADecoderReadsIt(t *testing.T) {
	for _, batch := range []string{
		`[]`, ` [ ] `, `[1]`, `[ 1 , "a" ,null]`, "[\n\t{\"id\":1}\r\n]",
		`[{"a":"],[,{"},[[1,2],{"b":[3]}],"x\"],"]`,
		`["\\\\",{"s":"\\\\\""},"\u005d"]`,
		`[[],{},[[]],{"":{}}]`,
	} {
		var want []json.RawMessage
		if err := json.Unmarshal([]byte(batch), &want); err != nil {
			t.Fatalf("%s: %v", batch, err)
		}
		got, ok := SplitBatch([]byte(batch))
		if !ok || len(got) != len(want) {
			t.Fatalf("%s split into %q, want %q", batch, got, want)
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Errorf("%s: member %d is %s, want %s", batch, i, got[i], want[i])
			}
		}
	}
	for _, notBatch := range []string{`{"id":1}`, `[1,`, `[1]]`, ``, `"[1]"`} {
		if got, ok := SplitBatch([]byte(notBatch)); ok {
			t.Errorf("%q split as a batch: %q", notBatch, got)
		}
	}
}
