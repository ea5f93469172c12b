package machine

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"strings"

	"github.com/qmuntal/stateless"
)

// The builder configures stateless and, through the very same calls, records
// the configuration as data (a model), from which the graph is rendered and
// the rule point of each transition is looked up. There is no second,
// hand-kept copy of the machine.

// Edge kinds.
const (
	kindTransition = "transition" // changes state: exit, then entry actions
	kindInternal   = "internal"   // stays: runs its action, no exit or entry
)

// edge is one configured way to handle a trigger in a state.
type edge struct {
	From    State   `json:"from"`
	To      State   `json:"to"`
	Trigger Trigger `json:"trigger"`
	Kind    string  `json:"kind"`
	Guard   string  `json:"guard,omitempty"`
	Action  string  `json:"action,omitempty"`
	Rule    Rule    `json:"rule,omitempty"`
}

// ignored is a trigger a state explicitly ignores, perhaps under a guard.
type ignored struct {
	Trigger Trigger `json:"trigger"`
	Guard   string  `json:"guard,omitempty"`
}

// stateModel is one configured state.
type stateModel struct {
	Name      State     `json:"name"`
	Parent    State     `json:"parent,omitempty"`
	Activated []string  `json:"activated,omitempty"`
	Entry     []string  `json:"entry,omitempty"`
	Exit      []string  `json:"exit,omitempty"`
	Ignores   []ignored `json:"ignores,omitempty"`
}

// model is the whole configuration as data, in configuration order.
type model struct {
	Initial State        `json:"initial"`
	States  []stateModel `json:"states"`
	Edges   []edge       `json:"edges"`
}

// parent returns s's superstate, or "".
func (md *model) parent(s State) State {
	for _, st := range md.States {
		if st.Name == s {
			return st.Parent
		}
	}
	return ""
}

// within reports whether s is inner or one of its substates.
func (md *model) within(s, inner State) bool {
	for ; s != ""; s = md.parent(s) {
		if s == inner {
			return true
		}
	}
	return false
}

// ruleFor returns the rule point of the transition from from to to on t,
// looking in from's superstates too, since a substate inherits their edges.
func (md *model) ruleFor(from State, t Trigger, to State) Rule {
	for s := from; s != ""; s = md.parent(s) {
		for _, e := range md.Edges {
			if e.From == s && e.Trigger == t && e.To == to {
				return e.Rule
			}
		}
	}
	return NoRule
}

// builder configures a stateless machine and records what it configures.
type builder struct {
	sm    *stateless.StateMachine
	model model
}

func newBuilder(initial State) *builder {
	return &builder{
		sm:    stateless.NewStateMachineWithMode(initial, stateless.FiringQueued),
		model: model{Initial: initial},
	}
}

// state begins the configuration of s.
func (b *builder) state(s State) *stateBlock {
	b.model.States = append(b.model.States, stateModel{Name: s})
	return &stateBlock{b: b, sc: b.sm.Configure(s), i: len(b.model.States) - 1}
}

// stateBlock configures one state.
type stateBlock struct {
	b  *builder
	sc *stateless.StateConfiguration
	i  int // index in b.model.States
}

func (c *stateBlock) rec() *stateModel { return &c.b.model.States[c.i] }

func (c *stateBlock) substateOf(parent State) *stateBlock {
	c.sc.SubstateOf(parent)
	c.rec().Parent = parent
	return c
}

// onActivate runs a when the machine starts in this state.
func (c *stateBlock) onActivate(a func(context.Context) error) *stateBlock {
	c.sc.OnActive(a)
	c.rec().Activated = append(c.rec().Activated, funcName(a))
	return c
}

func (c *stateBlock) onEntry(a stateless.ActionFunc) *stateBlock {
	c.sc.OnEntry(a)
	c.rec().Entry = append(c.rec().Entry, funcName(a))
	return c
}

func (c *stateBlock) onExit(a stateless.ActionFunc) *stateBlock {
	c.sc.OnExit(a)
	c.rec().Exit = append(c.rec().Exit, funcName(a))
	return c
}

// edgeOpt adds a guard or an action to an edge: see when and doing.
type edgeOpt struct {
	guard  stateless.GuardFunc
	action stateless.ActionFunc
}

// when makes an edge apply only while g holds.
func when(g stateless.GuardFunc) edgeOpt { return edgeOpt{guard: g} }

