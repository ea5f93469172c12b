package machine

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/qmuntal/stateless"
	"go.uber.org/zap"
)

// Machine is one process's state machine. Build it with [New], run it with
// [Machine.Run], and feed it facts through its input methods, which are safe
// to call from any goroutine at any time (before Run, during, after) and
// never block.
type Machine struct {
	cfg   Config
	log   *zap.Logger
	sm    *stateless.StateMachine
	model *model
	inbox inbox
	ran   atomic.Bool
	wg    sync.WaitGroup // the goroutines running Attempt and Start

	// Everything below belongs to the goroutine running Run.

	runCtx context.Context // ends when Run returns; ports' long-lived ctx
	now    time.Time       // when the trigger being fired is judged: guards that are each other's negation read one instant

	// The election.
	nextAttempt   uint64
	attempt       uint64 // the attempt in flight, 0 when none (waiting)
	cancelAttempt context.CancelFunc
	unwatch       context.CancelFunc // ends the lease watch of the election; nil outside one
	obs           Observation        // the last observation of this election
	busySince     time.Time          // first busy observation of an unbroken run
	busyOf        string             // whose server the run is of: its owner and URL
	bound, poll   *time.Timer
	boundEnds     time.Time     // when bound fires
	waitingOn     string        // the wait last announced: class and owner
	failed        BridgeFailure // what the last failed bridge said, at failedAt (waits.go)
	failedAt      time.Time
	failedOf      int     // the owner of the lease the failed bridge was attached by
	silence       silence // when the failed bridge's server fell silent (waits.go)

	// Alone's tries to share again.
	retry     *time.Timer   // armed while alone waits its turn
	retryAt   time.Time     // when retry fires
	retryWait time.Duration // the next wait; 0: Config.JoinRetry
	lastTry   time.Time     // when the last try started
	changed   bool          // the lease changed while the try in flight ran (noteChange)
	stillWhy  string        // the reason last logged for still being alone
	warned    string        // the reason serving alone was last warned of, until the client is shared again

	// The server.
	serverActive bool // Start was called and has not failed
	cancelStart  context.CancelFunc
	nextStart    uint64 // numbers the starts: a late result of an earlier one is dropped
	start        uint64 // the start whose result counts

	// Facts, recorded before the trigger that reports them is fired, so that
	// guards and actions read them from here.
	clientLeft bool
	sessions   int
	signal     string
	failure    string // why sharing failed: for alone and for failover
	lost       string // why the lease was lost

	outcome *Outcome // set by the exited entry action
}

// New validates cfg, applies its defaults and builds a machine in electing.
func New(cfg Config) (*Machine, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	b := newBuilder(Electing)
	configure(b)
	m := &Machine{cfg: cfg, log: cfg.Logger, sm: b.sm, model: &b.model}
	m.inbox.ready = make(chan struct{}, 1)
	m.clientLeft = cfg.Headless // a headless process has no client to wait for
	return m, nil
}

// State returns the current state. Safe from any goroutine.
func (m *Machine) State() State {
	return m.sm.MustState().(State)
}

// Run drives the machine until it reaches exited, and returns how it ended.
// It is the only goroutine that fires triggers: it starts the election, then
// turns every input, port result and timer into a fact and fires it. It
// returns only after every goroutine it started has ended. Run may be called
// once.
//
// Cancelling ctx abandons the machine, which is not a fact the graph knows:
// Run then stops what runs, releases the lease if it is the leaseholder, and
// returns with Reason "abandoned". Callers should prefer [Machine.Signal] and
// [Machine.ClientLeft].
func (m *Machine) Run(ctx context.Context) Outcome {
	if m.ran.Swap(true) {
		return Outcome{Reason: "machine: Run called twice"}
	}
	runCtx, cancel := context.WithCancel(ctx)
	m.runCtx = runCtx
	fctx := context.WithValue(runCtx, machineKey{}, m)
	defer func() {
		cancel()
		m.wg.Wait() // the ports' goroutines have posted all they will
		for _, ev := range m.inbox.take() {
			m.orphan(ev)
		}
		m.inbox.close()
	}()

	if err := m.sm.ActivateCtx(fctx); err != nil {
		m.log.Error("starting the machine", zap.Error(err))
	}
	for m.outcome == nil {
		select {
		case <-ctx.Done():
			m.abandon(fctx, context.Cause(ctx))
		case <-m.inbox.ready:
			for _, ev := range m.inbox.take() {
				if m.outcome != nil {
					m.orphan(ev)
					continue
				}
				m.handle(fctx, ev)
			}
		case <-timerC(m.bound):
			m.bound = nil
			m.failure = timeoutReason(m.cfg.ElectionBound, m.obs)
			m.fire(fctx, ElectionTimedOut)
		case <-timerC(m.poll):
			m.poll = nil
			m.fire(fctx, PollDue)
		case <-timerC(m.retry):
			m.retry = nil
			m.fire(fctx, RetryDue)
		}
	}
	return *m.outcome
}

// The input methods. Each reports one fact; the loop records it and fires
// its trigger, in the order the inputs were made.

// ClientLeft reports that the own stdio client has left: stdin reached EOF,
// or the parent process died.
func (m *Machine) ClientLeft() { m.inbox.post(event{trigger: ClientLeft}) }

// Signal reports a terminating signal by name ("SIGTERM"). The machine ends
// with Outcome.Signal set; a second signal is the caller's to handle.
func (m *Machine) Signal(name string) { m.inbox.post(event{trigger: Signal, text: name}) }

