package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/internal/demo"
	"github.com/majordomus-mcp/majordomus-mcp/internal/logging"
	"github.com/majordomus-mcp/majordomus-mcp/internal/node"
	"github.com/majordomus-mcp/majordomus-mcp/internal/release"
	"github.com/majordomus-mcp/majordomus-mcp/machine"
)

// The commands that serve nothing: each asks internal/node (or machine,
// demo, release) and prints the answer.

// checkout is the checkout the flags name (node.Open).
func (env *environment) checkout() (*node.Checkout, error) {
	co, err := node.Open(env.opts.Flags, env.log, env.logs.Dropped)
	return co, nodeError(err)
}

// runStatus reports the checkout's shared server, read-only: it takes no
// lease, creates nothing and changes nothing (node.Status).
func runStatus(ctx context.Context, env *environment) error {
	co, err := env.checkout()
	if err != nil {
		return err
	}
	report, err := node.Status(ctx, co, env.opts.Times)
	if err != nil {
		return nodeError(err)
	}
	return printJSON(env, report)
}

// runBoard prints a one-time link to the checkout's board page and opens
// it where a desktop exists (internal/node does it all).
func runBoard(ctx context.Context, env *environment) error {
	co, err := env.checkout()
	if err != nil {
		return err
	}
	return nodeError(node.OpenBoard(ctx, co, node.BoardOptions{Times: env.opts.Times, Open: !env.opts.noOpen, Out: env.stdout}))
}

// runFleet prints the checkout's fleet inventory as JSON and exits 0 only
// when its mutation gate is satisfied, else 10, so that a script can gate
// a change on it. It writes nothing, restarts nothing, and sends no signal
// but signal 0 (node.Fleet).
func runFleet(ctx context.Context, env *environment) error {
	roster, err := node.ParseRoster(env.opts.roster)
	if err != nil {
		return usageError("--roster: %v", err)
	}
	inv, err := node.Fleet(ctx, env.opts.Flags, roster)
	if err != nil {
		return nodeError(err)
	}
	if err := printJSON(env, inv); err != nil {
		return err
	}
	if !inv.MutationGateSatisfied {
		// its detail may quote what clients set (a cohort id): escaped, as the JSON is
		why := make([]string, len(inv.BlockedReasons))
		for i, r := range inv.BlockedReasons {
			why[i] = fmt.Sprintf("%s (%s)", r.Code, logging.Printable(r.Detail))
		}
		return withCode(exitContract, fmt.Errorf("the fleet's mutation gate is closed: %s", strings.Join(why, "; ")))
	}
	return nil
}

// printJSON writes v on stdout, indented, for people as much as programs:
// a reason's "->" stays as written, and what is not printable is escaped.
func printJSON(env *environment, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	if err == nil {
		_, err = env.stdout.Write(logging.PrintableJSON(b.Bytes()))
	}
	if err != nil {
		return withCode(exitInternal, fmt.Errorf("writing the answer: %w", err))
	}
	return nil
}

// runGraph prints the process state machine's diagram, rendered from the
// very configuration every process runs.
func runGraph(_ context.Context, env *environment) error {
	out, err := machine.Graph(env.opts.format)
	if err != nil || env.opts.format == "" { // the flag's default is dot: "" was given
		return usageError("--format %q: want dot, mermaid or json", env.opts.format)
	}
	_, err = fmt.Fprint(env.stdout, out)
	return err
}

// runDemo runs the scripted session of internal/demo with this binary.
func runDemo(ctx context.Context, env *environment) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this executable: %w", err)
	}
	// A signal ends the demo as it ends a server: what it started is
	// stopped and its directory removed, then the process dies of it.
	// Nothing is made before the signals are handled: until then one kills
	// the process where it stands. A second signal ends it at once, of the
	// first: it may be stuck writing what nobody reads.
	env.signals = registerSignals()
	<-env.signals.ready
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	relaying, stopRelaying := context.WithCancel(context.Background())
	defer stopRelaying()
	var first os.Signal
	env.signals.relay(relaying, func(sig os.Signal) {
		if first != nil {
			dieOf(first)
		}
		first = sig
		cancel()
	})
	err = demo.Run(ctx, env.stdout, self)
	if readerLeft(err) { // its reader had enough: not a failure
		return nil
	}
	if env.died = env.signals.first(); env.died != nil {
		if err != nil { // what it was doing, or had failed at: said, not as the failure it ends of
			env.log.Info("demo stopped by "+signalName(env.died), zap.Error(err))
		}
		return nil
	}
	return err
}

// runVersion prints the version and the startup revision, the code this
// binary was built from, as a server of it records it in the fleet
// registry and `fleet` reports it (startup_revisions): an operator matches
// one to the other.
func runVersion(_ context.Context, env *environment) error {
	_, err := fmt.Fprintln(env.stdout, versionLine(release.Version(), release.StartupRevision().Startup))
	return err
}

// versionLine is what `version` prints.
func versionLine(version, startup string) string {
	return fmt.Sprintf("majordomus-mcp %s (startup revision %s)", version, cmp.Or(startup, "unknown"))
}
