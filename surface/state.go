package surface

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// The checkout's shared state (docs/design.md#nothing-is-lost): what of a
// surface outlives its process, so that the server that takes over shows
// the same history and the same departed announcers. It is written as a
// journal: a header line naming StateSchema, then one record a line, each a
// JSON object with one of the keys "execution" (an [Execution] as
// majordomus_executions shows it), "peer" (a [Peer] that announced, as
// majordomus_peers shows it; the latest record of an id is what the peer
// is) or "layer" (a [Generation] of the layer the server served: the next
// server goes on from the highest). A final line without its newline is a
// record cut short by a kill and is dropped; keys this version does not
// know are ignored. Writing it is the caller's business.

// StateSchema names the format of the shared state.
const StateSchema = "majordomus-mcp-state/v1"

// maxStateRecord bounds a record of the shared state, so that the state
// stays bounded however long an announcement is: a peer whose record is
// longer is not kept there (its client still carries its announcement to
// the next server).
const maxStateRecord = 64 << 10

// State is the checkout's shared state: the last executionsKept
// executions, oldest first, the last departedKept peers that announced, in
// the order of their latest record, and the highest generation of the
// layer served (zero when none was recorded).
type State struct {
	Executions []Execution
	Peers      []Peer
	Layer      Generation
}

// Generation is a generation of the layer a server served, and the digest
// of what it served under it ([layer.Index.Digest]): a server that takes
// over serves the same files under the same generation, and changed ones
// under the next.
type Generation struct {
	Number uint64 `json:"number"`
	Digest string `json:"digest"`
}

// record is one line of the journal.
type record struct {
	Schema    string      `json:"schema,omitempty"`
	Execution *Execution  `json:"execution,omitempty"`
	Peer      *Peer       `json:"peer,omitempty"`
	Layer     *Generation `json:"layer,omitempty"`
}

// apply adds one record to st, within its bounds, keeping the higher
// generation.
func (st *State) apply(r record) {
	if g := r.Layer; g != nil && g.Number >= st.Layer.Number {
		st.Layer = *g
	}
	if r.Execution != nil {
		st.Executions = appendBounded(st.Executions, *r.Execution)
	}
	if p := r.Peer; p != nil && p.Announcement != nil {
		if _, ok := peerNumber(p.ID); ok {
			st.Peers = slices.DeleteFunc(st.Peers, func(q Peer) bool { return q.ID == p.ID })
			st.Peers = append(st.Peers, *p)
			if len(st.Peers) > departedKept {
				st.Peers = slices.Delete(st.Peers, 0, len(st.Peers)-departedKept)
			}
		}
	}
}

// DecodeState reads a journal. It fails, saying why, when raw is not one:
// empty, a first line that is not a header of StateSchema, or a whole line
// that is not a record. torn says a final partial line was dropped.
func DecodeState(raw []byte) (st State, torn bool, err error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return State{}, false, errors.New("it is empty")
	}
	lines := bytes.Split(raw, []byte("\n"))
	torn = len(lines[len(lines)-1]) > 0
	lines = lines[:len(lines)-1] // the part after the last newline: empty, or cut short
	if len(lines) == 0 {
		return State{}, torn, errors.New("its header is cut short")
	}
	var head struct {
		Schema *string `json:"schema"`
	}
	if json.Unmarshal(lines[0], &head) != nil || head.Schema == nil {
		return State{}, torn, errors.New("its first line is not a header naming a schema")
	}
	if *head.Schema != StateSchema {
		return State{}, torn, fmt.Errorf("it is of another schema (%s, not %q)", quoted(*head.Schema), StateSchema)
	}
	// Read from the newest: the records the bounds leave out are only
	// checked to be JSON, which costs a tenth of decoding them.
	seen := map[string]bool{}
	for i := len(lines) - 1; i > 0; i-- {
		line := lines[i]
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if len(st.Executions) == executionsKept && bytes.HasPrefix(line, executionPrefix) {
			if !json.Valid(line) {
				return State{}, torn, fmt.Errorf("line %d is not a record", i+1)
			}
			continue
		}
		var r record
		if err := json.Unmarshal(line, &r); err != nil {
			return State{}, torn, fmt.Errorf("line %d is not a record: %v", i+1, err)
		}
		if r.Layer != nil && r.Layer.Number > st.Layer.Number { // the newest of the highest
			st.Layer = *r.Layer
		}
		if r.Execution != nil && len(st.Executions) < executionsKept {
			st.Executions = append(st.Executions, *r.Execution)
		}
		if p := r.Peer; p != nil && p.Announcement != nil && !seen[p.ID] && len(st.Peers) < departedKept {
			if _, ok := peerNumber(p.ID); ok {
				seen[p.ID] = true
				st.Peers = append(st.Peers, *p)
			}
		}
	}
	slices.Reverse(st.Executions)
	slices.Reverse(st.Peers)
	return st, torn, nil
}

// executionPrefix starts every execution record as encodeRecord writes it.
var executionPrefix = []byte(`{"execution":`)

// EncodeState is st as a whole journal: its header, its generation and a
// record for each execution and peer.
func EncodeState(st State) []byte {
	var b bytes.Buffer
	b.Write(encodeRecord(record{Schema: StateSchema}))
	if st.Layer.Number > 0 {
		b.Write(encodeRecord(record{Layer: &st.Layer}))
	}
	for i := range st.Executions {
		b.Write(encodeRecord(record{Execution: &st.Executions[i]}))
	}
	for i := range st.Peers {
		if line := encodeRecord(record{Peer: &st.Peers[i]}); len(line) <= maxStateRecord {
			b.Write(line)
		}
	}
	return b.Bytes()
}

// encodeRecord is one line of the journal, its newline included.
func encodeRecord(r record) []byte {
	b, _ := json.Marshal(r) // of this package's types: never fails
	return append(b, '\n')
}

// StateMirror is a State kept up to date from the records a surface gives
// its sink: what a journal's writer rewrites it from. It is not safe for
// concurrent use.
type StateMirror struct{ st State }

// NewStateMirror starts a mirror at st.
func NewStateMirror(st State) *StateMirror {
	return &StateMirror{st: State{Executions: slices.Clone(st.Executions), Peers: slices.Clone(st.Peers), Layer: st.Layer}}
}

// Apply adds a record line, as a sink was given it.
func (m *StateMirror) Apply(line []byte) {
	var r record
	if json.Unmarshal(line, &r) == nil {
		m.st.apply(r)
	}
}

// Encode is the mirror's state as a whole journal.
func (m *StateMirror) Encode() []byte {
	m.st.Executions = m.st.Executions[max(0, len(m.st.Executions)-executionsKept):] // apply cuts it now and then only
	return EncodeState(m.st)
}
