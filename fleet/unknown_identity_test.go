package fleet

import "testing"

// A row that records no boot id, or no process start (a row changed by
// other hands, or written where they could not be read), says nothing of
// which boot or which process it is about: its process is not provably
// gone while a process runs at its pid. Likewise when the answering
// process cannot read its own boot id. "Anything unknown makes the
// inventory incomplete and closes the gate" (docs/fleet.md); another_boot and
// recycled are for processes provably gone, which do not close it
// (docs/fleet.md). The registry agrees: proc.Env.OfAnotherBoot("") is
// false, Alive with a zero start makes no claim, and Register never
// prunes such a row while its pid runs.
func TestARowOfUnknownBootOrStartIsNeverProvablyGone(t *testing.T) {
	a, b := newServer("author", 101), newServer("review", 102)
	two := roster("author", "review")
	// a second server of review: its row lacks a field, its process runs
	// as the row says but is not seen serving (another network namespace)
	second := newServer("review", 150)
	runs := PID{Known: true, Exists: true, Start: second.row.ProcessStart}
	tests := []struct {
		name string
		snap Snapshot
	}{
		{"the row records no boot id", snapshotOf(two, a, b).withRow(second.with(func(r *Row, _ *Process) { r.BootID = "" }).row, runs)},
		{"the row records no process start", snapshotOf(two, a, b).withRow(second.with(func(r *Row, _ *Process) { r.ProcessStart = 0 }).row, runs)},
		{"the answering process cannot read its boot id", func() Snapshot {
			s := snapshotOf(two, a, b).withRow(second.row, runs)
			s.BootID = ""
			s.Processes = nil // none seen: they all run elsewhere
			return s
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv := Classify(tt.snap)
			if inv.MutationGateSatisfied || inv.InventoryComplete {
				t.Errorf("gate %v complete %v with a row whose process runs and cannot be judged; blocked %v",
					inv.MutationGateSatisfied, inv.InventoryComplete, codes(inv.BlockedReasons))
			}
			for _, s := range inv.StaleMembers {
				if s.PID == 150 && s.Reason != StaleUnverifiable {
					t.Errorf("stale pid 150: %s (%s), want %s", s.Reason, s.Detail, StaleUnverifiable)
				}
			}
		})
	}
	// A row of unknown boot whose pid no process has is gone all the same.
	inv := Classify(snapshotOf(two, a, b).withRow(second.with(func(r *Row, _ *Process) { r.BootID = "" }).row, PID{Known: true}))
	if !inv.MutationGateSatisfied {
		t.Errorf("a row of unknown boot whose pid is dead closes the gate: %v", codes(inv.BlockedReasons))
	}
	wantStale(t, inv, 150, StaleDead)
}
