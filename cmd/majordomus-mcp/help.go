package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/majordomus-mcp/majordomus-mcp/internal/logging"
)

// The command line follows the usual conventions (README.md#command-line):
// help asked for goes to stdout and exits 0 (`-h`, `--help`, `help`, `help
// COMMAND`, `COMMAND -h`); a usage error is one plain line on stderr, with
// where to find help, and exits 2 — never a log line.

// help prints the usage, or a command's, on stdout.
func help(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || slices.Contains([]string{"-h", "-help", "--help", "help"}, args[0]) {
		return printUsage(stdout, stderr, command{})
	}
	for _, c := range commands() {
		if c.name == args[0] && c.name != "" {
			return printUsage(stdout, stderr, c)
		}
	}
	return usageFailed(stderr, fmt.Errorf("no command %q to help with", args[0]))
}

// printUsage writes the whole usage, or a command's when cmd names one,
// and returns the exit code: a usage that could not be written (a full
// disk) is said on stderr.
func printUsage(stdout, stderr io.Writer, cmd command) int {
	w := &firstError{w: stdout}
	if cmd.name == "" {
		fmt.Fprint(w, usageText)
	} else {
		fmt.Fprintf(w, "Usage: majordomus-mcp %s [flags]\n\n%s%s.\n\nFlags:\n",
			cmd.name, strings.ToUpper(cmd.summary[:1]), cmd.summary[1:])
	}
	var o options
	flagSet(cmd, &o, w).PrintDefaults()
	if w.err != nil {
		fmt.Fprintln(stderr, "majordomus-mcp: writing the usage:", w.err)
		return exitInternal
	}
	return exitOK
}

// firstError writes to w until a write fails, and keeps that failure.
type firstError struct {
	w   io.Writer
	err error
}

func (f *firstError) Write(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	n, err := f.w.Write(p)
	f.err = err
	return n, err
}

// usageFailed says what is wrong with the command line, plainly, and
// returns its exit code.
func usageFailed(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "majordomus-mcp: %s\nRun 'majordomus-mcp help' for usage.\n", logging.Printable(err.Error()))
	return exitUsage
}
