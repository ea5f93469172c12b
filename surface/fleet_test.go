package surface

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

func TestFleetInventoryTakesNoParametersAndAnswersWhatTheProcessGathers(t *testing.T) {
	f := newFixture(t)
	c := f.connect("claude-code")
	var list struct {
		Tools []mcp.Tool `json:"tools"`
	}
	mustDecode(t, c.rpc("tools/list", nil), &list)
	for _, tool := range list.Tools {
		if tool.Name == "majordomus_fleet_inventory" && len(tool.InputSchema.Properties) != 0 {
			t.Errorf("majordomus_fleet_inventory takes parameters: %+v", tool.InputSchema.Properties)
		}
	}

	if _, errText := c.tool("majordomus_fleet_inventory", nil); !strings.Contains(errText, "cannot take a fleet inventory") {
		t.Errorf("without an inventory source: %q", errText)
	}

	calls := 0
	f.s.cfg.Fleet = func(context.Context) (any, error) {
		calls++
		return map[string]any{"mutation_gate_satisfied": true, "mutations_performed": []string{}}, nil
	}
	got, errText := c.tool("majordomus_fleet_inventory", nil)
	var inv map[string]any
	if errText != "" || json.Unmarshal(got, &inv) != nil || inv["mutation_gate_satisfied"] != true || calls != 1 {
		t.Fatalf("the inventory: %s %q", got, errText)
	}
	if _, errText := c.tool("majordomus_fleet_inventory", map[string]any{"process": map[string]any{"pid": 1}}); !strings.Contains(errText, "process") || calls != 1 {
		t.Errorf("evidence from the caller was taken (calls %d): %q", calls, errText)
	}

	f.s.cfg.Fleet = func(context.Context) (any, error) { return nil, errors.New("boom") }
	if _, errText := c.tool("majordomus_fleet_inventory", nil); !strings.Contains(errText, "boom") {
		t.Errorf("a failing inventory: %q", errText)
	}
}
