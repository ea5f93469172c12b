package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/internal/logging"
	"github.com/majordomus-mcp/majordomus-mcp/internal/node"
	"github.com/majordomus-mcp/majordomus-mcp/machine"
)

// options are the flags every command shares.
type options struct {
	node.Flags
	standalone bool
	format     string
	roster     string // fleet: the profiles to expect, comma-separated; "" = the manifest's mcp.profiles
	noOpen     bool   // board: print the link only
	log        logging.Options
}

// command is one subcommand. None takes arguments; hint says what to
// write instead. flags names the flags it reads, the log's aside (every
// command logs): one it would ignore is a usage error, not silence.
type command struct {
	name, summary, hint, flags string
	run                        func(ctx context.Context, env *environment) error
}

// The flags commands share: where the checkout is, and how its server runs.
const (
	checkoutFlags = "repo profile "
	timingFlags   = "bind-grace probe-timeout election-bound busy-grace idle-timeout join-retry heartbeat "
	serverFlags   = checkoutFlags + timingFlags + "strict http-host http-port max-sessions registry "
)

// environment is what a command works with: its streams, options and logger.
type environment struct {
	opts   options
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	log    *zap.Logger
	logs   *logging.Sinks // where log goes, and what stderr lost
	state  *logging.State
	// died is set by a command that ended because of a signal, which the
	// process must then die of once it has cleaned up.
	died os.Signal
	// signals are the signals a serving command handles (stdio, serve),
	// registered from the command's start (registerSignals).
	signals *registeredSignals
}

func commands() []command {
	return []command{
		{"", "serve one MCP client on stdio (what MCP hosts spawn)", "", serverFlags + "standalone", runStdio},
		{"serve", "run the checkout's shared server without a stdio client, until a signal", "", serverFlags, runServe},
		{"status", "report the checkout's shared server, its sessions and peers as JSON, read-only, with the URL and header a direct HTTP client sends", "", checkoutFlags + timingFlags, runStatus},
		{"board", "print a one-time link to the checkout's board page (peers, history, server, live) and open it in a browser", "", checkoutFlags + timingFlags + "no-open", runBoard},
		{"fleet", "inventory the checkout's servers as JSON, read-only (exit 10 unless its gate is open)", " (the roster is --roster or the manifest's mcp.profiles)", "repo registry roster", runFleet},
		{"graph", "print the process state machine (--format dot|mermaid|json)", " (use --format)", "format", runGraph},
		{"demo", "run a short scripted MCP session on an embedded example checkout", "", "", runDemo},
		{"version", "print the version and the startup revision fleet reports", "", "", runVersion},
		{"help", "print this help, or a command's (help COMMAND)", "", "", nil},
	}
}

const usageText = `majordomus-mcp serves a checkout's .ai/ layer over MCP to every agent working in it.

Usage:
  majordomus-mcp [flags]            serve one MCP client on stdio (what MCP hosts spawn)
  majordomus-mcp serve              run the checkout's shared server without a stdio client,
                                    until a signal
  majordomus-mcp status             report the checkout's shared server, its sessions and
                                    peers as JSON, read-only, and how a direct HTTP client
                                    connects to it (URL and header)
  majordomus-mcp board [--no-open]  print a one-time link to the checkout's board page, a
                                    live page of its peers, history and server for its own
                                    user, and open it where a desktop exists
  majordomus-mcp fleet              inventory the checkout's servers as JSON, read-only; exit 0
                                    only when its mutation gate is satisfied, else 10
  majordomus-mcp graph [--format F] print the process state machine: dot, mermaid or json
  majordomus-mcp demo               run a short scripted session on an embedded example
  majordomus-mcp version            print the version and the startup revision fleet reports
  majordomus-mcp help [COMMAND]     print this help, or a command's

Flags:
`

