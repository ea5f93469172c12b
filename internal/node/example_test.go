package node_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/example"
	"github.com/majordomus-mcp/majordomus-mcp/internal/node"
	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
	"github.com/majordomus-mcp/majordomus-mcp/layer"
	"github.com/majordomus-mcp/majordomus-mcp/machine"
)

// Two processes of one checkout, as two MCP hosts start them: the first
// finds no lease, takes it and runs the checkout's shared server, serving
// its own client in process; the second finds that server live and
// attaches, bridging its client to it. Both clients are on one board.
// When the attached client leaves, its process ends; when the
// leaseholder's own client leaves, it serves until no session is left,
// then gives the lease back.
func Example_twoNodesWhereOneAttaches() {
	dir, err := os.MkdirTemp("", "majordomus-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer testtemp.RemoveAll(dir)
	root := filepath.Join(dir, "checkout")
	if err := example.WriteCheckout(root); err != nil {
		fmt.Println(err)
		return
	}
	manifest, err := layer.LoadManifest(root)
	if err != nil {
		fmt.Println(err)
		return
	}
	// Each process reads the checkout for itself; the runtime registry
	// is the example's own, not the user's.
	checkout := func() *node.Checkout {
		return &node.Checkout{Root: root, Manifest: manifest, Profile: "default",
			Registry: filepath.Join(dir, "registry.db"), Logger: zap.NewNop()}
	}

	a, err := startProcess("a", checkout())
	if err != nil {
		fmt.Println(err)
		return
	}
	a.await(machine.Leaseholder)
	b, err := startProcess("b", checkout())
	if err != nil {
		fmt.Println(err)
		return
	}
	b.await(machine.Attached)

	a.initialize()
	b.initialize()
	fmt.Println("the board b's client sees:", b.board())

	b.leave()
	fmt.Println("b:", b.end())
	a.leave()
	fmt.Println("a:", a.end())
	_, err = os.Lstat(filepath.Join(root, ".ai", "local", "state", "mcp", "server.json"))
	fmt.Println("lease removed:", os.IsNotExist(err))
	// Output:
	// a: electing -> leaseholder on lease-won
	// b: electing -> attached on lease-live
	// the board b's client sees: [a b]
	// b: attached -> exited on client-left; exit 0
	// a: leaseholder -> owner-left on client-left
	// a: owner-left -> exited on sessions-changed; exit 0
	// lease removed: true
}

// process is one node with an MCP client on its stdio.
type process struct {
	name        string
	in          *io.PipeWriter
	frames      chan []byte // what the node writes to its stdout, read as it comes
	transitions chan machine.Transition
	done        chan machine.Outcome
	nextID      int
}

func startProcess(name string, co *node.Checkout) (*process, error) {
	stdin, in := io.Pipe()
	out, stdout := io.Pipe()
	p := &process{name: name, in: in, frames: make(chan []byte, 64),
		transitions: make(chan machine.Transition, 16), done: make(chan machine.Outcome, 1)}
	go func() {
		defer close(p.frames)
		lines := bufio.NewScanner(out)
		lines.Buffer(nil, 1<<20)
		for lines.Scan() {
			p.frames <- slices.Clone(lines.Bytes())
		}
	}()
	n, err := node.New(node.Config{
		Checkout: co,
		HTTPHost: "127.0.0.1",
		Stdin:    stdin,
		Stdout:   stdout,
		Logger:   zap.NewNop(),
		OnTransition: func(t machine.Transition) {
			p.transitions <- t
		},
	})
	if err != nil {
		return nil, err
	}
	go func() {
		outcome, _ := n.Run(context.Background())
		stdout.Close()
		p.done <- outcome
	}()
	return p, nil
}

// await prints the transitions until the process is in s.
func (p *process) await(s machine.State) {
	for t := range p.transitions {
		fmt.Printf("%s: %s -> %s on %s\n", p.name, t.From, t.To, t.Trigger)
		if t.To == s {
			return
		}
	}
}

// call sends a request and returns the result of its answer.
func (p *process) call(method string, params any) json.RawMessage {
	p.nextID++
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": p.nextID, "method": method, "params": params})
	if _, err := p.in.Write(append(req, '\n')); err != nil {
		return nil
	}
	for frame := range p.frames {
		var answer struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(frame, &answer) == nil && answer.ID != nil && *answer.ID == p.nextID {
			return answer.Result
		}
	}
	return nil
}

// initialize opens the client's session under the process's name.
func (p *process) initialize() {
	p.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": p.name, "version": "1"}})
	note, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	_, _ = p.in.Write(append(note, '\n'))
}

// board is the names of the clients majordomus_peers lists.
func (p *process) board() []string {
	var result struct {
		Content []struct{ Text string } `json:"content"`
	}
	_ = json.Unmarshal(p.call("tools/call", map[string]any{"name": "majordomus_peers", "arguments": map[string]any{}}), &result)
	var board struct {
		Peers []struct {
			Client struct{ Name string } `json:"client"`
		} `json:"peers"`
	}
	if len(result.Content) > 0 {
		_ = json.Unmarshal([]byte(result.Content[0].Text), &board)
	}
	var names []string
	for _, peer := range board.Peers {
		names = append(names, peer.Client.Name)
	}
	slices.Sort(names)
	return names
}

// leave is the client closing the process's stdin, as a host does.
func (p *process) leave() { p.in.Close() }

// end prints the transitions to the end and says how the process ended.
func (p *process) end() string {
	outcome := <-p.done
	for range p.frames { // notifications nobody asked to see
	}
	close(p.transitions)
	var last machine.Transition
	for t := range p.transitions {
		last = t
		if t.To != machine.Exited {
			fmt.Printf("%s: %s -> %s on %s\n", p.name, t.From, t.To, t.Trigger)
		}
	}
	return fmt.Sprintf("%s -> %s on %s; exit %d", last.From, last.To, last.Trigger, outcome.Code)
}
