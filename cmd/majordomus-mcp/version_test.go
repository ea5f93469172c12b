package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/release"
)

// version prints the startup revision that fleet reports for a server of
// this binary, and says so when nothing identifies the code.
func TestVersionPrintsTheStartupRevision(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"version"}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	rev := release.StartupRevision().Startup
	if rev == "" || stdout.String() != "majordomus-mcp "+release.Version()+" (startup revision "+rev+")\n" {
		t.Fatalf("version printed %q; the startup revision is %q", stdout.String(), rev)
	}
	if got := versionLine("0.1.0", ""); got != "majordomus-mcp 0.1.0 (startup revision unknown)" {
		t.Errorf("without a revision: %q", got)
	}
}

// --version is version, as most programs take it, with version's flags.
func TestDashDashVersionIsVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"-version"}, {"--version", "--log-level", "debug"}} {
		var stdout, stderr strings.Builder
		if code := run(args, strings.NewReader(""), &stdout, &stderr); code != 0 || !strings.HasPrefix(stdout.String(), "majordomus-mcp ") {
			t.Fatalf("%q: exit %d, %q %q", args, code, stdout.String(), stderr.String())
		}
	}
}
