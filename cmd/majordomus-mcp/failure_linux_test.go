package main

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// status, run outside any checkout with its stderr a terminal (a
// pseudo-terminal the test opens), says why in one plain sentence.
func TestAFailureAtATerminalIsOnePlainSentence(t *testing.T) {
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
	failedStatus(t, tty)
	tty.Close() // the master reads what was written, then EIO
	said, _ := io.ReadAll(master)
	said = bytes.TrimSpace(said)
	if !bytes.HasPrefix(said, []byte("majordomus-mcp: ")) || !bytes.Contains(said, []byte("no checkout found")) || bytes.Count(said, []byte("\n")) > 0 {
		t.Fatalf("the terminal got, in place of one plain sentence:\n%s", said)
	}
}
