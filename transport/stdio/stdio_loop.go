package stdio

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// Ending says why the stdio loop stopped.
type Ending string

// The ways a stdio loop ends.
const (
	InputEnded   Ending = "input ended"              // stdin reached EOF
	OutputClosed Ending = "client closed the output" // writing stdout failed
	Cancelled    Ending = "stopped by the process"   // ctx ended
	InputFailed  Ending = "reading the input failed" // stdin returned an error
)

// Loop is the process's one stdio loop.
type Loop struct {
	In      io.Reader
	Out     *wire.FrameWriter
	Backend wire.Backend
	Logger  *zap.Logger // nil = no logs
}

// readHandOff is how long the goroutine that read a message may answer it
// before a new goroutine takes over reading: what a slow answer can hold
// the next message back.
const readHandOff = time.Millisecond

// MaxUnwritten bounds the answers waiting to be written: a client that
// writes but does not read its answers is no longer read once that many
// wait, rather than every answer waiting in memory. It is large: a host
// that stops reading for a while still has its requests read and acted
// on (an announcement recorded, a leaseholder's others served). What is
// being answered takes no place (a 2026-07-28 listen lasts until stdin
// ends).
const MaxUnwritten = 4096

// Serve reads lines until stdin ends, stdout breaks or ctx is done, and
// waits for the answers already under way before returning: once stdout
// broke, or ctx ended, for them to stop, as their context ends with it.
// It never returns an error for the client going away: that is how
// sessions end.
func (s *Loop) Serve(ctx context.Context) Ending {
	log := cmp.Or(s.Logger, zap.NewNop())
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// Answers read-lock answering; stopping write-locks it, once, for good.
	var answering sync.RWMutex
	stopAnswering := sync.OnceFunc(answering.Lock)
	defer stopAnswering()
	// A 2026-07-28 listen lasts as long as stdin: its end is the client's
	// shutdown, which no answer under way would otherwise see. It holds
	// answering until it ends, so it ends first, however the loop stops.
	listening, stopListening := context.WithCancel(ctx)
	defer stopListening()
	readDone := make(chan error, 1)
	unwritten := make(chan struct{}, MaxUnwritten)
	write := func(answer []byte) {
		unwritten <- struct{}{}
		_ = s.Out.Write(answer)
		<-unwritten
	}
	full := sync.OnceFunc(func() {
		log.Warn(fmt.Sprintf("the client does not read its answers: %d wait to be written; its input is read again as they are", MaxUnwritten))
	})
	// room waits while MaxUnwritten answers wait to be written.
	room := func() bool {
		select {
		case unwritten <- struct{}{}:
		default:
			full()
			select {
			case unwritten <- struct{}{}:
			case <-ctx.Done():
				return false
			}
		}
		<-unwritten
		return true
	}
	in := bufio.NewReaderSize(s.In, 64<<10)
	first := true // of the whole input, whichever goroutine reads it (one at a time)
	var read func()
	read = func() {
		handedOff := false
		err := readLines(in, func(line []byte) bool {
			if first { // after the byte order mark some Windows shells write first
				first, line = false, bytes.TrimPrefix(line, []byte("\uFEFF"))
			}
			if !room() {
				return false
			}
			msg, problem := checkLine(line)
			switch {
			case problem != nil:
				write(problem)
			case msg != nil:
				if !answering.TryRLock() {
					return false
				}
				// What a client sends right behind its initialize waits for
				// the answer, which opens the session it is served in.
				var handOff *time.Timer
				if !wire.IsMethod(msg, mcp.MethodInitialize) {
					handOff = time.AfterFunc(readHandOff, read)
				}
				hctx, listen := ctx, wire.IsMethod(msg, mcp.MethodSubscriptionsListen)
				if listen {
					hctx = listening
				}
				answer := s.Backend.Handle(hctx, msg)
				if answer != nil && (!listen || listening.Err() == nil) { // a listen ended by stdin's end is owed nothing
					write(answer)
				}
				answering.RUnlock()
				if handOff != nil && !handOff.Stop() {
					handedOff = true // another goroutine reads now
					return false
				}
			}
			return ctx.Err() == nil
		})
		if !handedOff {
			readDone <- err
		}
	}
	go read()

	select {
	case <-ctx.Done():
		return Cancelled
	case <-s.Out.Closed():
		log.Info("client closed the output; stopping")
		cancel() // no answer can reach it: what is under way is not waited for
		return OutputClosed
	case err := <-readDone:
		stopListening()
		// The answers under way are owed to a client that reads still; a
		// client that quit closed stdout with stdin, which breaks only at
		// the next write: from then on they are owed nobody.
		go func() {
			select {
			case <-s.Out.Closed():
				cancel()
			case <-ctx.Done():
			}
		}()
		stopAnswering()
		if err != nil {
			log.Warn("reading the input failed; stopping", zap.Error(err))
			return InputFailed
		}
		log.Info("input ended; stopping")
		return InputEnded
	}
}

// readLines passes each line (without its newline) to handle until EOF, an
// error, or handle returning false. An overlong line is passed as nil so
// that it can be answered.
func readLines(r *bufio.Reader, handle func(line []byte) bool) error {
	for {
		line, err := wire.ReadLine(r)
		if len(line) > 0 || (line == nil && err == nil) {
			if !handle(line) {
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

// checkLine returns the message on a line, or the frame that answers a line
// that is not a message. Both are nil for a blank line.
func checkLine(line []byte) (json.RawMessage, []byte) {
	if line == nil {
		return nil, wire.ErrorFrame(nil, mcp.PARSE_ERROR, "parse error: the line is longer than 16 MiB")
	}
	trimmed := bytes.Trim(line, " \t\r\n") // JSON's whitespace (RFC 8259), not Unicode's: a no-break space is no JSON
	if len(trimmed) == 0 {
		return nil, nil
	}
	if !utf8.Valid(trimmed) {
		return nil, wire.ErrorFrame(nil, mcp.PARSE_ERROR, "parse error: input is not UTF-8")
	}
	if !json.Valid(trimmed) {
		var probe json.RawMessage // for the error's wording
		err := json.Unmarshal(trimmed, &probe)
		return nil, wire.ErrorFrame(nil, mcp.PARSE_ERROR, "parse error: "+err.Error())
	}
	if trimmed[0] == '[' && len(bytes.Trim(trimmed[1:len(trimmed)-1], " \t\r\n")) == 0 { // valid: it ends with ']'; its members are never split out here (a 16 MiB line of them)
		return nil, wire.ErrorFrame(nil, mcp.INVALID_REQUEST, "invalid request: empty batch")
	}
	if len(trimmed) > wire.MaxMessageBytes { // each request in it is refused; notifications get nothing
		return nil, wire.RefuseEach(trimmed, mcp.INVALID_REQUEST,
			fmt.Sprintf("invalid request: the message is %d bytes, over the limit of %d bytes", len(trimmed), wire.MaxMessageBytes))
	}
	return json.RawMessage(trimmed), nil
}
