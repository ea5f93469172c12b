package machine_test

import (
	"context"
	"fmt"

	"github.com/majordomus-mcp/majordomus-mcp/machine"
)

// A leaseholder whose own client leaves while another session is attached:
// it serves until that session ends too, then gives the lease back.
func Example() {
	entered := make(chan machine.State, 8)
	m, err := machine.New(machine.Config{
		Election:   &scriptedElection{found: []machine.Class{machine.ClassCorrupt, machine.ClassWon}},
		Server:     quietServer{},
		Bridge:     quietBridge{},
		Standalone: quietStandalone{},
		OnTransition: func(tr machine.Transition) {
			fmt.Printf("%s -> %s on %s (%s)\n", tr.From, tr.To, tr.Trigger, tr.Rule)
			entered <- tr.To
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	done := make(chan machine.Outcome)
	go func() { done <- m.Run(context.Background()) }()

	for <-entered != machine.Leaseholder {
	}
	m.SessionsChanged(1) // another client attached
	m.ClientLeft()       // this process's own client left
	m.SessionsChanged(0) // and so did the other one
	out := <-done
	fmt.Printf("exit %d: %s\n", out.Code, out.Reason)
	// Output:
	// electing -> leaseholder on lease-won (R7)
	// leaseholder -> owner-left on client-left (R5)
	// owner-left -> exited on sessions-changed (R5)
	// exit 0: the last session ended
}

// scriptedElection finds the given classes, one per attempt; the corrupt
// lease is taken over (an internal step, so not a transition) before the
// second attempt wins.
type scriptedElection struct{ found []machine.Class }

func (e *scriptedElection) Attempt(context.Context) machine.Observation {
	c := e.found[0]
	e.found = e.found[1:]
	return machine.Observation{Class: c, Reason: "not JSON"}
}

func (e *scriptedElection) TakeOver(context.Context, machine.Observation) (bool, error) {
	return true, nil
}
func (e *scriptedElection) Release(context.Context) error { return nil }

// Watch reports no change; its channel closes when the election ends.
func (e *scriptedElection) Watch(ctx context.Context) (<-chan struct{}, error) {
	out := make(chan struct{})
	context.AfterFunc(ctx, func() { close(out) })
	return out, nil
}

type quietServer struct{}

func (quietServer) Start(context.Context) error    { return nil }
func (quietServer) LoseLease(string)               {}
func (quietServer) Stop(context.Context) error     { return nil }
func (quietServer) HandOver(context.Context) error { return nil }

type quietBridge struct{}

func (quietBridge) Attach(context.Context, machine.Observation) {}
func (quietBridge) Stop()                                       {}

type quietStandalone struct{}

func (quietStandalone) Serve(context.Context, string) error { return nil }
