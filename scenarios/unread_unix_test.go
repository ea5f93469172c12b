//go:build unix

package scenarios

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
)

// A client whose host stopped reading while its election ran (the answers
// it was given in process fill its stdout) still dies of SIGTERM once it
// has attached: a change of state never waits on stdout.
func TestAnAttachedClientWhoseHostStopsReadingDiesOfSIGTERM(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	stop(t, a)
	logFile := filepath.Join(t.TempDir(), "b.log")
	b := startUnread(t, dir, "--http-port", "0", "--log-file", logFile, "--busy-grace", "5m", "--election-bound", "10m")
	b.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"codex","version":"1"}}}`)
	// Answered in process while the election waits, more than a pipe holds
	// and than the process keeps waiting to be written, which it says: from
	// then on it reads no more (stdio.MaxUnwritten, 4096), so they are
	// written from a goroutine.
	go func() {
		for id := 2; id < 2+4096+100; id++ {
			if _, err := fmt.Fprintf(b.stdin, `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`+"\n", id); err != nil {
				return // the process died
			}
		}
	}()
	waitFileLine(t, logFile, "the client does not read its answers")
	a.Signal(syscall.SIGCONT)
	waitFileLine(t, logFile, `"to":"attached"`)
	b.diesOfSIGTERM(t)
}
