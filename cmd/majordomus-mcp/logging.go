package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"

	"go.uber.org/zap"
	"go.uber.org/zap/buffer"
	"go.uber.org/zap/zapcore"
)

// logOptions are the logging flags.
type logOptions struct {
	level  string // debug, info, warn, error
	format string // json or console
	file   string // also append to this file
}

// processState is the state every log line carries. It changes as the
// process moves through its states; the logger reads it on each line.
type processState struct{ v atomic.Pointer[string] }

func newProcessState(initial string) *processState {
	s := &processState{}
	s.Set(initial)
	return s
}

func (s *processState) Set(state string) { s.v.Store(&state) }
func (s *processState) Get() string      { return *s.v.Load() }

// stateCore adds the current process state to every entry it writes.
type stateCore struct {
	zapcore.Core
	state *processState
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

// logSinks are where the process log goes: stderr, through a sink that
// never waits (logsink.go), and the --log-file, written as lines come (a
// file does not fill up as a pipe nobody reads does).
type logSinks struct {
	stderr *stderrSink
	file   *os.File // nil without --log-file
}

// Dropped is how many lines stderr lost, for majordomus_server.
func (l *logSinks) Dropped() uint64 { return l.stderr.Dropped() }

// Close stops stderr's writer and closes the log file; what is still
// queued for stderr is written by then only if the logger was synced.
func (l *logSinks) Close() {
	l.stderr.Close()
	if l.file != nil {
		_ = l.file.Close()
	}
}

// newLogger builds the process logger: JSON lines (or console text) on
// stderr, optionally appended to a file too, never a byte on stdout. Every
// line carries pid and state.
func newLogger(opts logOptions, stderr io.Writer, state *processState) (*zap.Logger, *logSinks, error) {
	// zap also parses "" (info) and levels above error, which would
	// silence the errors that say why the process ends
	level, err := zapcore.ParseLevel(opts.level)
	if err != nil || opts.level == "" || level > zapcore.ErrorLevel {
		return nil, nil, usageError("--log-level %q: want debug, info, warn or error", opts.level)
	}
	encCfg := zap.NewProductionEncoderConfig()
	encCfg.TimeKey = "ts"
	encCfg.EncodeTime = zapcore.ISO8601TimeEncoder
	var enc zapcore.Encoder
	switch opts.format {
	case "json":
		enc = zapcore.NewJSONEncoder(encCfg)
	case "console":
		encCfg.EncodeLevel = zapcore.CapitalLevelEncoder
		enc = zapcore.NewConsoleEncoder(encCfg)
	default:
		return nil, nil, usageError("--log-format %q: want json or console", opts.format)
	}
	enc = printableLines{enc, opts.format == "console"}
	out := &logSinks{stderr: newStderrSink(unsignalled(stderr), droppedNotice(enc, state))}
	sinks := []zapcore.WriteSyncer{out.stderr}
	var fileErr error
	if opts.file != "" {
		f, err := openLogFile(opts.file)
		if err == nil {
			sinks = append(sinks, &logFileSink{f: f, stderr: out.stderr, notice: logFileNotice(enc, state, opts.file)})
			out.file = f
		}
		fileErr = err
	}
	core := zapcore.NewCore(enc, zapcore.NewMultiWriteSyncer(sinks...), level)
	logger := zap.New(stateCore{core, state}, zap.ErrorOutput(out.stderr)).With(zap.Int("pid", os.Getpid()))
	if fileErr != nil {
		// A log file costs no client its server: say so on stderr, and serve.
		logger.Warn(fmt.Sprintf("cannot open the log file %s: %v; logging to stderr only", opts.file, fileErr),
			zap.String("log_file", opts.file))
	}
	return logger, out, nil
}

// leaseWait bounds how long a log file leased by another process is waited
// for: a holder that never gives it up (an unanswering Samba or NFS
// client) would hold the start for the kernel's lease-break time (45 s),
// and a log file that cannot be opened costs nothing but itself.
const leaseWait = time.Second

// openLogFile opens path to append to: a regular file of this user's,
// and not the process's stdout. What is not a regular file is refused
// before it is opened (opening a device can act; opening a FIFO wakes its
// reader), and the open never waits for a FIFO made there meanwhile
// (O_NONBLOCK on Unix), which would hold it, then every line, until
// someone read it: a regular file leased by another process (Samba, NFS)
// is opened again once the lease is given up, within leaseWait. stdout is
// the protocol's. The log names the checkout, its server and its peers:
// it is made private (0600), as the lease is, and a link at its path
// (symbolic, or hard: another name of a file of this user's), or another
// user's file (either made in a shared directory such as /tmp by that
// user), is not written (O_NOFOLLOW on Unix).
func openLogFile(path string) (*os.File, error) {
	notRegular := func(fi os.FileInfo) error { return fmt.Errorf("not a regular file (%s)", fi.Mode()) }
	switch fi, err := os.Lstat(path); {
	case err == nil && fi.Mode()&os.ModeSymlink != 0:
		return nil, errors.New("a symbolic link, which is not followed")
	case err == nil && !fi.Mode().IsRegular():
		return nil, notRegular(fi)
	}
	const flags = os.O_WRONLY | os.O_APPEND | os.O_CREATE
	f, err := os.OpenFile(path, flags|logOpenFlags, 0o600)
	for wait := 5 * time.Millisecond; errors.Is(err, syscall.EAGAIN) && wait <= leaseWait; wait *= 2 {
		time.Sleep(wait) // the open asked the holder to give its lease up
		f, err = os.OpenFile(path, flags|logOpenFlags, 0o600)
	}
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	switch out, oerr := os.Stdout.Stat(); {
	case err != nil:
	case !fi.Mode().IsRegular():
		err = notRegular(fi)
	case !ownFile(fi):
		err = errors.New("it is another user's file")
	case hardLinked(fi):
		err = errors.New("a hard link, another name of a file")
	case oerr == nil && os.SameFile(fi, out):
		err = errors.New("it is stdout, where the protocol is written")
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
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
		ent.Message = printable(ent.Message)
	}
	buf, err := e.Encoder.EncodeEntry(ent, fields)
	if err != nil || !slices.ContainsFunc(buf.Bytes(), notPlainByte) {
		return buf, err
	}
	line := printableJSON(buf.Bytes())
	buf.Reset()
	_, _ = buf.Write(line)
	return buf, nil
}

// notPlainByte: b may begin a rune that is not printable ASCII (a console
// line's tabs and its end are its own).
func notPlainByte(b byte) bool { return (b < ' ' || b > '~') && b != '\t' && b != '\n' }

// printable is s with what is not printable escaped (\x1b, \u202e).
func printable(s string) string {
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
func droppedNotice(enc zapcore.Encoder, state *processState) func(uint64) []byte {
	return func(n uint64) []byte {
		return notice(enc, state, zapcore.WarnLevel, "log lines dropped",
			zap.Uint64("dropped", n), zap.String("reason", "stderr was not being read"))
	}
}

// notice is a line the log's sinks write themselves, in the log's own
// format, with pid and state as every line; nil if it cannot be encoded.
func notice(enc zapcore.Encoder, state *processState, level zapcore.Level, message string, fields ...zapcore.Field) []byte {
	fields = append(append([]zapcore.Field{zap.Int("pid", os.Getpid())}, fields...), zap.String("state", state.Get()))
	buf, err := enc.EncodeEntry(zapcore.Entry{Level: level, Time: time.Now(), Message: message}, fields)
	if err != nil {
		return nil
	}
	defer buf.Free()
	return append([]byte(nil), buf.Bytes()...)
}

// logFileSink is the --log-file as the logger writes it. A line it cannot
// write (a full disk, the file size limit) is lost to the file only: the
// failure is said once on stderr, in the log's own format, and again once
// the file is written again, not by zap's plain-text "write error" for
// every line. A write cut short leaves part of a line: the next line
// written begins on a line of its own, so that it is whole for whoever
// reads the file.
type logFileSink struct {
	f      *os.File
	stderr io.Writer
	notice func(err error, lost uint64) []byte // what stderr is told: the failure (err), or the file written again

	mu      sync.Mutex
	torn    bool   // the file ends within a line this sink wrote part of
	failing bool   // the last write failed
	lost    uint64 // lines not written since the last that was
}

func (s *logFileSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	line := p
	if s.torn {
		line = append([]byte{'\n'}, p...)
	}
	n, err := s.f.Write(line)
	if n > 0 {
		s.torn = line[n-1] != '\n'
	}
	if err != nil {
		s.lost++
		if !s.failing {
			s.failing = true
			_, _ = s.stderr.Write(s.notice(err, 0))
		}
		return len(p), nil // said: zap would say it again for every line
	}
	if s.failing {
		s.failing = false
		_, _ = s.stderr.Write(s.notice(nil, s.lost))
		s.lost = 0
	}
	return len(p), nil
}

func (s *logFileSink) Sync() error { return s.f.Sync() }

// logFileNotice makes the lines stderr gets as the log file fails and as
// it is written again, in the log's own format, with pid and state as
// every line.
func logFileNotice(enc zapcore.Encoder, state *processState, path string) func(error, uint64) []byte {
	return func(err error, lost uint64) []byte {
		if err != nil {
			return notice(enc, state, zapcore.WarnLevel,
				fmt.Sprintf("cannot write the log file %s: %v; its lines are on stderr only until it can be written again", path, err),
				zap.String("log_file", path), zap.String("reason", err.Error()))
		}
		return notice(enc, state, zapcore.InfoLevel,
			fmt.Sprintf("the log file %s is written again; %d lines logged meanwhile are on stderr only", path, lost),
			zap.String("log_file", path), zap.Uint64("lost", lost))
	}
}
