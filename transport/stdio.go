package transport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"unicode/utf8"

	"go.uber.org/zap"
)

// Backend answers the client's messages.
type Backend interface {
	// Handle answers one message or one batch. It returns the answer frame,
	// or nil when nothing is owed (a notification, a response to a
	// server-to-client request, a batch of those). It may write other frames
	// (notifications, server-to-client requests) before returning. It is
	// called concurrently, once per line.
	Handle(ctx context.Context, msg json.RawMessage) []byte
}

// Ending says why the stdio loop stopped.
type Ending string

// The ways a stdio loop ends.
const (
	InputEnded   Ending = "input ended"              // stdin reached EOF
	OutputClosed Ending = "client closed the output" // writing stdout failed
	Cancelled    Ending = "stopped by the process"   // ctx ended
	InputFailed  Ending = "reading the input failed" // stdin returned an error
)

// MaxLineBytes bounds one input line. A longer line is answered with a parse
// error and skipped; the session goes on.
const MaxLineBytes = 16 << 20

// Stdio is the process's one stdio loop.
type Stdio struct {
	In      io.Reader
	Out     *FrameWriter
	Backend Backend
	Logger  *zap.Logger // nil = no logs
}

// Serve reads lines until stdin ends, stdout breaks or ctx is done, and
// waits for the answers already under way before returning. It never
// returns an error for the client going away: that is how sessions end.
func (s *Stdio) Serve(ctx context.Context) Ending {
	log := s.Logger
	if log == nil {
		log = zap.NewNop()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	lines := make(chan []byte)
	readDone := make(chan error, 1)
	go func() { readDone <- readLines(ctx, s.In, lines) }()

	var inflight sync.WaitGroup
	defer inflight.Wait()
	for {
		select {
		case <-ctx.Done():
			return Cancelled
		case <-s.Out.Closed():
			log.Info("client closed the output; stopping")
			return OutputClosed
		case err := <-readDone:
			inflight.Wait()
			if err != nil {
				log.Warn("reading the input failed; stopping", zap.Error(err))
				return InputFailed
			}
			log.Info("input ended; stopping")
			return InputEnded
		case line := <-lines:
			msg, problem := checkLine(line)
			switch {
			case msg == nil && problem == nil:
				// blank line: nothing to answer
			case problem != nil:
				_ = s.Out.Write(problem)
			default:
				inflight.Add(1)
				go func() {
					defer inflight.Done()
					if answer := s.Backend.Handle(ctx, msg); answer != nil {
						_ = s.Out.Write(answer)
					}
				}()
			}
		}
	}
}

// errLineTooLong marks a line that was cut at MaxLineBytes.
var errLineTooLong = errors.New("line too long")

// readLines sends each line (without its newline) until EOF or an error.
// An overlong line is sent as nil so that the loop can answer it.
func readLines(ctx context.Context, in io.Reader, out chan<- []byte) error {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := readLine(r)
		if errors.Is(err, errLineTooLong) {
			line, err = nil, nil
		}
		if len(line) > 0 || (line == nil && err == nil) {
			select {
			case out <- line:
			case <-ctx.Done():
				return nil
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readLine reads one line, or discards it and reports errLineTooLong.
func readLine(r *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(buf)+len(chunk) > MaxLineBytes {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			return nil, errLineTooLong
		}
		buf = append(buf, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == nil {
			buf = buf[:len(buf)-1]
		}
		if len(buf) == 0 && err == nil {
			buf = []byte{} // a blank line, distinct from an overlong one
		}
		return buf, err
	}
}

// checkLine returns the message on a line, or the frame that answers a line
// that is not a message. Both are nil for a blank line.
func checkLine(line []byte) (json.RawMessage, []byte) {
	if line == nil {
		return nil, ErrorFrame(nil, CodeParseError, "parse error: the line is longer than 16 MiB")
	}
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return nil, nil
	}
	if !utf8.Valid(trimmed) {
		return nil, ErrorFrame(nil, CodeParseError, "parse error: input is not UTF-8")
	}
	var probe json.RawMessage
	if err := json.Unmarshal(trimmed, &probe); err != nil {
		return nil, ErrorFrame(nil, CodeParseError, "parse error: "+err.Error())
	}
	if members, ok := SplitBatch(trimmed); ok && len(members) == 0 {
		return nil, ErrorFrame(nil, CodeInvalidRequest, "invalid request: empty batch")
	}
	return json.RawMessage(trimmed), nil
}
