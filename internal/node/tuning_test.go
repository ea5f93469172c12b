package node

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/machine"
)

// A bridge sheds its pages before it collects, runs on one processor and
// collects sooner; a process that serves gets back the processors it
// started with; a bridge's tuning that comes after the process stopped
// bridging changes nothing.
func TestTheRuntimeIsTunedForWhatTheProcessIs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	var shedAt []uint64 // the collector's GOGC as the pages were shed
	tuning := runtimeTuning{procs: 3, shed: func() {
		gogc := []metrics.Sample{{Name: "/gc/gogc:percent"}}
		metrics.Read(gogc)
		shedAt = append(shedAt, gogc[0].Value.Uint64())
	}}
	procs := func() int { return runtime.GOMAXPROCS(0) }

	tuning.became(machine.Attached)
	tuning.bridging()
	if procs() != 1 || debug.SetGCPercent(bridgeGCPercent) != bridgeGCPercent {
		t.Fatalf("a bridge runs on %d processors", procs())
	}
	if !slices.Equal(shedAt, []uint64{100}) {
		t.Fatalf("a bridge shed its pages with the collector at GOGC %v, not once before it was tuned", shedAt)
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
	if procs() != 3 || len(shedAt) != 1 {
		t.Fatalf("a late bridge's tuning left a process served alone on %d processors (pages shed %d times)", procs(), len(shedAt))
	}
}

// A transition while a bridge sheds its pages does not wait for the shed,
// and the tuning that follows it heeds the new state.
func TestATransitionWhileABridgeShedsItsPagesWins(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	var tuning runtimeTuning
	tuning = runtimeTuning{procs: 3, shed: func() { tuning.became(machine.Alone) }}
	tuning.became(machine.Attached)
	tuning.bridging()
	if runtime.GOMAXPROCS(0) != 3 || debug.SetGCPercent(100) != 100 {
		t.Fatalf("a process served alone since was tuned as a bridge: %d processors", runtime.GOMAXPROCS(0))
	}
}
