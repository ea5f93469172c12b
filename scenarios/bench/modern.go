package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// A client of protocol revision 2026-07-28 has no session: it opens with
// server/discover and sends its revision, capabilities and identity in
// every request's _meta (and, over HTTP, the revision's headers). B2
// measures it too: a bridged stdio client against a keep-alive HTTP client
// straight to /mcp, both of that revision.

// modernRevision is the revision the modern rows speak.
const modernRevision = "2026-07-28"

// withModernMeta is params with a 2026-07-28 request's _meta.
func withModernMeta(client string, params map[string]any) map[string]any {
	return mcpclient.WithMeta(params, mcpclient.ModernMeta(client))
}

// modernPipe is a stdio client speaking 2026-07-28.
type modernPipe struct {
	c      *pipeClient
	client string
}

// discover opens the client as a 2026-07-28 host does, and lists the tools.
func (m modernPipe) discover(ctx context.Context) error {
	res, err := m.c.call(ctx, "server/discover", withModernMeta(m.client, nil))
	if err != nil {
		return err
	}
	var d struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	if json.Unmarshal(res, &d) != nil || len(d.SupportedVersions) == 0 || d.SupportedVersions[0] != modernRevision {
		return fmt.Errorf("server/discover answered %s", res)
	}
	_, err = m.c.call(ctx, "tools/list", withModernMeta(m.client, nil))
	return err
}

func (m modernPipe) tool(ctx context.Context, name string, args map[string]any) (jsonRaw, error) {
	res, err := m.c.call(ctx, "tools/call", withModernMeta(m.client, toolParams(name, args)))
	if err != nil {
		return nil, err
	}
	return res, toolError(name, res)
}
