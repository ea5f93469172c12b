package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"unicode"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"

	"golang.org/x/sys/unix"
)

// status, run with its stderr a terminal (a pseudo-terminal the test
// opens), says why it fails in one plain sentence: outside any checkout,
// and in one whose manifest has keys that would drive the terminal, shown
// escaped.
func TestAFailureAtATerminalIsOnePlainSentence(t *testing.T) {
	said := atATerminal(t, testtemp.Dir(t), exitMissing)
	if !bytes.HasPrefix(said, []byte("majordomus-mcp: ")) || !bytes.Contains(said, []byte("no checkout found")) || bytes.Count(said, []byte("\n")) > 0 {
		t.Fatalf("the terminal got, in place of one plain sentence:\n%s", said)
	}

	repo := testtemp.Dir(t)
	manifest := "schema: ai-repository/v1\n\"\\e]0;PWNED\\a\\e[2J\\nFAKE \\u202eRLO \\u009b1m\": 1\n"
	if err := os.MkdirAll(filepath.Join(repo, ".ai", "repo"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, ".ai", "manifest.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	said = atATerminal(t, repo, exitContract)
	if !bytes.Contains(said, []byte("unknown top-level key")) || bytes.Contains(said, []byte("\n")) ||
		bytes.ContainsFunc(said, func(r rune) bool { return !unicode.IsPrint(r) && r != '\r' }) {
		t.Fatalf("the terminal got, in place of one printable sentence:\n%q", said)
	}
	if want := `\x1b]0;PWNED\a\x1b[2J\nFAKE \u202eRLO \u009b1m`; !bytes.Contains(said, []byte(want)) {
		t.Fatalf("the terminal got %q, not the keys shown as %q", said, want)
	}
}

// atATerminal runs status in repo, which fails with code, its stderr a
// pseudo-terminal, and returns what the terminal got.
func atATerminal(t *testing.T, repo string, code int) []byte {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	failedStatus(t, tty, repo, code)
	tty.Close() // the master reads what was written, then EIO
	said, _ := io.ReadAll(master)
	return bytes.TrimSpace(said)
}
