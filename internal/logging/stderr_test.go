package logging

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// stuckWriter is a stderr nobody reads: its first write waits until
// release is closed; it records what it was given.
type stuckWriter struct {
	entered chan struct{} // closed when the first write begins
	release chan struct{}
	once    sync.Once
	mu      sync.Mutex
	got     bytes.Buffer
}

func newStuckWriter() *stuckWriter {
	return &stuckWriter{entered: make(chan struct{}), release: make(chan struct{})}
}

func (w *stuckWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.entered) })
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.got.Write(p)
}

func (w *stuckWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.got.String()
}

// returnsAtOnce runs f and fails if it waits for the stuck writer: a
// generous bound, only to say which call hung.
func returnsAtOnce(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s waited for a stderr nobody reads", what)
	}
}

// Writes to a stderr nobody reads return at once; what the queue has no
// room for is dropped and counted; once stderr takes lines again, the
// queued lines come first, then one notice in place of the dropped ones,
// then what was logged after.
func TestAStderrNobodyReadsNeverHoldsTheWriter(t *testing.T) {
	w := newStuckWriter()
	s := newStderrSink(w, func(n uint64) []byte { return fmt.Appendf(nil, "dropped %d\n", n) })
	s.budget = 3 * len("line 0\n")
	s.bound = 10 * time.Millisecond

	returnsAtOnce(t, "a write", func() { s.Write([]byte("line 0\n")) })
	<-w.entered // the writer holds line 0, stuck
	returnsAtOnce(t, "writes to a full queue", func() {
		for i := 1; i < 10; i++ {
			s.Write(fmt.Appendf(nil, "line %d\n", i))
		}
	})
	if got := s.Dropped(); got != 6 {
		t.Fatalf("dropped %d lines, want 6 (3 queued behind the stuck one)", got)
	}
	returnsAtOnce(t, "Sync", func() { s.Sync() }) // bounded

	s.bound = time.Minute // from now on Sync waits for what it says
	close(w.release)
	s.Sync()
	s.Write([]byte("line 10\n"))
	s.Sync()
	want := "line 0\nline 1\nline 2\nline 3\ndropped 6\nline 10\n"
	if got := w.String(); got != want {
		t.Fatalf("stderr got\n%s\nwant\n%s", got, want)
	}
	s.Close()
	s.Write([]byte("after close\n"))
	if s.Dropped() != 7 || strings.Contains(w.String(), "after close") {
		t.Fatalf("a line after Close: dropped %d, stderr %q", s.Dropped(), w.String())
	}
}

// Through the process logger: logging never waits for stderr, the file
// gets every line, and stderr's notice is a warning in the log's own
// format with pid, state and the count majordomus_server reports.
func TestTheLoggerNeverWaitsForStderr(t *testing.T) {
	for _, format := range []string{"json", "console"} {
		t.Run(format, func(t *testing.T) {
			w := newStuckWriter()
			file := filepath.Join(testtemp.Dir(t), "all.log") // wine cannot RemoveAll a TempDir
			logger, logs, err := New(Options{Level: "info", Format: format, File: file}, w, NewState("leaseholder"))
			if err != nil {
				t.Fatal(err)
			}
			const lines = 20000 // ~3 MiB, more than the queue holds
			returnsAtOnce(t, "logging", func() {
				for i := range lines {
					logger.Info("a line", zap.Int("i", i), zap.String("pad", strings.Repeat("x", 100)))
				}
			})
			dropped := logs.Dropped()
			if dropped == 0 {
				t.Fatal("nothing dropped")
			}
			close(w.release)
			logs.stderr.bound = time.Minute
			logger.Sync() // as the process does before it exits
			logs.Close()

			var notices, kept int
			for _, line := range strings.Split(strings.TrimSuffix(w.String(), "\n"), "\n") {
				if !strings.Contains(line, "log lines dropped") {
					kept++
					continue
				}
				notices++
				if format == "console" {
					if !strings.Contains(line, "\tWARN\tlog lines dropped\t") || !strings.Contains(line, fmt.Sprintf(`"dropped": %d`, dropped)) {
						t.Fatalf("the notice: %s", line)
					}
					continue
				}
				var n struct {
					Level, Msg, State, Reason string
					PID, Dropped              int
				}
				if err := json.Unmarshal([]byte(line), &n); err != nil || n.Level != "warn" || n.State != "leaseholder" ||
					n.PID == 0 || n.Reason == "" || uint64(n.Dropped) != dropped {
					t.Fatalf("the notice (%v): %s", err, line)
				}
			}
			if notices != 1 || uint64(kept)+dropped != lines {
				t.Fatalf("%d notices, %d lines written and %d dropped of %d", notices, kept, dropped, lines)
			}
			all, err := os.ReadFile(file)
			if got := strings.Count(string(all), "a line"); err != nil || got != lines {
				t.Fatalf("the log file has %d of %d lines", got, lines)
			}
		})
	}
}

// A line shows what is not printable escaped, in its message and its
// fields, in either format: text from a checkout (a manifest's key, a
// path) or a client (its name, a refused caller's header) can neither
// drive the reader's terminal nor make a line of its own. A JSON line
// still says the same runes.
func TestALogLineIsOneLineOfPrintableText(t *testing.T) {
	const message = "unknown top-level key(s): \x1b[31mRED\nFAKE \u202egnp.exe \"quoted\""
	const field = "\x1b]0;title\a \u202eRLO \u009b2J \u200b"
	for _, format := range []string{"console", "json"} {
		t.Run(format, func(t *testing.T) {
			file := filepath.Join(testtemp.Dir(t), format+".log")
			logger, logs, err := New(Options{Level: "info", Format: format, File: file}, io.Discard, NewState("alone"))
			if err != nil {
				t.Fatal(err)
			}
			logger.Error(message, zap.String("key", field))
			logger.Sync()
			logs.Close()
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			line := strings.TrimSuffix(string(b), "\n")
			if strings.Contains(line, "\n") || strings.ContainsFunc(line, func(r rune) bool { return r != '\t' && !unicode.IsPrint(r) }) {
				t.Fatalf("the line holds what is not printable: %q", line)
			}
			if format == "json" {
				var got struct{ Msg, Key string }
				if err := json.Unmarshal([]byte(line), &got); err != nil || got.Msg != message || got.Key != field {
					t.Fatalf("the line %q says %+v (%v), not what was logged", line, got, err)
				}
				return
			}
			if want := `unknown top-level key(s): \x1b[31mRED\nFAKE \u202egnp.exe "quoted"`; !strings.Contains(line, want) {
				t.Fatalf("the line %q does not show %q", line, want)
			}
			if want := `\u202eRLO \u009b2J \u200b`; !strings.Contains(line, want) {
				t.Fatalf("the line %q does not show its field as %q", line, want)
			}
		})
	}
}
