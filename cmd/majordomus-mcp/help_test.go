package main

import (
	"bytes"
	"errors"
	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Help asked for goes to stdout and exits 0; a usage error is one plain
// line on stderr, then where to find help, and exits 2: every one alike.
func TestTheCommandLineFollowsTheConventions(t *testing.T) {
	for _, tc := range []struct {
		args           []string
		code           int
		stdout, stderr string // a prefix each must have; "" must be empty
	}{
		{[]string{"-h"}, 0, "majordomus-mcp serves", ""},
		{[]string{"--help"}, 0, "majordomus-mcp serves", ""},
		{[]string{"help"}, 0, "majordomus-mcp serves", ""},
		{[]string{"help", "fleet"}, 0, "Usage: majordomus-mcp fleet [flags]", ""},
		{[]string{"status", "--help"}, 0, "Usage: majordomus-mcp status [flags]", ""},
		{[]string{"bogus"}, 2, "", "majordomus-mcp: unknown command \"bogus\"\nRun 'majordomus-mcp help' for usage.\n"},
		{[]string{"bogus", "-h"}, 2, "", "majordomus-mcp: unknown command \"bogus\"\n"},
		{[]string{"bogus", "x"}, 2, "", "majordomus-mcp: unknown command \"bogus\"\n"},
		{[]string{"help", "-h"}, 0, "majordomus-mcp serves", ""},
		{[]string{"help", "help"}, 0, "majordomus-mcp serves", ""},
		// a command refuses a flag it would ignore, and lists only its own
		{[]string{"graph", "--repo", "x"}, 2, "", "majordomus-mcp: flag provided but not defined: -repo\n"},
		{[]string{"fleet", "--standalone"}, 2, "", "majordomus-mcp: flag provided but not defined: -standalone\n"},
		{[]string{"fleet", "--profile", "x"}, 2, "", "majordomus-mcp: flag provided but not defined: -profile\n"},
		{[]string{"version", "--strict"}, 2, "", "majordomus-mcp: flag provided but not defined: -strict\n"},
		{[]string{"help", "bogus"}, 2, "", "majordomus-mcp: no command \"bogus\" to help with\n"},
		{[]string{"--no-such-flag"}, 2, "", "majordomus-mcp: flag provided but not defined: -no-such-flag\n"},
		{[]string{"version", "extra"}, 2, "", "majordomus-mcp: version takes no arguments\n"},
		{[]string{"--repo", "x", "status"}, 2, "", "majordomus-mcp: unexpected argument \"status\": a command comes first, then its flags: majordomus-mcp status [flags]\n"},
		{[]string{"--repo", "x", "y"}, 2, "", "majordomus-mcp: unexpected argument \"y\"\n"},
		{[]string{"graph", "--format", ""}, 2, "", "majordomus-mcp: --format \"\": want dot, mermaid or json\n"},
		{[]string{"--format", "json", "graph"}, 2, "", "majordomus-mcp: flag provided but not defined: -format: a command comes first, then its flags: majordomus-mcp graph [flags]\n"},
		{[]string{"--no-open", "version"}, 2, "", "majordomus-mcp: flag provided but not defined: -no-open\n"},
		{[]string{"--http-port", "status"}, 2, "", "majordomus-mcp: invalid value \"status\" for flag -http-port: parse error\n"},
		// a zero would silently be the default: refused, as a negative is
		{[]string{"--heartbeat", "0"}, 2, "", "majordomus-mcp: --heartbeat 0s: must be positive\n"},
		{[]string{"--max-sessions", "-5"}, 2, "", "majordomus-mcp: --max-sessions -5: must be positive\n"},
		{[]string{"serve", "--http-port", "99999"}, 2, "", "majordomus-mcp: --http-port 99999: must be a port, 0 to 65535\n"},
		{[]string{"--log-level", "trace"}, 2, "", "majordomus-mcp: --log-level \"trace\": want debug, info, warn or error\nRun 'majordomus-mcp help' for usage.\n"},
		// zap's levels above error would silence the log's errors, and "" is no level
		{[]string{"--log-level", "fatal"}, 2, "", "majordomus-mcp: --log-level \"fatal\": want debug, info, warn or error\nRun 'majordomus-mcp help' for usage.\n"},
		{[]string{"--log-level", "panic"}, 2, "", "majordomus-mcp: --log-level \"panic\": want debug, info, warn or error\nRun 'majordomus-mcp help' for usage.\n"},
		{[]string{"--log-level", "dpanic"}, 2, "", "majordomus-mcp: --log-level \"dpanic\": want debug, info, warn or error\nRun 'majordomus-mcp help' for usage.\n"},
		{[]string{"--log-level", ""}, 2, "", "majordomus-mcp: --log-level \"\": want debug, info, warn or error\nRun 'majordomus-mcp help' for usage.\n"},
		{[]string{"status", "--profile", "../x"}, 2, "", "majordomus-mcp: --profile: registry: invalid profile name \"../x\": one of at most 64 lowercase letters, digits, '-' and '_', first a letter or digit\n"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, strings.NewReader(""), &stdout, &stderr)
		if code != tc.code {
			t.Errorf("%q: exit %d, want %d (stderr %q)", tc.args, code, tc.code, stderr.String())
		}
		for _, out := range []struct {
			name, got, want string
		}{{"stdout", stdout.String(), tc.stdout}, {"stderr", stderr.String(), tc.stderr}} {
			if (out.want == "") != (out.got == "") || !strings.HasPrefix(out.got, out.want) {
				t.Errorf("%q: %s %q, want it to begin %q", tc.args, out.name, out.got, out.want)
			}
		}
		if tc.code == 0 && !strings.Contains(stdout.String(), "-repo") {
			t.Errorf("%q: the help lists no flags: %q", tc.args, stdout.String())
		}
	}
}

// A command's help lists the flags it reads, and no other: the log's, and
// its own. The stdio command's is the whole usage's, of every flag.
func TestACommandsHelpListsItsOwnFlags(t *testing.T) {
	for _, c := range commands() {
		if c.run == nil || c.name == "" {
			continue
		}
		var stdout, stderr bytes.Buffer
		if code := run([]string{c.name, "-h"}, strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Fatalf("%s -h: exit %d, %s", c.name, code, stderr.String())
		}
		var listed []string
		for _, line := range strings.Split(stdout.String(), "\n") {
			if name, ok := strings.CutPrefix(line, "  -"); ok {
				listed = append(listed, strings.Fields(name)[0])
			}
		}
		want := strings.Fields(c.flags + " log-file log-format log-level")
		slices.Sort(want)
		if !slices.Equal(listed, want) {
			t.Errorf("%q -h lists %v, want %v", c.name, listed, want)
		}
	}
}

// A log file that cannot be opened costs nothing but the file: the
// command runs, and stderr says why there is no file.
func TestAnUnopenableLogFileIsReportedAndTheCommandRuns(t *testing.T) {
	dir := testtemp.Dir(t) // t.TempDir cannot remove under wine
	file := filepath.Join(dir, "not-a-directory")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"version", "--log-file", filepath.Join(file, "majordomus.log")}, strings.NewReader(""), &stdout, &stderr)
	if code != 0 || !strings.HasPrefix(stdout.String(), "majordomus-mcp ") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "cannot open the log file") || !strings.Contains(stderr.String(), "logging to stderr only") {
		t.Fatalf("stderr does not say why: %q", stderr.String())
	}
}

// Help that cannot be written (a full disk) fails, and says so on stderr,
// as every command's output does. (It exited 0, having said nothing.)
func TestHelpThatCannotBeWrittenFails(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"help", "graph"}, {"graph", "-h"}} {
		var stderr bytes.Buffer
		if code := run(args, strings.NewReader(""), fullWriter{}, &stderr); code != exitInternal || !strings.Contains(stderr.String(), "no space left") {
			t.Errorf("%q on a full disk: exit %d, stderr %q", args, code, stderr.String())
		}
	}
}

// fullWriter is a disk with no room left.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }
