package node

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"majordomus-mcp/transport"
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
	srv, err := n.load()
	if err != nil {
		n.unservable(fmt.Errorf("%s; and serving this client alone failed too: %w", reason, err))
		return err
	}
	local, err := transport.NewLocal(ctx, srv.surface.MCP, n.out, "stdio")
	if err != nil {
		n.unservable(err)
		return err
	}
	return n.serve(ctx, local, func(carried bool) bool {
		if carried {
			srv.surface.Notify(mcp.LoggingLevelWarning, "majordomus: cannot use the shared server ("+reason+"); this session is now served alone, without peers")
		}
		return true
	})
}
