package node

import (
	"context"
	"fmt"
)

// aloneServer is the machine's Standalone port: it serves the client in
// process, as --standalone would, when sharing failed.
type aloneServer struct {
	node *Node
}

// Serve serves the client alone. When even that is impossible (the layer
// cannot be served), nothing can serve the client: see node.unservable.
func (a *aloneServer) Serve(ctx context.Context, reason string) error {
	n := a.node
	n.setURL("")
	n.alone.Store(&reason) // before anything answers: the client is told why
	srv, err := n.load()
	if err != nil {
		n.unservable(fmt.Errorf("%s; and serving this client alone failed too: %w", reason, err))
		return err
	}
	local, fresh, err := n.inProcess(srv)
	if err != nil {
		n.unservable(err)
		return err
	}
	if !fresh {
		// Back from a try to share that did not take: the session served
		// alone before is still the client's.
		n.resume(local)
		return nil
	}
	// A carried session is told as a new one is: its replay says
	// notifications/initialized, which the surface answers with the notice.
	return n.serve(ctx, local, nil)
}
