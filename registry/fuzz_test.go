package registry

import (
	"context"
	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
	"github.com/majordomus-mcp/majordomus-mcp/registry/proc"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// fuzzSeeds are lease files worth mutating: the corrupt, empty, other-schema
// and valid cases.
var fuzzSeeds = []string{
	"", " \n\t", "{not a lease", "{", "[]", "null", "42", `"schema"`,
	`{"schema":"something/v9","url":"http://127.0.0.1:1"}`,
	`{"schema":"majordomus-mcp-lease/v1"}`,
	`{"schema":"majordomus-mcp-lease/v1","pid":"x"}`,
	`{"schema":"majordomus-mcp-lease/v1","url":null,"pid":1}`,
	`{"schema":"majordomus-mcp-lease/v1","url":"http://127.0.0.1:1","instance":"a","executable":{"path":"/x","mtime":1,"size":2},"version":"0.0.1"}`,
	`{"schema":"majordomus-mcp-lease/v1","schema":"other"}`,
}

var validClasses = map[Class]bool{
	Absent: true, Live: true, Stale: true, Busy: true, Corrupt: true, Empty: true,
	Binding: true, Abandoned: true, Superseded: true, Unusable: true, Unprobed: true,
}

// checkVerdict holds for every verdict on raw bytes found in a regular file.
func checkVerdict(t *testing.T, raw []byte, v Verdict) {
	t.Helper()
	if !validClasses[v.Class] {
		t.Fatalf("class %q for %q", v.Class, raw)
	}
	if !strings.HasPrefix(v.Reason, string(v.Class)+" lease: ") {
		t.Fatalf("reason %q for class %s", v.Reason, v.Class)
	}
	doc, err := Decode(raw)
	if v.NeedsProbe && (err != nil || !doc.HasURL()) {
		t.Fatalf("NeedsProbe for %q (decode: %v)", raw, err)
	}
	if err != nil && (v.Class == Live || v.Class == Busy || v.Class == Stale || v.Class == Binding) {
		t.Fatalf("class %s for the invalid document %q", v.Class, raw)
	}
	if (len(strings.TrimSpace(string(raw))) == 0) != (v.Class == Empty) {
		t.Fatalf("class %s for %q: empty is taken over at once, and only empty is empty", v.Class, raw)
	}
	if (v.Grace > 0) != (v.Class == Binding) || v.Grace < 0 {
		t.Fatalf("grace %s for class %s", v.Grace, v.Class)
	}
}

func FuzzJudge(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), int64(0), uint8(0), uint8(0), int64(0))
		f.Add([]byte(s), int64(time.Hour), uint8(2), uint8(2), int64(time.Hour))
	}
	f.Fuzz(func(t *testing.T, raw []byte, age int64, owner, probe uint8, _ int64) { // the last was how long it was busy, which the judge no longer weighs
		in := Input{
			Found: Regular, Raw: raw, Now: started.Add(time.Duration(age)),
			Owner:      proc.Liveness(owner % 3),
			Probe:      ProbeResult{Status: ProbeStatus(probe % 3), Reason: "fuzz"},
			Executable: ourExe, Version: ourVersion,
		}
		checkVerdict(t, raw, Judge(in))
	})
}

func FuzzObserve(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		path := filepath.Join(testtemp.Dir(t), "server.json")
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		var calls atomic.Int32
		o := &Observer{
			Path: path, Executable: ourExe, Version: ourVersion,
			Probe: countingProbe(ProbeResult{Status: ProbeFailed, Reason: "fuzz"}, &calls),
			Env:   proc.Env{Signal0: func(int) error { return syscall.ESRCH }},
		}
		obs, err := o.Observe(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		checkVerdict(t, raw, obs.Verdict)
		if _, err := Decode(raw); err != nil && (calls.Load() != 0 || obs.Lease != nil) {
			t.Fatalf("probed or decoded the invalid document %q", raw)
		}
	})
}
