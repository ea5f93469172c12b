package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// A failure of a command a person runs is one plain sentence on a
// terminal, unless --log-format asks for the log's format; elsewhere, and
// for the commands hosts spawn, it is the log line.
func TestAFailureIsAPlainSentenceOnlyAtATerminal(t *testing.T) {
	for _, tc := range []struct {
		cmd                   string
		formatAsked, terminal bool
		plain                 bool
	}{
		{"status", false, true, true},
		{"board", false, true, true},
		{"fleet", false, true, true},
		{"graph", false, true, true},
		{"status", true, true, false},
		{"status", false, false, false},
		{"", false, true, false},
		{"serve", false, true, false},
	} {
		if got := toldPlainly(tc.cmd, tc.formatAsked, tc.terminal); got != tc.plain {
			t.Errorf("toldPlainly(%q, asked %v, terminal %v) = %v", tc.cmd, tc.formatAsked, tc.terminal, got)
		}
	}
	var o options
	for args, asked := range map[string]bool{"": false, "--log-level debug": false, "--log-format json": true, "--log-format=console": true} {
		fs := flagSet(commands()[2], &o, io.Discard) // status
		if err := fs.Parse(strings.Fields(args)); err != nil {
			t.Fatal(err)
		}
		if formatAsked(fs) != asked {
			t.Errorf("%q: formatAsked = %v", args, !asked)
		}
	}
	pipe, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pipe.Close()
	defer w.Close()
	if isTerminal(w) || isTerminal(&bytes.Buffer{}) {
		t.Error("a pipe or a buffer is taken for a terminal")
	}
}

// status, run outside any checkout with its stderr a pipe, says why as
// the JSON log line, with its exit code.
func TestAFailureOnAPipeIsTheLogLine(t *testing.T) {
	stderr := failedStatus(t, nil, testtemp.Dir(t), exitMissing)
	var line struct {
		Level    string
		Msg      string
		ExitCode int `json:"exit_code"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(stderr), &line); err != nil || line.Level != "error" || line.ExitCode != exitMissing ||
		!strings.Contains(line.Msg, "no checkout found") {
		t.Fatalf("stderr is not the one error log line (%v):\n%s", err, stderr)
	}
}

// failedStatus runs status in repo, which fails with code, its stderr tty
// when given, else a pipe, and returns what the pipe got.
func failedStatus(t *testing.T, tty *os.File, repo string, code int) []byte {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), mainArgsEnv+"=status\x1f--repo\x1f"+repo)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if tty != nil {
		cmd.Stderr = tty
	}
	if err := cmd.Run(); cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != code {
		t.Fatalf("status in %s: %v, want exit %d\n%s", repo, err, code, stderr.Bytes())
	}
	return stderr.Bytes()
}

// A process a host spawns that finds no checkout says so while it is
// starting: its machine never ran, so it was never electing.
func TestNoCheckoutIsSaidWhileStarting(t *testing.T) {
	for _, args := range [][]string{{}, {"--standalone"}} {
		var stdout, stderr bytes.Buffer
		code := run(append(args, "--repo", testtemp.Dir(t)), strings.NewReader(""), &stdout, &stderr)
		var line struct{ Msg, State string }
		if err := json.Unmarshal(bytes.TrimSpace(stderr.Bytes()), &line); err != nil || code != exitMissing || !strings.Contains(line.Msg, "no checkout found") {
			t.Fatalf("%q: exit %d, stderr (%v):\n%s", args, code, err, stderr.Bytes())
		}
		if line.State != "starting" {
			t.Errorf("%q: no checkout found, said in state %q", args, line.State)
		}
	}
}
