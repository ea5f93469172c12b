//go:build unix

package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// A --log-file that is a FIFO nobody reads holds nothing: opening it to
// write would wait for a reader, and every line after it. The command
// runs, and stderr says why there is no file.
func TestALogFileThatIsAFIFOHoldsNothing(t *testing.T) {
	fifo := filepath.Join(testtemp.Dir(t), "log.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"version", "--log-file", fifo}, strings.NewReader(""), &stdout, &stderr)
	}()
	select {
	case code := <-done:
		if code != 0 || !strings.HasPrefix(stdout.String(), "majordomus-mcp ") {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the command is held by a log file nobody reads")
	}
	if !strings.Contains(stderr.String(), "cannot open the log file") || !strings.Contains(stderr.String(), "not a regular file (prw") {
		t.Fatalf("stderr does not say why: %q", stderr.String())
	}
}
