package machine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrFormat is returned by [Graph] for a format it does not know.
var ErrFormat = errors.New("machine: unknown graph format")

// Graph renders the machine's diagram in format: "dot" (also ""), "mermaid"
// or "json". It is rendered from the configuration every process runs,
// recorded as it configures stateless; nothing is fired, nothing touches the
// world. Every rule point (R1–R8) labels at least one edge, and the output is
// deterministic: it follows the order of the configuration.
func Graph(format string) (string, error) {
	b := newBuilder(Electing)
	configure(b)
	switch format {
	case "", "dot":
		return renderDOT(&b.model), nil
	case "mermaid":
		return renderMermaid(&b.model), nil
	case "json":
		return renderJSON(&b.model)
	}
	return "", fmt.Errorf("%w: %q (want dot, mermaid or json)", ErrFormat, format)
}

// guarded writes a trigger as UML does, "trigger [guard]".
func guarded(t Trigger, guard string) string {
	if guard == "" {
		return string(t)
	}
	return string(t) + " [" + guard + "]"
}

// edgeText is an edge as UML writes it, "trigger [guard] / action", and
// its rule point.
func edgeText(e edge) string {
	s := guarded(e.Trigger, e.Guard)
	if e.Action != "" {
		s += " / " + e.Action
	}
	if e.Rule != NoRule {
		s += " (" + string(e.Rule) + ")"
	}
	return s
}

// edgeName identifies an edge in the JSON rule list.
func edgeName(e edge) string {
	return fmt.Sprintf("%s --%s--> %s", e.From, guarded(e.Trigger, e.Guard), e.To)
}

// actionLines lists a state's actions and ignored triggers, one per line.
func actionLines(st stateModel) (actions []string, ignores string) {
	for _, a := range st.Activated {
		actions = append(actions, "activated / "+a)
	}
	for _, a := range st.Entry {
		actions = append(actions, "entry / "+a)
	}
	for _, a := range st.Exit {
		actions = append(actions, "exit / "+a)
	}
	var ig []string
	for _, i := range st.Ignores {
		ig = append(ig, guarded(i.Trigger, i.Guard))
	}
	if len(ig) > 0 {
		ignores = "ignores " + strings.Join(ig, ", ")
	}
	return actions, ignores
}

// renderDOT writes Graphviz DOT: record nodes listing actions and ignored
// triggers, a dashed cluster around a state and its substates, dashed
// arrows for internal transitions, and each edge's rule point.
func renderDOT(md *model) string {
	var sb strings.Builder
	sb.WriteString("digraph machine {\n\tcompound=true;\n\trankdir=LR;\n\tnode [shape=Mrecord];\n\n")
	sb.WriteString("\tstart [label=\"\", shape=point];\n")
	fmt.Fprintf(&sb, "\tstart -> %q;\n", md.Initial)
	node := func(st stateModel, indent string) {
		fields := []string{recordEsc(string(st.Name))}
		actions, ignores := actionLines(st)
		if len(actions) > 0 {
			fields = append(fields, recordEsc(strings.Join(actions, "\n"))+`\l`)
		}
		if ignores != "" {
			fields = append(fields, recordEsc(ignores)+`\l`)
		}
		extra := ""
		if len(edgesFrom(md, st.Name)) == 0 {
			extra = ", peripheries=2"
		}
		fmt.Fprintf(&sb, "%s%q [label=\"%s\"%s];\n", indent, st.Name, strings.Join(fields, "|"), extra)
	}
	for _, st := range md.States {
		if st.Parent != "" {
			continue
		}
		subs := substates(md, st.Name)
		if len(subs) == 0 {
			node(st, "\t")
			continue
		}
		fmt.Fprintf(&sb, "\tsubgraph %q {\n\t\tlabel=%q;\n\t\tstyle=dashed;\n", "cluster_"+st.Name, st.Name)
		node(st, "\t\t")
		for _, sub := range subs {
			node(sub, "\t\t")
		}
		sb.WriteString("\t}\n")
	}
	sb.WriteString("\n")
	// One arrow per pair of states and kind, one line per edge, as stateless
	// draws them.
	type arrow struct {
		from, to State
		kind     string
	}
	var order []arrow
	lines := map[arrow][]string{}
	for _, e := range md.Edges {
		a := arrow{e.From, e.To, e.Kind}
		if _, ok := lines[a]; !ok {
			order = append(order, a)
		}
		lines[a] = append(lines[a], edgeText(e))
	}
	for _, a := range order {
		attrs := fmt.Sprintf("label=\"%s\\l\"", strings.Join(lines[a], `\l`))
		if a.kind == kindInternal {
			attrs += ", style=dashed"
		}
		if len(substates(md, a.from)) > 0 && !md.within(a.to, a.from) {
			attrs += fmt.Sprintf(", ltail=%q", "cluster_"+a.from)
		}
		fmt.Fprintf(&sb, "\t%q -> %q [%s];\n", a.from, a.to, attrs)
	}
	sb.WriteString("}\n")
	return sb.String()
}

