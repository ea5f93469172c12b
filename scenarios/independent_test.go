package scenarios

// An MCP client that is not this project's code — mcp-go's own client,
// speaking stdio to a majordomus-mcp that bridges to a shared server —
// gets the whole surface.

import (
	"os"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

func TestAnIndependentClientWorksThroughABridge(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	url := serverURL(t, a)

	c, res := independentClient(t, dir)
	if res.ServerInfo.Name != "majordomus" || !strings.Contains(res.Instructions, url) || !strings.Contains(res.Instructions, "You are peer p2") {
		t.Fatalf("initialize through the bridge: %+v", res)
	}
	tools, err := c.ListTools(ctx(t), mcp.ListToolsRequest{})
	if err != nil || len(tools.Tools) != 9 {
		t.Fatalf("tools/list: %v %v", tools, err)
	}
	call := mcp.CallToolRequest{}
	call.Params.Name = "majordomus_search"
	call.Params.Arguments = map[string]any{"query": "commits"}
	got, err := c.CallTool(ctx(t), call)
	if err != nil || got.IsError || !strings.Contains(mcp.GetTextFromContent(got.Content[0]), "project.small-commits") {
		t.Fatalf("tools/call: %+v %v", got, err)
	}
	resources, err := c.ListResources(ctx(t), mcp.ListResourcesRequest{})
	if err != nil || len(resources.Resources) != 8 {
		t.Fatalf("resources/list: %v %v", resources, err)
	}
	read := mcp.ReadResourceRequest{}
	read.Params.URI = "majordomus://repository"
	contents, err := c.ReadResource(ctx(t), read)
	if err != nil || len(contents.Contents) != 1 {
		t.Fatalf("resources/read: %v %v", contents, err)
	}
	//lint:ignore SA1019 this session speaks 2025-11-25, whose ping the server must answer
	if err := c.Ping(ctx(t)); err != nil {
		t.Fatal(err)
	}

	board := peersOf(t, a)
	if board.Count != 2 || board.Peers[1].Client.Name != "mcp-go-client" || board.Peers[1].Transport != "http" {
		t.Fatalf("the leaseholder's board: %+v", board)
	}
}

// independentClient starts majordomus-mcp in dir under mcp-go's own stdio
// client, named mcp-go-client, and initializes it; it is closed when the
// test ends.
func independentClient(t *testing.T, dir string) (*client.Client, *mcp.InitializeResult) {
	t.Helper()
	return revisionClient(t, dir, "2025-11-25")
}

// revisionClient is independentClient speaking revision version: a legacy
// one pins the initialize handshake; 2026-07-28 probes server/discover
// first, as the official SDKs do.
func revisionClient(t *testing.T, dir, version string, args ...string) (*client.Client, *mcp.InitializeResult) {
	t.Helper()
	tr := transport.NewStdio(bin, os.Environ(), append([]string{"--repo", dir, "--http-port", "0"}, args...)...)
	if err := tr.Start(ctx(t)); err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, client.WithProtocolVersion(version))
	t.Cleanup(func() { c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = version
	init.Params.ClientInfo = mcp.Implementation{Name: "mcp-go-client", Version: "1.2.1"}
	res, err := c.Initialize(ctx(t), init)
	if err != nil {
		t.Fatal(err)
	}
	return c, res
}
