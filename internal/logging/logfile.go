package logging

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

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
func logFileNotice(enc zapcore.Encoder, state *State, path string) func(error, uint64) []byte {
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
