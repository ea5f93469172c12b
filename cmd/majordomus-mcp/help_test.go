package main

import (
	"bytes"
	"strings"
	"testing"
)

// Help asked for goes to stdout and exits 0; a usage error is one plain
// line on stderr, with where to find help, and exits 2.
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
		{[]string{"help", "bogus"}, 2, "", "majordomus-mcp: no command \"bogus\" to help with\n"},
		{[]string{"--no-such-flag"}, 2, "", "majordomus-mcp: flag provided but not defined: -no-such-flag\n"},
		{[]string{"version", "extra"}, 2, "", "majordomus-mcp: version takes no arguments\n"},
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
