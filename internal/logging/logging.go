// Package logging builds a process's log: JSON lines (or console text)
// on stderr, and appended to a --log-file if asked, never a byte on
// stdout, which carries the protocol. Every line carries the process's pid
// and its state as it is when the line is written.
//
// Invariants: a write to the log never waits for a stderr nobody reads
// (stderr.go: lines queue, up to a bound, and what does not fit is
// counted and said); a log file that cannot be opened or written costs
// nothing but itself, said once on stderr; every line is one line of
// printable text, whatever a checkout or a client wrote into it.
package logging

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"go.uber.org/zap"
	"go.uber.org/zap/buffer"
	"go.uber.org/zap/zapcore"
)

// Options are the logging flags.
type Options struct {
	Level  string // debug, info, warn, error
	Format string // json or console
	File   string // also append to this file
}

// State is the state every log line carries. It changes as the process
// moves through its states; the logger reads it on each line.
type State struct{ v atomic.Pointer[string] }

// NewState is a State that says initial.
func NewState(initial string) *State {
	s := &State{}
	s.Set(initial)
	return s
}

func (s *State) Set(state string) { s.v.Store(&state) }
func (s *State) Get() string      { return *s.v.Load() }

// stateCore adds the current process state to every entry it writes.
type stateCore struct {
	zapcore.Core
	state *State
}

func (c stateCore) With(fields []zapcore.Field) zapcore.Core {
	return stateCore{c.Core.With(fields), c.state}
}

func (c stateCore) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(ent.Level) {
		return ce.AddCore(ent, c)
	}
	return ce
}

func (c stateCore) Write(ent zapcore.Entry, fields []zapcore.Field) error {
	return c.Core.Write(ent, append(fields, zap.String("state", c.state.Get())))
}

// Sinks are where the process log goes: stderr, through a sink that
// never waits (logsink.go), and the --log-file, written as lines come (a
// file does not fill up as a pipe nobody reads does).
type Sinks struct {
	stderr *stderrSink
	file   *os.File // nil without --log-file
}

// Dropped is how many lines stderr lost, for majordomus_server.
func (l *Sinks) Dropped() uint64 { return l.stderr.Dropped() }

// Close stops stderr's writer and closes the log file; what is still
// queued for stderr is written by then only if the logger was synced.
func (l *Sinks) Close() {
	l.stderr.Close()
	if l.file != nil {
		_ = l.file.Close()
	}
}

// New builds the process logger on stderr, and opts.File if given. Its
// errors are the options': the level's or the format's.
func New(opts Options, stderr io.Writer, state *State) (*zap.Logger, *Sinks, error) {
	// zap also parses "" (info) and levels above error, which would
	// silence the errors that say why the process ends
	level, err := zapcore.ParseLevel(opts.Level)
	if err != nil || opts.Level == "" || level > zapcore.ErrorLevel {
		return nil, nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", opts.Level)
	}
	encCfg := zap.NewProductionEncoderConfig()
	encCfg.TimeKey = "ts"
	encCfg.EncodeTime = zapcore.ISO8601TimeEncoder
	var enc zapcore.Encoder
	switch opts.Format {
	case "json":
		enc = zapcore.NewJSONEncoder(encCfg)
	case "console":
		encCfg.EncodeLevel = zapcore.CapitalLevelEncoder
		enc = zapcore.NewConsoleEncoder(encCfg)
	default:
		return nil, nil, fmt.Errorf("--log-format %q: want json or console", opts.Format)
	}
	enc = printableLines{enc, opts.Format == "console"}
	out := &Sinks{stderr: newStderrSink(stderr, droppedNotice(enc, state))}
	sinks := []zapcore.WriteSyncer{out.stderr}
	var fileErr error
	if opts.File != "" {
		f, err := openLogFile(opts.File)
		if err == nil {
			sinks = append(sinks, &logFileSink{f: f, stderr: out.stderr, notice: logFileNotice(enc, state, opts.File)})
			out.file = f
		}
		fileErr = err
	}
	core := zapcore.NewCore(enc, zapcore.NewMultiWriteSyncer(sinks...), level)
	logger := zap.New(stateCore{core, state}, zap.ErrorOutput(out.stderr)).With(zap.Int("pid", os.Getpid()))
	if fileErr != nil {
		// A log file costs no client its server: say so on stderr, and serve.
		logger.Warn(fmt.Sprintf("cannot open the log file %s: %v; logging to stderr only", opts.File, fileErr),
			zap.String("log_file", opts.File))
	}
	return logger, out, nil
}

