package logging

import (
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// A host may stop reading its server's stderr (stopped, debugged, slow):
// once its pipe is full, a plain write waits, and with it every goroutine
// that logs — the shared server's handlers included
// (docs/design.md#sharing-heals). So the log reaches stderr through a sink
// whose writes never wait: lines queue in memory, up to a bound, and one
// goroutine writes them out; what does not fit is dropped and counted, and
// a notice saying how many lines were lost is written where they would have
// been.

// stderrQueueBytes bounds the lines waiting for stderr: a few thousand,
// enough for a host that stops reading for a while and then reads again.
const stderrQueueBytes = 1 << 20

// stderrFlushBound is how long the process waits, as it exits, for the
// lines still queued: a stderr nobody reads never holds the exit longer.
const stderrFlushBound = time.Second

// stderrSink is a writer whose Write never waits for the one underneath.
type stderrSink struct {
	w      io.Writer
	notice func(dropped uint64) []byte // the line that says so many lines were dropped
	budget int                         // the bytes of lines the queue may hold
	bound  time.Duration               // how long Sync waits

	mu      sync.Mutex
	queue   []queued
	bytes   int           // of the lines in queue
	writing bool          // the writer holds an entry it took from the queue
	idle    chan struct{} // closed when the queue is next empty; nil unless a Sync waits
	closed  bool
	wake    chan struct{} // a line was queued (capacity 1)

	dropped atomic.Uint64 // every line dropped so far
}

// queued is a line, or the place of lines that were dropped.
type queued struct {
	line []byte
	gap  uint64 // lines dropped here, when line is nil
}

// newStderrSink starts the goroutine that writes to w; Close stops it.
func newStderrSink(w io.Writer, notice func(dropped uint64) []byte) *stderrSink {
	s := &stderrSink{w: w, notice: notice, budget: stderrQueueBytes, bound: stderrFlushBound, wake: make(chan struct{}, 1)}
	go s.drain()
	return s
}

// Write queues one line (zap writes an entry per call) and returns at once;
// a line the queue has no room for is dropped and counted.
func (s *stderrSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	if s.closed || s.bytes+len(p) > s.budget {
		if n := len(s.queue); n > 0 && s.queue[n-1].line == nil {
			s.queue[n-1].gap++
		} else {
			s.queue = append(s.queue, queued{gap: 1})
		}
		s.mu.Unlock()
		s.dropped.Add(1)
		return len(p), nil
	}
	s.queue = append(s.queue, queued{line: append([]byte(nil), p...)}) // zap reuses p
	s.bytes += len(p)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return len(p), nil
}

// Dropped is the number of lines dropped so far: lines the queue had no
// room for, and lines stderr refused.
func (s *stderrSink) Dropped() uint64 { return s.dropped.Load() }

// drain writes the queue out, in order, a notice in place of each gap.
func (s *stderrSink) drain() {
	for {
		s.mu.Lock()
		if len(s.queue) == 0 {
			s.writing = false
			if s.idle != nil {
				close(s.idle)
				s.idle = nil
			}
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return
			}
			<-s.wake
			continue
		}
		next := s.queue[0]
		s.queue[0] = queued{}
		s.queue = s.queue[1:]
		s.bytes -= len(next.line)
		s.writing = true
		s.mu.Unlock()

		line := next.line
		if line == nil {
			line = s.notice(next.gap)
		}
		if _, err := s.w.Write(line); err != nil && next.line != nil {
			s.dropped.Add(1) // a stderr that refuses lines loses them too
		}
	}
}

// Sync waits until every line queued so far is written, or the bound
// passes.
func (s *stderrSink) Sync() error {
	s.mu.Lock()
	if len(s.queue) == 0 && !s.writing {
		s.mu.Unlock()
		return nil
	}
	if s.idle == nil {
		s.idle = make(chan struct{})
	}
	idle := s.idle
	s.mu.Unlock()
	timer := time.NewTimer(s.bound)
	defer timer.Stop()
	select {
	case <-idle:
	case <-timer.C:
	}
	return nil
}

// Close stops the writer once it has written what is queued (Sync waits
// for that); later lines are dropped.
func (s *stderrSink) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
