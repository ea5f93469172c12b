package machine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/qmuntal/stateless"
	"go.uber.org/zap"
)

// The named actions and guards of configure. They are package-level
// functions, so the graph shows their names; each finds its machine in the
// ctx that Run passes to stateless. They run on the loop goroutine, never
// fail (a port's error becomes a fact or a log line), and return quickly:
// work that may block runs on a goroutine whose result comes back as an
// event.

type machineKey struct{}

func machineOf(ctx context.Context) *Machine { return ctx.Value(machineKey{}).(*Machine) }

// Electing.

// beginElection starts the first election when Run starts.
func beginElection(ctx context.Context) error {
	machineOf(ctx).startElection()
	return nil
}

// electAgain starts a new election after the bridge failed; the client's
// session waits, carried, for whatever serves next.
func electAgain(ctx context.Context, _ ...any) error {
	m := machineOf(ctx)
	m.log.Warn(m.failure+"; electing again", zap.String("reason", m.failure))
	m.startElection()
	return nil
}

// endElection ends the lease watch, cancels the attempt in flight and
// disarms the timers.
func endElection(ctx context.Context, _ ...any) error {
	machineOf(ctx).stopElection()
	return nil
}

// takeOver replaces the unusable lease just judged and attempts again,
// both on the attempt's goroutine: a take-over may wait for the sidecar
// lock, and the loop would not hear a signal, the client's leaving or the
// election bound meanwhile. One that fails is an unusable lease; one that
// another process held the lock through is a lease being written, waited
// for as one (a client served alone, on its turn: the lock may stay held).
func takeOver(ctx context.Context, _ ...any) error {
	m := machineOf(ctx)
	obs, log := m.obs, m.log
	said := fmt.Sprintf("%s lease: %s; taking it over", obs.Class, obs.Reason)
	fields := []zap.Field{zap.String("lease", m.cfg.LeasePath), zap.String("class", string(obs.Class))}
	m.attemptAfter(func(actx context.Context) *Observation {
		// Said once it is done: of the processes that judged the lease, the
		// one that removed it (a held lock, or a race lost, removed nothing).
		switch removed, err := m.cfg.Election.TakeOver(actx, obs); {
		case errors.Is(err, ErrContended):
			log.Debug(said+": another process holds the lock", append(fields, zap.Error(err))...)
			return &Observation{Class: ClassBinding, Reason: err.Error(), Contended: true}
		case err != nil:
			return &Observation{Class: ClassUnusable, Reason: fmt.Sprintf("taking over the %s lease: %v", obs.Class, err)}
		case removed:
			log.Warn(said, fields...)
		default:
			log.Debug(said+": it changed since it was judged, or another process took it over first", fields...)
		}
		return nil
	})
	return nil
}

// awaitLease waits for the lease file to change, or for the poll interval.
func awaitLease(ctx context.Context, _ ...any) error {
	m := machineOf(ctx)
	m.log.Debug("waiting for the lease", zap.String("class", string(m.obs.Class)), zap.String("reason", m.obs.Reason))
	m.announceWait(time.Now())
	m.poll = time.NewTimer(m.cfg.BindingPoll)
	return nil
}

// announceWait says at info, once per wait (a class and an owner), what
// the election waits for and until when: the client's initialize is not
// answered meanwhile, and a host with a short start-up timeout may give up
// first.
func (m *Machine) announceWait(now time.Time) {
	key := fmt.Sprintf("%s %d", m.obs.Class, m.obs.Owner)
	if key == m.waitingOn {
		return
	}
	m.waitingOn = key
	until, then := waitEnd(m.obs, now, m.busySince, m.cfg.BusyGrace, m.boundEnds, m.cfg.Headless)
	m.log.Info(waitMessage(m.obs, until, then),
		zap.String("lease", m.cfg.LeasePath), zap.String("class", string(m.obs.Class)),
		zap.Int("owner_pid", m.obs.Owner), zap.Time("until", until), zap.String("reason", m.obs.Reason))
}

// readTheWinner attempts again at once after another process created the
// lease first: its lease is there to be read now.
func readTheWinner(ctx context.Context, _ ...any) error {
	m := machineOf(ctx)
	m.log.Debug(m.obs.Reason+"; reading its lease", zap.String("lease", m.cfg.LeasePath))
	m.startAttempt()
	return nil
}

// attemptAgain ends a wait with a new attempt.
func attemptAgain(ctx context.Context, _ ...any) error {
	machineOf(ctx).startAttempt()
	return nil
}

// Leaseholder, owner-left and lease-lost.

