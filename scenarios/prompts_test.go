package scenarios

// The layer's prompts reach a host as MCP prompts — listed with their
// arguments, rendered with the values given, refused without a required
// one, completed from their suggestions — through a bridge, to mcp-go's
// own client; and the checkout is called what its manifest calls it.

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

func TestPromptsReachAHostThroughABridge(t *testing.T) {
	dir := checkout(t)
	manifest := filepath.Join(dir, ".ai/manifest.yaml")
	data, _ := os.ReadFile(manifest)
	if err := os.WriteFile(manifest, []byte(strings.Replace(string(data), "name: example", "name: payments-service", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	layerEdited(t, dir)
	a := shared(t, dir)
	if instructions := initialize(t, a, "claude-code"); !strings.Contains(instructions, `the checkout "payments-service"`) {
		t.Fatalf("the leaseholder's instructions:\n%s", instructions)
	}
	serverURL(t, a)

	c, res := independentClient(t, dir)
	if !strings.Contains(res.Instructions, "You are peer p2") || res.Capabilities.Prompts == nil ||
		!res.Capabilities.Prompts.ListChanged || res.Capabilities.Completions == nil {
		t.Fatalf("initialize through the bridge: %+v", res)
	}

	list, err := c.ListPrompts(ctx(t), mcp.ListPromptsRequest{})
	if err != nil || len(list.Prompts) != 1 {
		t.Fatalf("prompts/list: %+v %v", list, err)
	}
	p := list.Prompts[0]
	if p.Name != "review" || p.Title != "Review a change" || len(p.Arguments) != 2 ||
		p.Arguments[0].Name != "change" || !p.Arguments[0].Required || p.Arguments[1].Name != "focus" || p.Arguments[1].Required {
		t.Fatalf("the review prompt: %+v", p)
	}

	get := mcp.GetPromptRequest{}
	get.Params.Name = "review"
	get.Params.Arguments = map[string]string{"change": "HEAD~2..HEAD", "focus": "tests"}
	got, err := c.GetPrompt(ctx(t), get)
	if err != nil || len(got.Messages) != 1 || got.Messages[0].Role != mcp.RoleUser {
		t.Fatalf("prompts/get: %+v %v", got, err)
	}
	if text := mcp.GetTextFromContent(got.Messages[0].Content); !strings.HasPrefix(text, "Review HEAD~2..HEAD. Read its whole diff") ||
		!strings.HasSuffix(text, "Extra attention, if named here: tests") {
		t.Fatalf("the prompt's text:\n%s", text)
	}

	get.Params.Arguments = map[string]string{"focus": "tests"}
	if _, err := c.GetPrompt(ctx(t), get); !errors.Is(err, mcp.ErrInvalidParams) || !strings.Contains(err.Error(), "prompt 'review': argument 'change' is required") {
		t.Fatalf("without its required argument: %v", err)
	}
	get.Params.Name = "nope"
	if _, err := c.GetPrompt(ctx(t), get); !errors.Is(err, mcp.ErrInvalidParams) || !strings.Contains(err.Error(), "prompt 'nope' not found") {
		t.Fatalf("an unknown prompt: %v", err)
	}

	complete := mcp.CompleteRequest{}
	complete.Params.Ref = mcp.PromptReference{Type: "ref/prompt", Name: "review"}
	complete.Params.Argument = mcp.CompleteArgument{Name: "focus", Value: "d"}
	done, err := c.Complete(ctx(t), complete)
	if err != nil || strings.Join(done.Completion.Values, ",") != "duplication,docs" {
		t.Fatalf("completion/complete: %+v %v", done, err)
	}

	call := mcp.CallToolRequest{}
	call.Params.Name = "majordomus_repository"
	repo, err := c.CallTool(ctx(t), call)
	if err != nil || repo.IsError || !strings.Contains(mcp.GetTextFromContent(repo.Content[0]), `"name":"payments-service"`) {
		t.Fatalf("majordomus_repository through the bridge: %+v %v", repo, err)
	}
}

// A prompt whose text, the values given filled in, would be over its bound
// (layer.MaxPromptBytes) is refused as the request's fault, -32602, as a
// missing required argument is, never -32603, which says the server
// failed; with the same bytes from a leaseholder's own session, a bridged
// one and a standalone one, each serving on.
func TestAPromptTooLargeWithTheValuesGivenIsInvalidParams(t *testing.T) {
	dir := checkout(t)
	editReviewPrompt(t, dir, strings.Repeat("{{change}}", 100)+"\n")
	leaseholder := shared(t, dir)
	initialize(t, leaseholder, "claude-code")
	serverURL(t, leaseholder)
	bridged := shared(t, dir)
	initialize(t, bridged, "codex")
	attached(t, bridged)
	standalone := start(t, dir, "--standalone")
	initialize(t, standalone, "cursor")

	large := map[string]any{"name": "review", "arguments": map[string]any{"change": strings.Repeat("x", 100<<10)}} // 100 × 100 KiB
	want := `{"code":-32602,"message":"prompt 'review' is too large with the values given: its text would be over 8388608 bytes"}`
	for _, c := range []mode{{"leaseholder", leaseholder}, {"bridged", bridged}, {"standalone", standalone}} {
		r, err := c.p.Call(ctx(t), "prompts/get", large)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got, _ := json.Marshal(r.Error); string(got) != want {
			t.Errorf("%s answered %s %s; want %s", c.name, r.Result, got, want)
		}
		if r, err := c.p.Call(ctx(t), "prompts/get", map[string]any{"name": "review", "arguments": map[string]any{"change": "HEAD"}}); err != nil || r.Error != nil {
			t.Fatalf("%s after the refusal: %v %v", c.name, err, r.Error)
		}
	}
}