// printableLines is an encoder whose lines show every rune that is not
// printable escaped (\x1b, \u202e, \u009b), in its messages and fields
// alike: a line may quote what a checkout or a client wrote (a manifest's
// keys, a path, a client's name, a refused caller's header), which must
// neither drive the reader's terminal nor pass for lines of the log. zap
// escapes only what is below U+0020. A console message is escaped as
// text; the rest of a line, JSON's strings, as JSON escapes, which mean
// the same runes.
type printableLines struct {
	zapcore.Encoder
	console bool
}

func (e printableLines) Clone() zapcore.Encoder {
	return printableLines{e.Encoder.Clone(), e.console}
}

func (e printableLines) EncodeEntry(ent zapcore.Entry, fields []zapcore.Field) (*buffer.Buffer, error) {
	if e.console {
		ent.Message = Printable(ent.Message)
	}
	buf, err := e.Encoder.EncodeEntry(ent, fields)
	if err != nil || !slices.ContainsFunc(buf.Bytes(), notPlainByte) {
		return buf, err
	}
	line := PrintableJSON(buf.Bytes())
	buf.Reset()
	_, _ = buf.Write(line)
	return buf, nil
}

// notPlainByte: b may begin a rune that is not printable ASCII (a console
// line's tabs and its end are its own).
func notPlainByte(b byte) bool { return (b < ' ' || b > '~') && b != '\t' && b != '\n' }

// Printable is s with what is not printable escaped (\x1b, \u202e).
func Printable(s string) string {
	if !strings.ContainsFunc(s, notPrintable) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if notPrintable(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func notPrintable(r rune) bool { return !unicode.IsPrint(r) }

// droppedNotice makes the line stderr gets in place of the lines it lost:
// a warning in the log's own format, with pid and state as every line.
func droppedNotice(enc zapcore.Encoder, state *State) func(uint64) []byte {
	return func(n uint64) []byte {
		return notice(enc, state, zapcore.WarnLevel, "log lines dropped",
			zap.Uint64("dropped", n), zap.String("reason", "stderr was not being read"))
	}
}

// notice is a line the log's sinks write themselves, in the log's own
// format, with pid and state as every line; nil if it cannot be encoded.
func notice(enc zapcore.Encoder, state *State, level zapcore.Level, message string, fields ...zapcore.Field) []byte {
	fields = append(append([]zapcore.Field{zap.Int("pid", os.Getpid())}, fields...), zap.String("state", state.Get()))
	buf, err := enc.EncodeEntry(zapcore.Entry{Level: level, Time: time.Now(), Message: message}, fields)
	if err != nil {
		return nil
	}
	defer buf.Free()
	return append([]byte(nil), buf.Bytes()...)
}

// PrintableJSON escapes every rune of a JSON text that is not printable
// (\u202e, \u009b) but a tab or a newline, and every byte that is not
// UTF-8 (\ufffd), as the log's lines are: a report quotes what clients
// wrote (a peer's name, its announcement), which must not drive the
// reader's terminal. Outside its strings JSON holds only printable ASCII,
// tabs and newlines, so every such rune is inside a string, where the
// escape means the same rune.
func PrintableJSON(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && n == 1:
			out = append(out, `\ufffd`...)
		case r == '\n' || r == '\t' || !notPrintable(r):
			out = append(out, b[:n]...)
		default:
			for _, u := range utf16.AppendRune(nil, r) {
				out = fmt.Appendf(out, `\u%04x`, u)
			}
		}
		b = b[n:]
	}
	return out
}
