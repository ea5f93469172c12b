//go:build unix

package logging

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// A FIFO made at the log file's path whenever, even between a look at the
// path and its opening, holds nothing: the open never waits for a reader.
func TestALogFileOpenNeverWaitsForAReader(t *testing.T) {
	path := filepath.Join(testtemp.Dir(t), "log")
	stop := make(chan struct{})
	made := make(chan struct{})
	go func() {
		defer close(made)
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = syscall.Mkfifo(path, 0o600)
			_ = os.Remove(path)
		}
	}()
	defer func() { close(stop); <-made }()
	for range 2000 {
		opened := make(chan struct{})
		go func() {
			if f, err := openLogFile(path); err == nil {
				f.Close()
			}
			close(opened)
		}()
		select {
		case <-opened:
		case <-time.After(10 * time.Second):
			t.Fatal("opening the log file waits for a reader of a FIFO made at its path")
		}
	}
}
