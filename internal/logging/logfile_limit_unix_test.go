//go:build unix

package logging

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testchild"
	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// lockedBuffer is a stderr the sink's goroutine writes while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A log file that cannot be written (a full disk; here the file size
// limit, which binds root too, and cuts a line short) is said once on
// stderr, in the log's own JSON, naming the file: not by a plain-text
// "write error" line for every line logged. Once it can be written again,
// the next line is written whole on a line of its own, not glued to the
// part of a line the failed write left. The limit is the whole process's:
// the test runs in a test binary of its own.
func TestALogFileThatCannotBeWrittenIsSaidOnceAndItsNextLineIsWhole(t *testing.T) {
	if testchild.RanAlone(t, "log-file-size-limit") {
		return
	}
	path := filepath.Join(testtemp.Dir(t), "log")
	var stderr lockedBuffer
	logger, sinks, err := New(Options{Level: "info", Format: "json", File: path}, &stderr, NewState("leaseholder"))
	if err != nil {
		t.Fatal(err)
	}
	defer sinks.Close()
	logger.Info("first")
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	var was unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &was); err != nil {
		t.Fatal(err)
	}
	limit := was
	setLimit(&limit.Cur, info.Size()+20) // the next line is cut short
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &limit); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		logger.Info("a line the log file has no room for", zap.Int("i", i))
	}
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &was); err != nil {
		t.Fatal(err)
	}
	logger.Info("after")
	_ = logger.Sync()

	said := 0
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Errorf("stderr has a line that is not JSON: %q", line)
			continue
		}
		if v["level"] == "warn" && strings.Contains(line, path) {
			said++
		}
	}
	if said != 1 {
		t.Errorf("stderr names the log file in %d warnings, want 1:\n%s", said, stderr.String())
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	var last map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last["msg"] != "after" {
		t.Errorf("the line logged once the file could be written again is not whole on its own line: %q", lines[len(lines)-1])
	}
}

// setLimit sets an rlimit's field, uint64 on most systems, int64 on BSDs.
func setLimit[T int64 | uint64](field *T, to int64) { *field = T(to) }