// startServer starts the shared server; its result comes back as
// server-started or server-start-failed. The server warns about a
// non-loopback bind as it starts (R7).
func startServer(ctx context.Context, _ ...any) error {
	m := machineOf(ctx)
	sctx, cancel := context.WithCancel(m.runCtx)
	m.cancelStart = cancel
	m.serverActive = true
	m.nextStart++
	m.start = m.nextStart
	id, srv := m.start, m.cfg.Server
	m.wg.Go(func() { m.inbox.post(event{started: true, start: id, startErr: srv.Start(sctx)}) })
	return nil
}

// noteServing records that the server is up.
func noteServing(ctx context.Context, _ ...any) error {
	m := machineOf(ctx)
	m.log.Debug("the shared server is serving")
	m.shared()
	return nil
}

// noteSessions records a new session count.
func noteSessions(ctx context.Context, _ ...any) error {
	m := machineOf(ctx)
	m.log.Debug("sessions", zap.Int("sessions", m.sessions))
	return nil
}

// releaseLease gives the lease back; it runs only on edges leaving
// leaseholder (or owner-left), never from lease-lost.
func releaseLease(ctx context.Context, _ ...any) error {
	machineOf(ctx).release(ctx)
	return nil
}

// serveUntilDrained keeps a server whose own client has left running
// until no session remains, and decides at once if none does.
func serveUntilDrained(ctx context.Context, _ ...any) error {
	m := machineOf(ctx)
	if m.sessions <= 0 {
		m.fire(ctx, SessionsChanged)
		return nil
	}
	m.log.Info("serving until the last session ends",
		zap.Int("sessions", m.sessions), zap.Bool("client_left", m.clientLeft))
	return nil
}

// handOverOrDrain hands a lease-lost server's own client over at once, if
// it is here: the server drains its other sessions without the machine.
// Without its client, the process serves until they end.
func handOverOrDrain(ctx context.Context, args ...any) error {
	m := machineOf(ctx)
	if m.clientLeft {
		return serveUntilDrained(ctx, args...)
	}
	m.fire(ctx, HandOver)
	return nil
}

// handOver keeps the lease-lost server's own client's session for the
// election that follows, which may attach it anywhere: every client of the
// checkout ends on one board (convergence). The server ends with its last
// other session, and its count is the machine's no more. The lease is not
// touched (R6).
func handOver(ctx context.Context, _ ...any) error {
	m := machineOf(ctx)
	m.failure = "this server lost its lease; handing its own client over to the current server"
	m.shutDown(ctx, "handing the client of the lease-lost server over", m.cfg.Server.HandOver)
	m.sessions = 0
	return nil
}

// loseLease turns the server, irreversibly, into one that serves only the
// sessions it has.
func loseLease(ctx context.Context, _ ...any) error {
	m := machineOf(ctx)
	m.cfg.Server.LoseLease(m.lost) // first: once the line is logged, it is true
	m.warned = ""                  // it shared the client: a detour through alone now is a new one
	then := "serving the sessions it has and ending with them"
	if !m.clientLeft {
		then = "its own client moves to the current server, and it serves its other sessions until they end"
	}
	m.log.Warn("the lease is no longer this server's: "+m.lost+"; "+then,
		zap.String("lease", m.cfg.LeasePath), zap.String("reason", m.lost))
	return nil
}

// Attached.

// attach bridges the client to the live server just found.
func attach(ctx context.Context, _ ...any) error {
	m := machineOf(ctx)
	m.log.Log(m.triesLevel(), "attaching to the shared server", zap.String("url", m.obs.URL))
	m.retryWait, m.lastTry = 0, time.Time{} // tries from alone start over; what was warned of stands until the bridge served (handle)
	m.cfg.Bridge.Attach(m.runCtx, m.obs)
	return nil
}

// detach stops the bridge.
func detach(ctx context.Context, _ ...any) error {
	machineOf(ctx).cfg.Bridge.Stop()
	return nil
}

// Exited.

// finish stops what still runs and completes Run.
func finish(ctx context.Context, _ ...any) error {
	m := machineOf(ctx)
	t, _ := stateless.GetTransition(ctx).Trigger.(Trigger)
	m.stopServer(ctx)
	m.outcome = endingOf(t, m.signal, m.failure, m.obs.URL)
	if t == LeaseLive { // a headless process found a server: nothing to do
		m.log.Info("a shared server for this checkout is already running at "+m.obs.URL+"; not starting a second one", zap.String("url", m.obs.URL))
	}
	return nil
}

// Machine-wide hooks.

