package node

import (
	"context"
	"encoding/json"
	"testing"
)

// answering answers every message with its own bytes.
type answering struct{}

func (answering) Handle(_ context.Context, msg json.RawMessage) []byte { return msg }

func TestWhatWaitsForTheNextAnswerRunsOnceAfterIt(t *testing.T) {
	r := newRouter()
	runs := 0
	r.afterNextAnswer(func() { runs++ })
	r.set(answering{})
	for i := range 3 {
		if a := r.Handle(context.Background(), json.RawMessage(`{"id":1}`)); string(a) != `{"id":1}` {
			t.Fatalf("answered %s", a)
		}
		if runs != 1 {
			t.Fatalf("after answer %d: ran %d times, want once", i+1, runs)
		}
	}
}
