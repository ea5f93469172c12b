package surface

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// fleetTool is majordomus_fleet_inventory. It takes no parameters on
// purpose: an inventory rests on evidence the answering server gathers
// itself (the registry it reads, the processes it observes), and nothing a
// caller says could be evidence about the fleet that constrains it.
func (s *Surface) fleetTool() server.ServerTool {
	return server.ServerTool{Tool: mcp.NewTool("majordomus_fleet_inventory",
		mcp.WithDescription("Is exactly one server running for each configured profile of this checkout, all in one client cohort? "+
			"Answers from the runtime registry and the processes this server observes itself: running, missing, duplicate, unexpected, "+
			"stale, unregistered and draining members, cohort and revision spread, and mutation_gate_satisfied with the blocked reasons. "+
			"Read-only: it restarts, stops and writes nothing."),
		readOnly("Inventory the checkout's servers")), Handler: s.toolFleet}
}

func (s *Surface) toolFleet(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if err := argsOf(req).only(); err != nil {
		return refuse(err)
	}
	if s.cfg.Fleet == nil {
		return mcp.NewToolResultError("this process cannot take a fleet inventory: run `majordomus-mcp fleet` in the checkout"), nil
	}
	inv, err := s.cfg.Fleet(ctx)
	if err != nil {
		return mcp.NewToolResultErrorf("taking the fleet inventory: %v", err), nil
	}
	return answer(inv)
}
