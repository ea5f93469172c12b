// Package demo is the scripted session of `majordomus-mcp demo`: real
// client processes of this binary on the embedded example checkout, each
// exchange printed with what the process logged about it. It writes only
// in a temporary directory of its own (its servers register in a registry
// there too) and stops every process it started.
package demo

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/example"
	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
	"github.com/majordomus-mcp/majordomus-mcp/registry/runtimes"
)

// timeout bounds the whole demo.
const timeout = 60 * time.Second

// Run writes the embedded example checkout to a temporary directory and
// shows on out, with real child processes of the executable self (this
// binary), what the server does: a session, three clients sharing one
// server, a take-over after the leaseholder is killed outright, a corrupt lease taken over, and an
// unwritable directory served alone.
func Run(ctx context.Context, out io.Writer, self string) error {
	tmp, err := os.MkdirTemp("", "majordomus-demo-")
	if err != nil {
		return fmt.Errorf("making the demo directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	d := &demo{ctx: ctx, out: out, self: self, tmp: tmp}
	defer d.stopAll()

	repo := d.checkout("example")
	d.say("The example checkout is in %s: a few rules, an ADR, a prompt and a glossary under .ai/repo/.", repo)
	d.session(repo)
	d.sharing(repo)
	d.corruptLease()
	d.unwritable()
	if d.err == nil {
		d.say("\nEvery process wrote nothing but protocol frames on stdout; their logs went to stderr.")
	}
	return d.err
}

// demo runs the scripted steps, stopping at the first error.
type demo struct {
	ctx   context.Context
	out   io.Writer
	self  string
	tmp   string
	err   error
	procs []*demoProcess
}

// demoProcess is one client process of the demo and the log lines already shown.
type demoProcess struct {
	*mcpclient.Process
	name  string
	shown int
}

// say writes a line of the demo, until a step failed: the demo stops there,
// and at a line it cannot write (a full disk, a closed pipe).
func (d *demo) say(format string, v ...any) {
	if d.err == nil {
		if _, err := fmt.Fprintf(d.out, format+"\n", v...); err != nil {
			d.err = fmt.Errorf("writing the demo: %w", err)
		}
	}
}

func (d *demo) checkout(name string) string {
	dir := filepath.Join(d.tmp, name)
	if d.err == nil {
		d.err = example.WriteCheckout(dir)
	}
	return dir
}

// start spawns a client of the shared server in repo, as a host would.
func (d *demo) start(name, repo string) *demoProcess {
	if d.err != nil {
		return nil
	}
	// The demo's servers register in a registry of their own, never in the user's.
	env := append(os.Environ(), runtimes.RegistryEnv+"="+filepath.Join(d.tmp, "registry.db"))
	p, err := mcpclient.Start(d.self, []string{"--repo", repo, "--http-port", "0"}, repo, env)
	if err != nil {
		d.err = err
		return nil
	}
	dp := &demoProcess{Process: p, name: name}
	d.procs = append(d.procs, dp)
	return dp
}

func (d *demo) stopAll() {
	for _, p := range d.procs {
		p.Kill(context.Background())
	}
}

// session walks through one client's session, printing each exchange.
func (d *demo) session(repo string) {
	d.say("\n## 1. An agent's session\n")
	a := d.start("claude-code", repo)
	d.initialize(a)
	d.call(a, "tools/list", nil, showTools)
	d.tool(a, "majordomus_repository", nil)
	d.tool(a, "majordomus_search", map[string]any{"query": "announce", "limit": 3})
	d.tool(a, "majordomus_announce", map[string]any{"intent": "tighten the review prompt", "scope": []string{".ai/repo/prompts"}})
}

// sharing shows three clients on one server, then a take-over after the
// leaseholder is killed -9.
func (d *demo) sharing(repo string) {
	if d.err != nil {
		return // the first client may not have started
	}
	d.say("\n## 2. Three agents, one shared server\n")
	a := d.procs[0]
	b := d.start("codex", repo)
	c := d.start("gemini-cli", repo)
	d.initialize(b)
	d.initialize(c)
	d.tool(c, "majordomus_announce", map[string]any{"intent": "rewrite the review prompt", "scope": []string{".ai/repo/prompts/review.md"}})
	d.peers(b)
	if d.err != nil {
		return // b and c may be nil
	}

	d.say("\n## 3. The leaseholder is killed outright (%s)\n", killedOutright)
	d.say("%s %d (%s, the leaseholder)", killedOutright, a.Cmd.Process.Pid, a.name)
	d.err = a.Signal(syscall.SIGKILL)
	a.Wait(d.ctx)
	d.say("Both bridges learn at once that it is gone, idle or not: one takes over, the other re-attaches to it.")
	d.say("%s's next message is answered by whichever serves now:", b.name)
	d.tool(b, "majordomus_repository", nil, failedOver...)
	d.say("and %s is on the same board:", c.name)
	d.peers(c, failedOver...)
	d.leave(b, c)
}

// failedOver are what a process whose bridge failed logs once it knows
// where its client went, before it answers the message that found out.
var failedOver = []string{"took over as the shared server", "re-attached to the shared server", "cannot use the shared server"}

// plant writes text at path, its directory made with dirMode if need be.
func (d *demo) plant(path, text string, dirMode os.FileMode) {
	if d.err == nil {
		d.err = os.MkdirAll(filepath.Dir(path), dirMode)
	}
	if d.err == nil {
		d.err = os.WriteFile(path, []byte(text), 0o600)
	}
}

// corruptLease shows a lease that is not a lease being taken over.
func (d *demo) corruptLease() {
	d.say("\n## 4. A corrupt lease is taken over\n")
	repo := d.checkout("corrupt")
	lease := filepath.Join(repo, ".ai/local/state/mcp/server.json")
	d.plant(lease, "{not a lease", 0o700)
	d.say("printf '{not a lease' > %s", lease)
	p := d.start("cursor", repo)
	d.initialize(p)
	d.leave(p)
}

// unwritable shows a client served alone when the lease cannot be created.
func (d *demo) unwritable() {
	d.say("\n## 5. An unwritable lease directory: served alone\n")
	repo := d.checkout("unwritable")
	state := filepath.Join(repo, ".ai/local/state")
	d.plant(state, "a file where the lease directory should be", 0o755)
	d.say("%s is a file, so no lease can be created under it.", state)
	p := d.start("claude-code", repo)
	d.initialize(p)
	d.peers(p)
	if d.err == nil && strings.Contains(strings.Join(p.Logs(), "\n"), "listening on") {
		d.err = fmt.Errorf("a client served alone bound a port")
	}
	d.leave(p)
}

// leave closes the clients' stdin, as hosts do when agents leave, and waits
// for their processes: a leaseholder ends once the last of them has gone.
func (d *demo) leave(procs ...*demoProcess) {
	if d.err != nil {
		return
	}
	for _, p := range procs {
		p.CloseStdin()
	}
	for _, p := range procs {
		exit, err := p.Wait(d.ctx)
		if err == nil && exit.Code != 0 {
			err = fmt.Errorf("%s exited with %+v", p.name, exit)
		}
		if err != nil {
			d.err = err
			return
		}
	}
}
