package fleet

import (
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestTwoAnsweringNamespacesGiveTheSameVerdict(t *testing.T) {
	snap := snapshotOf(roster("author", "review"), newServer("author", 1), newServer("review", 2), newServer("review", 3)).
		withRow(newServer("merge", 4).row, PID{Known: true})
	controller, reconciler := snap, snap
	controller.AnsweringNamespace, reconciler.AnsweringNamespace = "controller", "reconciler"
	x, y := Classify(controller), Classify(reconciler)
	if x.AnsweringNamespace != "controller" || y.AnsweringNamespace != "reconciler" {
		t.Fatalf("answering namespaces %q %q", x.AnsweringNamespace, y.AnsweringNamespace)
	}
	x.AnsweringNamespace, y.AnsweringNamespace = "", ""
	if encode(t, x) != encode(t, y) {
		t.Fatalf("the verdict depends on who answers:\n%s\n%s", encode(t, x), encode(t, y))
	}
}

func TestTheVerdictDoesNotDependOnTheOrderOfTheEvidence(t *testing.T) {
	snap := snapshotOf(roster("author", "review", "merge"), newServer("author", 1), newServer("review", 2), newServer("review", 3),
		newServer("extra", 4), newServer("merge", 5).with(func(r *Row, _ *Process) { r.State = StateLeaseLost })).
		withRow(newServer("merge", 6).row, PID{Known: true}).
		withProcess(newServer("author", 7).proc)
	want := encode(t, Classify(snap))
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		shuffled := snap
		shuffled.Rows = slices.Clone(snap.Rows)
		shuffled.Processes = slices.Clone(snap.Processes)
		shuffled.Roster = slices.Clone(snap.Roster)
		rng.Shuffle(len(shuffled.Rows), func(i, j int) { shuffled.Rows[i], shuffled.Rows[j] = shuffled.Rows[j], shuffled.Rows[i] })
		rng.Shuffle(len(shuffled.Processes), func(i, j int) {
			shuffled.Processes[i], shuffled.Processes[j] = shuffled.Processes[j], shuffled.Processes[i]
		})
		rng.Shuffle(len(shuffled.Roster), func(i, j int) { shuffled.Roster[i], shuffled.Roster[j] = shuffled.Roster[j], shuffled.Roster[i] })
		if got := encode(t, Classify(shuffled)); got != want {
			t.Fatalf("another order of the same evidence gave another answer:\n%s\n%s", got, want)
		}
	}
}

func TestNoListIsNull(t *testing.T) {
	got := encode(t, Classify(Snapshot{}))
	for _, field := range []string{"incomplete_reasons", "configured_members", "running_members", "missing_members",
		"duplicate_members", "unexpected_members", "stale_members", "unregistered_processes", "repository_binding_mismatches",
		"role_mismatches", "draining_members", "startup_revisions", "blocked_reasons", "mutations_performed"} {
		if !strings.Contains(got, `"`+field+`":[`) {
			t.Errorf("%s is not a list in %s", field, got)
		}
	}
	for _, field := range []string{"single_cohort", "mixed_cohort", "mixed_revision"} {
		if !strings.Contains(got, `"`+field+`":null`) {
			t.Errorf("%s is not null without members in %s", field, got)
		}
	}
}

func TestStartDir(t *testing.T) {
	// r roots a slash-separated path as this system does.
	volume := ""
	if runtime.GOOS == "windows" {
		volume = "C:"
	}
	r := func(p string) string { return volume + filepath.FromSlash(p) }
	tests := []struct {
		args []string
		cwd  string
		want string
	}{
		{[]string{"majordomus-mcp"}, r("/w/c"), r("/w/c")},
		{[]string{"majordomus-mcp", "serve", "--repo", r("/r/x"), "--profile", "p"}, r("/w"), r("/r/x")},
		{[]string{"majordomus-mcp", "--repo=sub"}, r("/w"), r("/w/sub")},
		{[]string{"majordomus-mcp", "-repo", "../o"}, r("/w/c"), r("/w/o")},
		{[]string{"majordomus-mcp", "--repo", r("/a"), "--repo", r("/b")}, r("/w"), r("/b")},
		{[]string{"majordomus-mcp", "--", "--repo", r("/a")}, r("/w"), r("/w")},
		{[]string{"majordomus-mcp", "--repo"}, r("/w"), r("/w")},
		{[]string{"majordomus-mcp", "--repo", "rel"}, "", ""},
		{[]string{"majordomus-mcp"}, r("/w/c (deleted)"), r("/w/c")},
		{nil, "", ""},
	}
	for _, tt := range tests {
		if got := StartDir(tt.args, tt.cwd); got != tt.want {
			t.Errorf("StartDir(%q, %q) = %q, want %q", tt.args, tt.cwd, got, tt.want)
		}
	}
	if !within("/a/b", "/a") || !within("/a", "/a") || within("/ab", "/a") || !within("/x", "/") ||
		!within(filepath.Join("c", "checkout", "sub"), filepath.Join("c", "checkout")) {
		t.Error("within")
	}
}