// recordEsc escapes the characters a record label gives a meaning to, and
// turns newlines into left-justified line breaks.
func recordEsc(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "{", `\{`, "}", `\}`, "|", `\|`, "<", `\<`, ">", `\>`, "\n", `\l`)
	return r.Replace(s)
}

// renderMermaid writes a Mermaid stateDiagram-v2, substates nested in their
// superstate; internal transitions are self-loops.
func renderMermaid(md *model) string {
	var sb strings.Builder
	sb.WriteString("stateDiagram-v2\n")
	var declare func(st stateModel, indent string)
	declare = func(st stateModel, indent string) {
		subs := substates(md, st.Name)
		if len(subs) == 0 {
			fmt.Fprintf(&sb, "%sstate \"%s\" as %s\n", indent, st.Name, mermaidID(st.Name))
			return
		}
		fmt.Fprintf(&sb, "%sstate %s {\n", indent, mermaidID(st.Name))
		for _, sub := range subs {
			declare(sub, indent+"    ")
		}
		fmt.Fprintf(&sb, "%s}\n", indent)
	}
	for _, st := range md.States {
		if st.Parent == "" {
			declare(st, "    ")
		}
	}
	fmt.Fprintf(&sb, "    [*] --> %s\n", mermaidID(md.Initial))
	for _, e := range md.Edges {
		fmt.Fprintf(&sb, "    %s --> %s : %s\n", mermaidID(e.From), mermaidID(e.To), edgeText(e))
	}
	for _, st := range md.States {
		if len(edgesFrom(md, st.Name)) == 0 {
			fmt.Fprintf(&sb, "    %s --> [*]\n", mermaidID(st.Name))
		}
	}
	return sb.String()
}

// mermaidID makes a state name a Mermaid identifier.
func mermaidID(s State) string { return strings.ReplaceAll(string(s), "-", "_") }

// renderJSON writes the model with, for each rule point, the edges that
// carry it.
func renderJSON(md *model) (string, error) {
	type rulePoint struct {
		ID    Rule     `json:"id"`
		Point string   `json:"point"`
		Edges []string `json:"edges"`
	}
	doc := struct {
		*model
		Rules []rulePoint `json:"rules"`
	}{model: md}
	for _, rp := range rulePoints {
		p := rulePoint{ID: rp.ID, Point: rp.Point, Edges: []string{}}
		for _, e := range md.Edges {
			if e.Rule == rp.ID {
				p.Edges = append(p.Edges, edgeName(e))
			}
		}
		doc.Rules = append(doc.Rules, p)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return "", fmt.Errorf("encoding the graph: %w", err)
	}
	return buf.String(), nil
}

// substates returns the states whose parent is s, in configuration order.
func substates(md *model, s State) []stateModel {
	return slices.DeleteFunc(slices.Clone(md.States), func(st stateModel) bool { return st.Parent != s })
}

// edgesFrom returns the edges configured on s itself.
func edgesFrom(md *model, s State) []edge {
	return slices.DeleteFunc(slices.Clone(md.Edges), func(e edge) bool { return e.From != s })
}
