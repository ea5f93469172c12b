package surface

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/majordomus-mcp/majordomus-mcp/internal/blank"
	"github.com/majordomus-mcp/majordomus-mcp/layer"
)

// The layer's objects of kind prompt are MCP prompts too. A prompt is named
// after its object's id; when several prompts share an id (versions of
// one prompt), each is named <id>@<version> instead, so that names stay
// unique and every version can be asked for.

// prompt is one prompt object under its prompt name.
type prompt struct {
	name string
	obj  layer.Object
}

// maxCompletions is the most values MCP lets a completion answer.
const maxCompletions = 100

// promptsOf names the prompt objects of ix, in URI order.
func promptsOf(ix *layer.Index) []prompt {
	if ix == nil {
		return nil
	}
	objs := ix.List(layer.KindPrompt, "")
	ids := map[string]int{}
	for _, o := range objs {
		ids[o.ID]++
	}
	out := make([]prompt, 0, len(objs))
	for _, o := range objs {
		name := o.ID
		if ids[o.ID] > 1 {
			name = strings.TrimPrefix(o.URI, layer.URIScheme+layer.KindPrompt+"/")
		}
		out = append(out, prompt{name: name, obj: o})
	}
	return out
}

// publishPrompts registers the prompts of ix and removes those of old that
// ix no longer has. mcp-go sends prompts/list_changed to every session on
// each registration and each removal, so nothing is registered when no
// prompt changed. A prompt in both indexes is replaced, never removed and
// added again, so it is never missing to a prompts/get meanwhile.
func (s *Surface) publishPrompts(old, ix *layer.Index) {
	now, before, changed := promptsOf(ix), promptsOf(old), layer.Changed(old, ix)
	was := make(map[string]string, len(before)) // name -> URI
	for _, p := range before {
		was[p.name] = p.obj.URI
	}
	byName := make(map[string]layer.Object, len(now))
	register := false
	entries := make([]server.ServerPrompt, 0, len(now))
	for _, p := range now {
		byName[p.name] = p.obj
		_, edited := slices.BinarySearch(changed, p.obj.URI)
		register = register || was[p.name] != p.obj.URI || edited
		entries = append(entries, server.ServerPrompt{Prompt: mcpPrompt(p), Handler: s.promptHandler(p)})
	}
	var gone []string
	for _, p := range before {
		if _, ok := byName[p.name]; !ok {
			gone = append(gone, p.name)
		}
	}
	s.prompts.Store(&byName)
	if register {
		s.MCP.AddPrompts(entries...)
	}
	if len(gone) > 0 {
		s.MCP.DeletePrompts(gone...)
	}
}

// mcpPrompt is what prompts/list says of p.
func mcpPrompt(p prompt) mcp.Prompt {
	out := mcp.Prompt{Name: p.name, Title: p.obj.Title, Description: p.obj.Description}
	for _, a := range p.obj.Arguments {
		out.Arguments = append(out.Arguments, mcp.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
	}
	return out
}

// promptHandler answers prompts/get of p: its body, the arguments filled
// in, as one user message. The transports refuse a request that leaves
// out a required argument before it gets here, and ask this handler
// first, so that what it refuses (values that make the text too large)
// is -32602 too (mcp-go answers any error of a handler with -32603); this
// check, with the same words, serves whoever calls the MCPServer directly.
func (s *Surface) promptHandler(p prompt) server.PromptHandlerFunc {
	return func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		for _, a := range p.obj.Arguments {
			if a.Required && blank.Is(req.Params.Arguments[a.Name]) {
				return nil, fmt.Errorf("prompt '%s': argument '%s' is required", p.name, a.Name)
			}
		}
		text, err := p.obj.Render(req.Params.Arguments)
		if errors.Is(err, layer.ErrPromptTooLarge) { // in the client's words, not the package's
			return nil, fmt.Errorf("prompt '%s' is too large with the values given: its text would be over %d bytes", p.name, layer.MaxPromptBytes)
		}
		if err != nil {
			return nil, fmt.Errorf("prompt '%s': %v", p.name, err)
		}
		return mcp.NewGetPromptResult(p.obj.Description, []mcp.PromptMessage{
			mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(text)),
		}), nil
	}
}

// promptCompleter completes a prompt argument from the suggestions its
// declaration lists: those starting with what the user typed, ignoring
// case, in the declared order. An unknown argument has none, nor has an
// unknown prompt here: the transports refuse a completion of one with
// -32602 before mcp-go sees it (wire.PromptRefusal).
type promptCompleter struct{ s *Surface }

func (c promptCompleter) CompletePromptArgument(_ context.Context, name string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	values := []string{}
	if byName := c.s.prompts.Load(); byName != nil {
		for _, a := range (*byName)[name].Arguments {
			if a.Name != arg.Name {
				continue
			}
			for _, v := range a.Suggestions {
				if strings.HasPrefix(strings.ToLower(v), strings.ToLower(arg.Value)) {
					values = append(values, v)
				}
			}
		}
	}
	out := &mcp.Completion{Values: values, Total: len(values)}
	if len(values) > maxCompletions {
		out.Values, out.HasMore = values[:maxCompletions], true
	}
	return out, nil
}
