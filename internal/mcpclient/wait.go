package mcpclient

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Every wait ends on an event: the line or frame it waits for, its
// context's end, or the certainty that the line will never come — the
// process has exited, or (WaitLogUnless) logged the line that rules it out.

// WaitFrame waits for a stdout frame satisfying match and returns it; it
// gives up at once when the process has exited without one.
func (p *Process) WaitFrame(ctx context.Context, what string, match func(frame []byte) bool) ([]byte, error) {
	return p.WaitFrameAfter(ctx, what, 0, match)
}

// WaitFrameAfter is WaitFrame for the frames written after the first
// from: an answer that carries no id of its own (id null) is told from an
// earlier one only by when it came.
func (p *Process) WaitFrameAfter(ctx context.Context, what string, from int, match func(frame []byte) bool) ([]byte, error) {
	var found []byte
	err := p.awaitLive(ctx, what, func() bool {
		for i := from; i < len(p.frames); i++ {
			if match(p.frames[i]) {
				found = p.frames[i]
				return true
			}
		}
		return false
	})
	return found, err
}

// WaitLog waits for a stderr line containing every one of the parts; it
// gives up at once when the process has exited without one.
func (p *Process) WaitLog(ctx context.Context, parts ...string) (string, error) {
	return p.WaitLogUnless(ctx, "", parts...)
}

// WaitLogUnless is WaitLog that also gives up at once when the process has
// logged a line containing stop ("" for none) and none with the parts —
// for instance a process served alone while a test waits for it to share
// — with that line in the error.
func (p *Process) WaitLogUnless(ctx context.Context, stop string, parts ...string) (string, error) {
	var found, stopped string
	what := fmt.Sprintf("a log line with %q", parts)
	err := p.awaitLive(ctx, what, func() bool {
		for _, l := range p.logs {
			if ContainsAll(l, parts) {
				found = l
				return true
			}
			if stop != "" && stopped == "" && strings.Contains(l, stop) {
				stopped = l
			}
		}
		return stopped != ""
	})
	if err == nil && found == "" {
		err = fmt.Errorf("waiting for %s: the process logged instead: %s", what, stopped)
	}
	return found, err
}

// WaitLogs waits until n stderr lines contain every one of parts; it gives
// up at once when the process has exited with fewer.
func (p *Process) WaitLogs(ctx context.Context, n int, parts ...string) error {
	return p.awaitLive(ctx, fmt.Sprintf("%d log lines with %q", n, parts), func() bool { return p.countLogs(parts) >= n })
}

// WaitLogAny waits for a stderr line containing any one of the texts; it
// gives up at once when the process has exited without one.
func (p *Process) WaitLogAny(ctx context.Context, texts ...string) (string, error) {
	return p.WaitLogsAny(ctx, 1, texts...)
}

// WaitLogsAny waits until n stderr lines contain any one of the texts,
// and returns the nth; it gives up at once when the process has exited
// with fewer.
func (p *Process) WaitLogsAny(ctx context.Context, n int, texts ...string) (string, error) {
	var found string
	err := p.awaitLive(ctx, fmt.Sprintf("%d log lines with one of %q", n, texts), func() bool {
		seen := 0
		for _, l := range p.logs {
			if slices.ContainsFunc(texts, func(text string) bool { return strings.Contains(l, text) }) {
				if seen++; seen == n {
					found = l
					return true
				}
			}
		}
		return false
	})
	return found, err
}

// awaitLive is await for something the process says: once it has exited
// (and all it wrote was read) it can say nothing more, so a wait that
// check has not ended by then fails at once, with the process's last line.
func (p *Process) awaitLive(ctx context.Context, what string, check func() bool) error {
	ok := false
	err := p.await(ctx, what, func() bool {
		ok = check()
		return ok || p.exited
	})
	if err != nil || ok {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	last := "(nothing on stderr)"
	if len(p.logs) > 0 {
		last = p.logs[len(p.logs)-1]
	}
	return fmt.Errorf("waiting for %s: the process exited (%v); its last log line: %s", what, p.Cmd.ProcessState, last)
}

// CountLogs counts the stderr lines so far that contain every part.
func (p *Process) CountLogs(parts ...string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.countLogs(parts)
}

// countLogs is CountLogs under the lock.
func (p *Process) countLogs(parts []string) (n int) {
	for _, l := range p.logs {
		if ContainsAll(l, parts) {
			n++
		}
	}
	return n
}

// ContainsAll reports whether s contains every one of parts.
func ContainsAll(s string, parts []string) bool {
	for _, part := range parts {
		if !strings.Contains(s, part) {
			return false
		}
	}
	return true
}
