package surface

import "sync"

// changes is the generation of what a surface shows a page (its board,
// its history, its layer): every change moves it and closes the channel
// handed out before, so that a reader waits for the next change instead
// of comparing what it reads. Its lock is taken last (under a board's).
type changes struct {
	mu   sync.Mutex
	gen  uint64
	next chan struct{}
}

// bump records a change.
func (c *changes) bump() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if c.next != nil {
		close(c.next)
		c.next = nil
	}
}

// watch returns the generation and a channel closed when it moves.
func (c *changes) watch() (uint64, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.next == nil {
		c.next = make(chan struct{})
	}
	return c.gen, c.next
}

// Changes returns the generation of what the board page shows of the
// surface and a channel closed when the next change moves it. Reading it
// also takes for gone the silent sessionless peers (judged lazily).
func (s *Surface) Changes() (uint64, <-chan struct{}) {
	s.Board.Peers()
	return s.changes.watch()
}

// change takes the board's lock for a change: the generation moves when
// it is released.
func (b *Board) change() (unlock func()) {
	b.mu.Lock()
	return func() {
		b.changes.bump()
		b.mu.Unlock()
	}
}
