package node

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/machine"
)

// A bridge runs on one processor and collects sooner; a process that
// serves gets back the processors it started with; a bridge's tuning that
// comes after the process stopped bridging changes nothing.
func TestTheRuntimeIsTunedForWhatTheProcessIs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	tuning := runtimeTuning{procs: 3}
	procs := func() int { return runtime.GOMAXPROCS(0) }

	tuning.became(machine.Attached)
	tuning.bridging()
	if procs() != 1 || debug.SetGCPercent(bridgeGCPercent) != bridgeGCPercent {
		t.Fatalf("a bridge runs on %d processors", procs())
	}
	tuning.became(machine.Electing)
	tuning.became(machine.Leaseholder)
	if procs() != 3 || debug.SetGCPercent(100) != 100 {
		t.Fatalf("a leaseholder runs on %d processors, not the 3 it started with", procs())
	}
	tuning.became(machine.Attached)
	tuning.became(machine.Electing)
	tuning.became(machine.Alone)
	tuning.bridging() // the first answer of the attached moment came late
	if procs() != 3 {
		t.Fatalf("a late bridge's tuning left a process served alone on %d processors", procs())
	}
}