// logTransition logs every change of state once, between the old state's
// exit actions and the new one's entry actions, and tells Config.OnTransition.
func logTransition(ctx context.Context, st stateless.Transition) {
	m := machineOf(ctx)
	tr := Transition{From: st.Source.(State), To: st.Destination.(State), Trigger: st.Trigger.(Trigger)}
	tr.Rule = m.model.ruleFor(tr.From, tr.Trigger, tr.To)
	level := zap.InfoLevel
	if tr.From == Alone && tr.To == Attached || tr.From == Attached && tr.To == Alone {
		level = m.triesLevel()
	}
	m.log.Log(level, "transition", zap.String("from", string(tr.From)), zap.String("to", string(tr.To)),
		zap.String("trigger", string(tr.Trigger)), zap.String("rule", string(tr.Rule)))
	if m.cfg.OnTransition != nil {
		m.cfg.OnTransition(tr)
	}
}

// logUnhandled logs a fact nobody expected in the current state, and goes
// on. The state is not a field: cmd's logger puts it on every line.
func logUnhandled(ctx context.Context, _ stateless.State, t stateless.Trigger, unmet []string) error {
	machineOf(ctx).log.Warn("unhandled trigger", zap.String("trigger", fmt.Sprint(t)), zap.Strings("unmet_guards", unmet))
	return nil
}

// Helpers shared by actions and Run.

// startElection arms the election bound, makes the first attempt and
// watches the lease.
func (m *Machine) startElection() {
	m.obs = Observation{}
	m.busySince = time.Time{}
	m.waitingOn = ""
	now := time.Now()
	m.boundEnds = now.Add(m.cfg.ElectionBound)
	m.bound = time.NewTimer(m.boundEnds.Sub(now))
	m.startAttempt()
	m.watchLease() // after: a live lease is attached to without waiting for the watch (B1)
}

// watchLease relays the lease's changes as LeaseChanged until the election
// ends.
func (m *Machine) watchLease() {
	wctx, cancel := context.WithCancel(m.runCtx)
	changes, err := m.cfg.Election.Watch(wctx)
	if err != nil {
		cancel()
		m.log.Debug("the lease is not watched; a waiting election polls", zap.Error(err))
		return
	}
	m.unwatch = cancel
	m.wg.Go(func() {
		for range changes {
			m.LeaseChanged()
		}
	})
}

// startAttempt ends any wait and runs one Attempt on its own goroutine.
func (m *Machine) startAttempt() { m.attemptAfter(nil) }

// attemptAfter starts an attempt on a goroutine of its own, after first
// (when not nil), whose observation, if it gives one, is the attempt's.
func (m *Machine) attemptAfter(first func(context.Context) *Observation) {
	if m.poll != nil {
		m.poll.Stop()
		m.poll = nil
	}
	actx, cancel := context.WithCancel(m.runCtx)
	m.nextAttempt++
	m.attempt, m.cancelAttempt = m.nextAttempt, cancel
	id, el := m.attempt, m.cfg.Election
	m.wg.Go(func() {
		if first != nil {
			if obs := first(actx); obs != nil {
				m.inbox.post(event{attempt: id, obs: *obs})
				return
			}
		}
		m.inbox.post(event{attempt: id, obs: el.Attempt(actx)})
	})
}

// stopElection ends the lease watch, cancels the attempt in flight, whose
// result will then be dropped, and disarms both timers.
func (m *Machine) stopElection() {
	if m.unwatch != nil {
		m.unwatch()
		m.unwatch = nil
	}
	if m.attempt != 0 {
		m.cancelAttempt()
		m.attempt = 0
	}
	for _, t := range []**time.Timer{&m.bound, &m.poll, &m.retry} {
		if *t != nil {
			(*t).Stop()
			*t = nil
		}
	}
}

// shared notes that the client is shared again: a later detour through
// alone starts its tries from the shortest wait.
func (m *Machine) shared() {
	m.retryWait, m.lastTry, m.stillWhy, m.warned = 0, time.Time{}, "", ""
}

// release stops the server, then removes the lease if it is still ours:
// the calls the server answered are in the shared state before a
// successor can load it.
func (m *Machine) release(ctx context.Context) {
	m.stopServer(ctx)
	if err := m.cfg.Election.Release(context.WithoutCancel(ctx)); err != nil {
		m.log.Warn("releasing the lease", zap.String("lease", m.cfg.LeasePath), zap.Error(err))
	}
}

// stopServer stops the server if one was started, within Config.StopGrace.
func (m *Machine) stopServer(ctx context.Context) {
	if m.serverActive {
		m.shutDown(ctx, "stopping the shared server", m.cfg.Server.Stop)
	}
}

// shutDown ends the server by stop (Server.Stop or HandOver) within
// Config.StopGrace, and logs what as its failure.
func (m *Machine) shutDown(ctx context.Context, what string, stop func(context.Context) error) {
	m.serverActive = false
	m.cancelStart()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.cfg.StopGrace)
	defer cancel()
	if err := stop(sctx); err != nil {
		m.log.Warn(what, zap.Error(err))
	}
}
