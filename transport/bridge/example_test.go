package bridge_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/majordomus-mcp/majordomus-mcp/transport/bridge"
	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
	"github.com/majordomus-mcp/majordomus-mcp/transport/stdio"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// A bridge relays a stdio client to a shared server: here the server is
// a real HTTP server on loopback, and the client a pair of pipes, written
// and read as a host writes to a process's stdin and reads its stdout.
func ExampleBridge() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// The shared server: an MCP server with one tool, over streamable
	// HTTP on a free loopback port, let in with the lease's secret.
	mcpServer := server.NewMCPServer("example", "1.0.0")
	mcpServer.AddTool(mcp.NewTool("greet", mcp.WithString("name")),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("hello, " + req.GetString("name", "nobody")), nil
		})
	const key = "the lease's secret"
	ln, err := httpserver.Listen("127.0.0.1", 0, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httpserver.New(httpserver.Config{MCP: mcpServer, Secret: key})
	go func() { _ = srv.Serve(ln) }()
	defer func() { _ = srv.Shutdown(ctx) }()

	// The process's stdio, and the bridge that serves it.
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	out := wire.NewFrameWriter(stdoutW)
	br, err := bridge.New(ctx, bridge.Config{URL: httpserver.URLOf(ln.Addr()), Secret: key, Out: out, ProbeTimeout: 2 * time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	loopEnded := make(chan stdio.Ending, 1)
	loop := &stdio.Loop{In: stdinR, Out: out, Backend: br}
	go func() { loopEnded <- loop.Serve(ctx) }()

	// The host's side.
	lines := bufio.NewScanner(stdoutR)
	answer := func(id int) map[string]any { // the answer to request id; other frames are skipped
		for lines.Scan() {
			var frame map[string]any
			if json.Unmarshal(lines.Bytes(), &frame) == nil && frame["id"] == float64(id) {
				return frame
			}
		}
		return nil
	}
	send := func(frame string) { _, _ = io.WriteString(stdinW, frame+"\n") }

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}`)
	info := answer(1)["result"].(map[string]any)["serverInfo"].(map[string]any)
	fmt.Println("initialized with", info["name"])
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"name":"bridge"}}}`)
	content := answer(2)["result"].(map[string]any)["content"].([]any)
	fmt.Println(content[0].(map[string]any)["text"])

	// The host leaves: stdin ends the loop, and closing the bridge ends
	// its session on the server.
	_ = stdinW.Close()
	fmt.Println("the loop ended:", <-loopEnded)
	br.Close()
	_ = stdoutR.Close()
	fmt.Println("sessions left on the server:", srv.Sessions())
	// Output:
	// initialized with example
	// hello, bridge
	// the loop ended: input ended
	// sessions left on the server: 0
}
