package node

import (
	"context"
	"fmt"

	"github.com/majordomus-mcp/majordomus-mcp/machine"
)

// aloneServer is the machine's Standalone port: it serves the client in
// process, as --standalone would, when sharing failed.
type aloneServer struct {
	node *Node
}

// Serve serves the client alone: in the session it was served alone in
// before (back from a try to share that did not take), else in a new one,
// a carried session replayed onto it (its notifications/initialized is
// answered with the notice that says why). When even that is impossible
// (the layer cannot be served), nothing can serve the client: see
// node.unservable.
func (a *aloneServer) Serve(ctx context.Context, reason string) error {
	n := a.node
	n.setURL("")
	if err := n.session.adopt(ctx, nil, how{as: machine.Alone, why: reason}); err != nil {
		n.unservable(fmt.Errorf("%s; and serving this client alone failed too: %w", reason, err))
		return err
	}
	return nil
}