// run parses the command line, runs the command and returns the exit code.
// A command ended by a signal makes the process die of that signal instead.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	stopProfile := startProfile(stderr)
	defer stopProfile()
	cmd, rest := pickCommand(args)
	switch {
	case cmd.name == "help":
		return help(rest, stdout, stderr)
	case cmd.run == nil:
		return usageFailed(stderr, fmt.Errorf("unknown command %q", cmd.name))
	}
	env := &environment{stdin: stdin, stdout: stdout, stderr: stderr, state: logging.NewState("starting")}
	fs := flagSet(cmd, &env.opts, io.Discard) // its own messages: a usage error is said once, below
	if err := fs.Parse(rest); err != nil {
		switch {
		case errors.Is(err, flag.ErrHelp) && cmd.name == "":
			return help(nil, stdout, stderr) // every command's flags
		case errors.Is(err, flag.ErrHelp):
			return printUsage(stdout, stderr, cmd)
		}
		undefined, isUndefined := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
		if named := commandAmong(cmd, rest, undefined); isUndefined && named != "" { // its flag, before it
			err = fmt.Errorf("%w: a command comes first, then its flags: majordomus-mcp %s [flags]", err, named)
		}
		return usageFailed(stderr, err)
	}
	if args := fs.Args(); len(args) > 0 {
		return usageFailed(stderr, cmd.unexpected(args[0]))
	}
	if err := unsetByZero(fs); err != nil {
		return usageFailed(stderr, err)
	}
	logger, logs, err := logging.New(env.opts.log, unsignalled(stderr), env.state)
	if err != nil {
		return usageFailed(stderr, err) // its only errors: --log-level, --log-format
	}
	defer logs.Close()
	env.log, env.logs = logger, logs

	err = cmd.run(context.Background(), env)
	switch {
	case err == nil:
	case codeOf(err) == exitUsage:
		_ = logger.Sync()
		return usageFailed(stderr, err)
	case toldPlainly(cmd.name, formatAsked(fs), isTerminal(stderr)):
		_ = logger.Sync()
		fmt.Fprintln(stderr, "majordomus-mcp:", logging.Printable(err.Error())) // it may quote the checkout's files
	default:
		logger.Error(err.Error(), zap.Int("exit_code", codeOf(err)))
	}
	_ = logger.Sync()
	if env.died != nil {
		stopProfile()
		dieOf(env.died)
	}
	return codeOf(err)
}

// toldPlainly reports whether a failure of the command cmd is said as one
// plain sentence rather than as a log line: by a command a person runs
// (status, board, fleet, graph, demo), on a stderr that is a terminal, unless
// --log-format asks for the log's format.
func toldPlainly(cmd string, formatAsked, terminal bool) bool {
	return terminal && !formatAsked && slices.Contains([]string{"status", "board", "fleet", "graph", "demo"}, cmd)
}

// formatAsked reports whether the command line gave --log-format.
func formatAsked(fs *flag.FlagSet) (asked bool) {
	fs.Visit(func(f *flag.Flag) { asked = asked || f.Name == "log-format" })
	return asked
}

// isTerminal reports whether w is a terminal: a character device, which
// every system's terminals are, and needs no call of its own.
func isTerminal(w io.Writer) bool {
	f, _ := w.(*os.File)
	st, err := f.Stat() // a nil *os.File says os.ErrInvalid
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func pickCommand(args []string) (command, []string) {
	all := commands()
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		args = append([]string{"version"}, args[1:]...) // as most programs take it
	}
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		for _, c := range all {
			if c.name == args[0] {
				return c, args[1:]
			}
		}
		return command{name: args[0]}, args[1:] // unknown: it runs nothing
	}
	return all[0], args
}

// commandAmong is the command, other than help, that one of args names
// when cmd is the stdio one (flags before a command), and that has flag
// unless it is "", or "".
func commandAmong(cmd command, args []string, flag string) string {
	for _, a := range args {
		c, _ := pickCommand([]string{a})
		if cmd.name == "" && c.run != nil && c.name != "" && (flag == "" || slices.Contains(strings.Fields(c.flags), flag)) {
			return c.name
		}
	}
	return ""
}

// unexpected is the error of an argument given to cmd.
func (cmd command) unexpected(arg string) error {
	if cmd.name == "" {
		if named := commandAmong(cmd, []string{arg}, ""); named != "" {
			return fmt.Errorf("unexpected argument %q: a command comes first, then its flags: majordomus-mcp %s [flags]", arg, named)
		}
		return fmt.Errorf("unexpected argument %q", arg)
	}
	return fmt.Errorf("%s takes no arguments%s", cmd.name, cmd.hint)
}

