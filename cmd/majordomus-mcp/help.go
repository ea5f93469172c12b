package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// The command line follows the usual conventions (README.md#command-line):
// help asked for goes to stdout and exits 0 (`-h`, `--help`, `help`, `help
// COMMAND`, `COMMAND -h`); a usage error is one plain line on stderr, with
// where to find help, and exits 2 — never a log line.

// help prints the usage, or a command's, on stdout.
func help(args []string, stdout, stderr io.Writer) int {
	var o options
	if len(args) == 0 || slices.Contains([]string{"-h", "-help", "--help"}, args[0]) {
		printUsage(stdout, command{}, flagSet(command{}, &o, stdout))
		return exitOK
	}
	for _, c := range commands() {
		if c.name == args[0] && c.name != "" && c.name != "help" {
			printUsage(stdout, c, flagSet(c, &o, stdout))
			return exitOK
		}
	}
	return usageFailed(stderr, fmt.Errorf("no command %q to help with", args[0]))
}

// printUsage writes the whole usage, or a command's when cmd names one.
func printUsage(w io.Writer, cmd command, fs *flag.FlagSet) {
	if cmd.name == "" {
		fmt.Fprint(w, usageText)
	} else {
		fmt.Fprintf(w, "Usage: majordomus-mcp %s [flags]\n\n%s%s.\n\nFlags:\n",
			cmd.name, strings.ToUpper(cmd.summary[:1]), cmd.summary[1:])
	}
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// usageFailed says what is wrong with the command line, plainly, and
// returns its exit code.
func usageFailed(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "majordomus-mcp: %v\nRun 'majordomus-mcp help' for usage.\n", err)
	return exitUsage
}