// SessionsChanged reports the count of live sessions other than the own
// stdio client. Only the latest count matters.
func (m *Machine) SessionsChanged(n int) { m.inbox.post(event{trigger: SessionsChanged, n: n}) }

// LeaseChanged reports that the lease file changed on disk. A waiting
// election reads it again; every other state ignores it.
func (m *Machine) LeaseChanged() { m.inbox.post(event{trigger: LeaseChanged}) }

// LeaseReplaced reports that this process's lease is gone, replaced, empty
// or corrupt, and says how.
func (m *Machine) LeaseReplaced(reason string) {
	m.inbox.post(event{trigger: LeaseReplaced, text: reason})
}

// event is one input for the loop: a fact reported through an input method
// (trigger set), an election attempt's result (attempt set), or the server's
// start result (started set).
type event struct {
	trigger Trigger
	n       int
	text    string
	bridge  BridgeFailure // BridgeFailed's

	attempt uint64
	obs     Observation

	started  bool
	start    uint64 // which start
	startErr error
}

// handle records what ev says and fires the fact it reports.
func (m *Machine) handle(ctx context.Context, ev event) {
	switch {
	case ev.attempt != 0:
		if ev.attempt != m.attempt {
			m.orphan(ev)
			return
		}
		m.cancelAttempt()
		m.attempt = 0
		m.obs = ev.obs
		m.noteObservation(ev.obs, time.Now())
		t, failure := TriggerFor(ev.obs)
		if failure != "" {
			m.failure = failure
		}
		m.fire(ctx, t)
	case ev.started:
		if !m.serverActive || ev.start != m.start {
			return // a start the machine gave up (a hand-over): its result means nothing now, even once a new one runs
		}
		m.cancelStart()
		if ev.startErr != nil {
			m.serverActive = false
			m.failure = "starting the shared server: " + ev.startErr.Error()
			m.fire(ctx, ServerStartFailed)
			return
		}
		m.fire(ctx, ServerStarted)
	default:
		switch ev.trigger {
		case ClientLeft:
			m.clientLeft = true
		case Signal:
			m.signal = ev.text
		case SessionsChanged:
			if !m.serverActive {
				return // a server the machine no longer runs: one handed over drains alone
			}
			m.sessions = max(ev.n, 0)
		case LeaseReplaced:
			m.lost = ev.text
		case BridgeFailed:
			if m.State() != Attached {
				break // a stopped bridge's late report (another message it could not deliver): not news, and it must not undo what the report that counted said
			}
			if !ev.bridge.Alone || m.obs.Owner != m.failedOf {
				m.warned = "" // the bridge had served the client, or met another server: a detour through alone now is a new one
			}
			m.failure = ev.text
			m.noteBridgeFailure(ev.bridge, time.Now())
		}
		m.fire(ctx, ev.trigger)
	}
}

// fire fires t on the loop goroutine. Actions never fail and an unhandled
// trigger is logged, so an error here is a bug worth a loud line. Fired
// from inside an action, t runs right after the current transition
// completes (FiringQueued), before any other input.
func (m *Machine) fire(ctx context.Context, t Trigger) {
	m.now = time.Now()
	if err := m.sm.FireCtx(ctx, t); err != nil {
		m.log.Error("firing a trigger", zap.String("trigger", string(t)), zap.Error(err))
	}
}

// orphan disposes of an input that comes too late to count: the result of
// an attempt the machine no longer waits for, or anything after the end. An
// attempt that created the lease before it learned it was cancelled leaves
// the file behind, so it is released here: a client that left, or a
// signal, while the lease was being linked must not leave a lease naming a
// process that is gone or serves alone.
func (m *Machine) orphan(ev event) {
	if ev.attempt == 0 {
		return
	}
	m.log.Debug("dropping the result of an attempt that no longer counts", zap.String("class", string(ev.obs.Class)))
	if ev.obs.Class == ClassWon {
		if err := m.cfg.Election.Release(context.Background()); err != nil {
			m.log.Warn("releasing the lease a cancelled attempt created", zap.Error(err))
		}
	}
}

// abandon ends the machine without a transition, because Run's ctx ended
// with cause. The cause is read from Run's own ctx: ctx here derives from
// it, and a parent's Done is closed before its children are cancelled, so
// ctx may not say it yet.
func (m *Machine) abandon(ctx context.Context, cause error) {
	state := m.State()
	m.log.Warn("machine abandoned", zap.Error(cause))
	switch {
	case m.model.within(state, Electing), m.model.within(state, Alone):
		m.stopElection()
	case m.model.within(state, Leaseholder):
		m.release(ctx)
	case m.model.within(state, Attached):
		m.cfg.Bridge.Stop()
	}
	m.stopServer(ctx)
	m.outcome = &Outcome{Reason: "abandoned: " + cause.Error()}
}

// inbox is the loop's unbounded FIFO of inputs: posting never blocks, so a
// port may report a fact even while the loop waits on that port.
type inbox struct {
	mu     sync.Mutex
	queue  []event
	closed bool
	ready  chan struct{} // holds a token while the queue may be non-empty
}

func (b *inbox) post(ev event) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.queue = append(b.queue, ev)
	b.mu.Unlock()
	select {
	case b.ready <- struct{}{}:
	default:
	}
}

func (b *inbox) take() []event {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.queue
	b.queue = nil
	return q
}

func (b *inbox) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	b.queue = nil
}

// timerC returns t's channel, or nil (never ready) when t is not armed.
func timerC(t *time.Timer) <-chan time.Time {
	if t == nil {
		return nil
	}
	return t.C
}