// doing gives an edge its action: for a transition, run on leaving the state
// by that trigger, before the destination's entry actions; for an internal
// transition, the whole of what it does.
func doing(a stateless.ActionFunc) edgeOpt { return edgeOpt{action: a} }

func collect(opts []edgeOpt) (g stateless.GuardFunc, a stateless.ActionFunc) {
	for _, o := range opts {
		if o.guard != nil {
			g = o.guard
		}
		if o.action != nil {
			a = o.action
		}
	}
	return g, a
}

func guards(g stateless.GuardFunc) []stateless.GuardFunc {
	if g == nil {
		return nil
	}
	return []stateless.GuardFunc{g}
}

// permit moves to to on t.
func (c *stateBlock) permit(t Trigger, to State, r Rule, opts ...edgeOpt) *stateBlock {
	g, a := collect(opts)
	c.sc.Permit(t, to, guards(g)...)
	if a != nil && !c.leavesDoing(t, funcName(a)) {
		c.sc.OnExitWith(t, a)
	}
	c.add(edge{From: c.rec().Name, To: to, Trigger: t, Kind: kindTransition, Guard: funcName(g), Action: funcName(a), Rule: r})
	return c
}

// leavesDoing reports whether an edge already configured here leaves by t
// doing action, which then runs for this edge too.
func (c *stateBlock) leavesDoing(t Trigger, action string) bool {
	for _, o := range c.b.model.Edges {
		if o.From == c.rec().Name && o.Trigger == t && o.Kind == kindTransition && o.Action == action {
			return true
		}
	}
	return false
}

// internal handles t without leaving the state; it needs doing(action).
func (c *stateBlock) internal(t Trigger, r Rule, opts ...edgeOpt) *stateBlock {
	g, a := collect(opts)
	if a == nil {
		panic(fmt.Sprintf("machine: internal transition on %s in %s has no action", t, c.rec().Name))
	}
	c.sc.InternalTransition(t, a, guards(g)...)
	s := c.rec().Name
	c.add(edge{From: s, To: s, Trigger: t, Kind: kindInternal, Guard: funcName(g), Action: funcName(a), Rule: r})
	return c
}

// ignore makes t an expected no-op here.
func (c *stateBlock) ignore(t Trigger, opts ...edgeOpt) *stateBlock {
	g, _ := collect(opts)
	c.sc.Ignore(t, guards(g)...)
	c.rec().Ignores = append(c.rec().Ignores, ignored{Trigger: t, Guard: funcName(g)})
	return c
}

// add records e after checking it against the edges already recorded. The
// checks catch configurations that stateless accepts but that would make the
// model lie; they run whenever a machine or graph is built, so every test
// exercises them.
func (c *stateBlock) add(e edge) {
	md := &c.b.model
	// An edge action runs as its state's exit action for the trigger, so it
	// would also run on any other edge that leaves that state by the same
	// trigger, whether configured on it, on a superstate or on a substate:
	// edges that leave by one trigger have no action, or (from one state)
	// the same one.
	leaves := func(x edge) bool { return x.Kind == kindTransition && !md.within(x.To, x.From) }
	for _, o := range md.Edges {
		if o.Trigger != e.Trigger {
			continue
		}
		if o.From == e.From && o.To == e.To && o.Rule != e.Rule {
			panic(fmt.Sprintf("machine: %s --%s--> %s has two rule points (%q, %q)", e.From, e.Trigger, e.To, o.Rule, e.Rule))
		}
		related := md.within(o.From, e.From) || md.within(e.From, o.From)
		shared := o.From == e.From && e.Action == o.Action // registered once: see permit
		if related && leaves(e) && leaves(o) && (e.Action != "" || o.Action != "") && !shared {
			panic(fmt.Sprintf("machine: %s leaves %s by two edges with different actions", e.Trigger, e.From))
		}
	}
	md.Edges = append(md.Edges, e)
}

// funcName returns the name stateless shows for f: its last dotted part,
// without the "-fm" of a method value; "" for nil.
func funcName(f any) string {
	v := reflect.ValueOf(f)
	if !v.IsValid() || v.IsNil() {
		return ""
	}
	name := runtime.FuncForPC(v.Pointer()).Name()
	name = name[strings.LastIndex(name, ".")+1:]
	return strings.TrimSuffix(name, "-fm")
}
