package machine

import (
	"encoding/json"
	"errors"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestGraph_Golden(t *testing.T) {
	for format, file := range map[string]string{"dot": "machine.dot", "mermaid": "machine.mmd", "json": "machine.json"} {
		t.Run(format, func(t *testing.T) {
			got, err := Graph(format)
			if err != nil {
				t.Fatal(err)
			}
			if again, _ := Graph(format); again != got {
				t.Fatal("two renderings differ")
			}
			path := filepath.Join("testdata", file)
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./machine -run TestGraph_Golden -update)", err)
			}
			if got != string(want) {
				t.Errorf("%s drifted from the configuration; rerun with -update and review the diff:\n%s", path, got)
			}
		})
	}
	dflt, _ := Graph("")
	if dot, _ := Graph("dot"); dflt != dot {
		t.Error(`Graph("") is not the DOT graph`)
	}
	if _, err := Graph("svg"); !errors.Is(err, ErrFormat) {
		t.Errorf(`Graph("svg") error = %v, want ErrFormat`, err)
	}
}

// TestGraph_EveryRulePointLabelsAPath fails when a rule point of
// docs/design.md#the-rule that the machine implements has no edge in the
// graph.
func TestGraph_EveryRulePointLabelsAPath(t *testing.T) {
	b := newBuilder(Electing)
	configure(b)
	known := map[Rule]bool{NoRule: true}
	for _, rp := range rulePoints {
		known[rp.ID] = true
	}
	carried := map[Rule]int{}
	for _, e := range b.model.Edges {
		if !known[e.Rule] {
			t.Errorf("%s carries unknown rule point %q", edgeName(e), e.Rule)
		}
		carried[e.Rule]++
	}
	for _, r := range []Rule{R1, R2, R3, R4, R5, R6, R7, R8} {
		if carried[r] == 0 {
			t.Errorf("rule point %s labels no path", r)
		}
	}

	out, err := Graph("json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Rules []struct {
			ID    Rule
			Edges []string
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	for _, rp := range doc.Rules {
		if len(rp.Edges) != carried[rp.ID] {
			t.Errorf("JSON lists %d edges for %s, the model %d", len(rp.Edges), rp.ID, carried[rp.ID])
		}
	}
}

// TestGraph_MatchesStatelessToGraph proves the recorded model is what
// stateless was configured with: the same transitions, internal
// transitions, ignored triggers and guards, and the same actions per state.
func TestGraph_MatchesStatelessToGraph(t *testing.T) {
	b := newBuilder(Electing)
	configure(b)
	gotEdges, gotActions := parseToGraph(t, b.sm.ToGraph())

	var wantEdges []string
	wantActions := map[string][]string{}
	for _, st := range b.model.States {
		for _, i := range st.Ignores {
			wantEdges = append(wantEdges, row(st.Name, st.Name, "ignore", i.Trigger, i.Guard))
		}
		var acts []string
		for _, a := range st.Activated {
			acts = append(acts, "activated / "+a)
		}
		for _, a := range st.Entry {
			acts = append(acts, "entry / "+a)
		}
		for _, a := range st.Exit {
			acts = append(acts, "exit / "+a)
		}
		registered := map[string]bool{} // edges leaving by one trigger share one OnExitWith
		for _, e := range edgesFrom(&b.model, st.Name) {
			if key := string(e.Trigger) + e.Action; e.Kind == kindTransition && e.Action != "" && !registered[key] {
				registered[key] = true
				acts = append(acts, "exit / "+e.Action) // stateless' OnExitWith
			}
		}
		slices.Sort(acts)
		wantActions[string(st.Name)] = acts
	}
	for _, e := range b.model.Edges {
		wantEdges = append(wantEdges, row(e.From, e.To, e.Kind, e.Trigger, e.Guard))
	}
	slices.Sort(wantEdges)
	if !slices.Equal(gotEdges, wantEdges) {
		t.Errorf("edges differ from ToGraph:\n only in ToGraph %q\n only in the model %q",
			without(gotEdges, wantEdges), without(wantEdges, gotEdges))
	}
	for s, want := range wantActions {
		if got := gotActions[s]; !slices.Equal(got, want) {
			t.Errorf("%s: ToGraph actions %q, model %q", s, got, want)
		}
	}
}

// without returns the elements of a that b lacks.
func without(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func row(from, to State, kind string, t Trigger, guard string) string {
	return string(from) + " -> " + string(to) + " " + kind + " " + string(t) + " [" + guard + "]"
}

var (
	dotNode = regexp.MustCompile(`^\t+("?[^"\s]+"?) \[label="(.*)"\];$`)
	dotEdge = regexp.MustCompile(`^\t(\S+) -> (\S+) \[label=<<TABLE BORDER="0">(.*)</TABLE>>\];$`)
	dotRow  = regexp.MustCompile(`<TR><TD(?: ALIGN="LEFT")?>(.*?)</TD></TR>`)
	rowText = regexp.MustCompile(`^(\S+)(?: / \S+)?(?: \[(.*)\])?$`)
)

// parseToGraph reads the edges (sorted rows) and the actions of each state
// (sorted) from stateless' DOT.
func parseToGraph(t *testing.T, dot string) ([]string, map[string][]string) {
	t.Helper()
	var edges []string
	actions := map[string][]string{}
	for _, line := range strings.Split(dot, "\n") {
		if m := dotEdge.FindStringSubmatch(line); m != nil {
			from, to, kind := State(strings.Trim(m[1], `"`)), State(strings.Trim(m[2], `"`)), kindTransition
			for _, r := range dotRow.FindAllStringSubmatch(m[3], -1) {
				switch r[1] {
				case "<B>Internal</B>":
					kind = kindInternal
					continue
				case "<B>Ignored</B>":
					kind = "ignore"
					continue
				case "<B>Reentry</B>":
					t.Fatalf("unexpected reentry in %s", line)
				}
				p := rowText.FindStringSubmatch(html.UnescapeString(r[1]))
				if p == nil {
					t.Fatalf("cannot read row %q", r[1])
				}
				edges = append(edges, row(from, to, kind, Trigger(p[1]), p[2]))
			}
			continue
		}
		if m := dotNode.FindStringSubmatch(line); m != nil && !strings.HasPrefix(m[1], "init") {
			parts := strings.Split(strings.NewReplacer(`\n----------\n`, "|", `\n`, "|").Replace(m[2]), "|")
			acts := parts[1:]
			slices.Sort(acts)
			actions[strings.Trim(m[1], `"`)] = acts
		}
	}
	slices.Sort(edges)
	return edges, actions
}

type named struct{}

func (named) guard() bool { return true }

func TestFuncName(t *testing.T) {
	for _, tc := range []struct {
		f    any
		want string
	}{
		{takeOver, "takeOver"},
		{drained, "drained"},
		{named{}.guard, "guard"}, // a method value: "guard-fm" to runtime
		{(func())(nil), ""},
		{nil, ""},
	} {
		if got := funcName(tc.f); got != tc.want {
			t.Errorf("funcName = %q, want %q", got, tc.want)
		}
	}
}

// TestBuilder_RejectsEdgesTheModelCouldNotDescribe: two rule points on one
// edge, or an edge action that stateless would also run on another edge.
func TestBuilder_RejectsEdgesTheModelCouldNotDescribe(t *testing.T) {
	for name, configure := range map[string]func(b *builder){
		"two rules": func(b *builder) {
			b.state(Alone).
				permit(Signal, Exited, R2, when(drained)).
				permit(Signal, Exited, R4, when(stillServing))
		},
		"shared exit action": func(b *builder) {
			b.state(Alone).
				permit(Signal, Exited, NoRule, when(drained), doing(releaseLease)).
				permit(Signal, Electing, NoRule, when(stillServing))
		},
		"inherited exit action": func(b *builder) {
			b.state(Leaseholder).permit(Signal, Exited, R4, doing(releaseLease))
			b.state(OwnerLeft).substateOf(Leaseholder).permit(Signal, Alone, NoRule)
		},
		"internal without action": func(b *builder) {
			b.state(Alone).internal(Signal, NoRule)
		},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if msg, _ := recover().(string); !strings.HasPrefix(msg, "machine: ") {
					t.Errorf("recovered %q, want the builder's panic", msg)
				}
			}()
			configure(newBuilder(Electing))
		})
	}
}