// unsetByZero refuses a zero given to a flag whose zero means "not given"
// (every timing, and --max-sessions): it would silently be the default;
// and a --http-port no port can have, which would bind another.
func unsetByZero(fs *flag.FlagSet) (err error) {
	fs.Visit(func(f *flag.Flag) {
		g, ok := f.Value.(flag.Getter)
		if !ok || err != nil {
			return
		}
		switch v := g.Get(); {
		case v == time.Duration(0) || f.Name == "max-sessions" && v.(int) <= 0:
			err = fmt.Errorf("--%s %s: must be positive", f.Name, f.Value)
		case f.Name == "http-port" && (v.(int) < 0 || v.(int) > 65535):
			err = fmt.Errorf("--%s %s: must be a port, 0 to 65535", f.Name, f.Value)
		}
	})
	return err
}

// flagSet is cmd's flags, the log's included; every command's for a
// command of no flags at all (the whole usage's help).
func flagSet(cmd command, o *options, out io.Writer) *flag.FlagSet {
	fs := everyFlag(o)
	if cmd.run != nil {
		own := flag.NewFlagSet("", flag.ContinueOnError)
		for _, name := range strings.Fields(cmd.flags + " log-level log-format log-file") {
			f := fs.Lookup(name)
			own.Var(f.Value, f.Name, f.Usage)
		}
		fs = own
	}
	fs.Init("majordomus-mcp "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {}
	return fs
}

func everyFlag(o *options) *flag.FlagSet {
	d := node.DefaultFlags()
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	fs.StringVar(&o.Repo, "repo", "", "start directory of the checkout (default: the working directory)")
	fs.StringVar(&o.Profile, "profile", d.Profile, "the server profile this process serves")
	fs.BoolVar(&o.standalone, "standalone", false, "serve this client alone: no shared server, no port, no lease")
	fs.BoolVar(&o.Strict, "strict", false, "refuse to serve a degraded index (exit 10)")
	fs.StringVar(&o.HTTPHost, "http-host", d.HTTPHost, "address the shared server binds")
	fs.IntVar(&o.HTTPPort, "http-port", d.HTTPPort, "port the shared server binds (0: any free port)")
	fs.IntVar(&o.MaxSessions, "max-sessions", d.MaxSessions, "most HTTP sessions the shared server keeps open; a new one beyond is refused, 503 with Retry-After")
	fs.StringVar(&o.format, "format", "dot", "graph: dot, mermaid or json")
	fs.StringVar(&o.Registry, "registry", "", "the fleet registry (default $MAJORDOMUS_MCP_REGISTRY, else $XDG_STATE_HOME/majordomus-mcp/registry.db, else ~/.local/state/majordomus-mcp/registry.db)")
	fs.StringVar(&o.roster, "roster", "", "fleet: the profiles to expect, comma-separated (default: the manifest's mcp.profiles, else default)")
	fs.BoolVar(&o.noOpen, "no-open", false, "board: print the link, do not open a browser")
	fs.DurationVar(&o.Times.BindGrace, "bind-grace", 0, fmt.Sprintf("how long a lease without a URL is waited for (default %s, or the manifest's)", d.Times.BindGrace))
	fs.DurationVar(&o.Times.ProbeTimeout, "probe-timeout", 0, fmt.Sprintf("timeout of the probe of a lease's server (default %s, or the manifest's)", d.Times.ProbeTimeout))
	fs.DurationVar(&o.Times.ElectionBound, "election-bound", 0, fmt.Sprintf("how long an election may take before the client is served alone (default %s, or the manifest's)", d.Times.ElectionBound))
	fs.DurationVar(&o.Times.BusyGrace, "busy-grace", 0, fmt.Sprintf("how long a live owner's silent server is waited for (default %s, or the manifest's)", d.Times.BusyGrace))
	fs.DurationVar(&o.Times.IdleTimeout, "idle-timeout", 0, fmt.Sprintf("how long an HTTP session may stay silent before it expires (default %s, or the manifest's)", d.Times.IdleTimeout))
	fs.DurationVar(&o.Times.JoinRetry, "join-retry", 0, fmt.Sprintf("how long a client served alone waits before it tries to share again, doubling up to %s (default %s)", machine.DefaultJoinRetryMax, d.Times.JoinRetry))
	fs.DurationVar(&o.Times.Heartbeat, "heartbeat", 0, fmt.Sprintf("how often a bridge pings its server (default %s, or the manifest's)", d.Times.Heartbeat))
	fs.StringVar(&o.log.Level, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&o.log.Format, "log-format", "json", "json or console")
	fs.StringVar(&o.log.File, "log-file", "", "also append the log to this file")
	return fs
}
