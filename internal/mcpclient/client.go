// Package mcpclient drives a majordomus-mcp process the way an MCP host
// does: it spawns the binary with real pipes, writes newline-delimited
// JSON-RPC to its stdin and reads its stdout and stderr. The demo and the
// scenarios use it; it is a test client, not part of the product.
//
// Every stdout line is kept (Frames) so that a test can prove stdout held
// nothing but protocol; every stderr line is kept (Logs) so that a test can
// wait for a log line instead of sleeping.
package mcpclient

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// Response is one JSON-RPC answer.
type Response struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *RPCError       `json:"error,omitempty"`
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("%d: %s", e.Code, e.Message) }

// Process is one spawned majordomus-mcp and what it has said so far.
type Process struct {
	Cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every new line or exit
	frames   [][]byte
	answers  map[string]Response // the first answer to each request id, read once as it came
	logs     []string
	nextID   int
	exited   bool
	waitErr  error
	writeMux sync.Mutex
}

// Start spawns bin with args, in dir, with env (nil = the parent's).
func Start(bin string, args []string, dir string, env []string) (*Process, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	return StartCmd(cmd)
}

// StartCmd spawns a prepared command (for instance one that runs as another
// user); its stdin, stdout and stderr must be unset.
func StartCmd(cmd *exec.Cmd) (*Process, error) { return start(cmd, true) }

// StartOnSockets is StartCmd with a socket for stdin and another for
// stdout, as MCP hosts built on Node give their child (where the system
// has socket pairs).
func StartOnSockets(cmd *exec.Cmd) (*Process, error) { return startOnSockets(cmd, true) }

// StartUnread spawns a prepared command as StartCmd does (on sockets:
// StartOnSockets), but leaves its stdout to the caller, who reads it in
// the goroutine that waits for an answer (the bench's timed loops, which
// a hand-off between goroutines would slow): Frames stays empty; the logs
// and the exit are kept. The stdout returned takes deadlines.
func StartUnread(cmd *exec.Cmd, sockets bool) (*Process, *os.File, error) {
	begin := start
	if sockets {
		begin = startOnSockets
	}
	p, err := begin(cmd, false)
	if err != nil {
		return nil, nil, err
	}
	stdout, ok := p.stdout.(*os.File)
	if !ok {
		p.Kill(context.Background())
		return nil, nil, errors.New("the stdout pipe is not a file")
	}
	return p, stdout, nil
}

func startOnSockets(cmd *exec.Cmd, readStdout bool) (*Process, error) {
	stdin, childIn, err := socketPair()
	if err != nil {
		return nil, err
	}
	stdout, childOut, err := socketPair()
	if err != nil {
		stdin.Close()
		childIn.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = childIn, childOut
	p, err := startWith(cmd, stdin, stdout, readStdout)
	childIn.Close() // the child holds them now
	childOut.Close()
	if err != nil {
		stdin.Close()
		stdout.Close()
	}
	return p, err
}

func start(cmd *exec.Cmd, readStdout bool) (*Process, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	return startWith(cmd, stdin, stdout, readStdout)
}

// startWith starts cmd, whose stdin and stdout are the other ends of
// stdin and stdout.
func startWith(cmd *exec.Cmd, stdin io.WriteCloser, stdout io.ReadCloser, readStdout bool) (*Process, error) {
	bin := cmd.Path
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	p := &Process{Cmd: cmd, stdin: stdin, stdout: stdout, changed: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	var readers sync.WaitGroup
	if readStdout {
		readers.Go(func() { p.read(stdout, true) })
	}
	readers.Go(func() { p.read(stderr, false) })
	go func() {
		readers.Wait()
		err := cmd.Wait()
		stdout.Close() // a pipe's end is closed already; a socket's is not
		p.mu.Lock()
		p.exited, p.waitErr = true, err
		p.notifyLocked()
		p.mu.Unlock()
	}()
	return p, nil
}

func (p *Process) read(r io.Reader, isStdout bool) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		var r Response
		answer := isStdout && json.Unmarshal([]byte(line), &r) == nil && r.ID != nil && (r.Result != nil || r.Error != nil)
		p.mu.Lock()
		if isStdout {
			p.frames = append(p.frames, []byte(line))
			if answer {
				p.noteAnswer(r)
			}
		} else {
			p.logs = append(p.logs, line)
		}
		p.notifyLocked()
		p.mu.Unlock()
	}
}

// noteAnswer remembers r, an answer, when it is the first to its request,
// so that awaiting one does not read every frame again (p.mu held).
func (p *Process) noteAnswer(r Response) {
	if p.answers == nil {
		p.answers = map[string]Response{}
	}
	if _, seen := p.answers[string(r.ID)]; !seen {
		p.answers[string(r.ID)] = r
	}
}

func (p *Process) notifyLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// await calls check under the lock each time something happens, until it
// returns true or ctx ends.
func (p *Process) await(ctx context.Context, what string, check func() bool) error {
	for {
		p.mu.Lock()
		ok, changed := check(), p.changed
		p.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		}
	}
}

// SendLine writes one raw line (a newline is added).
func (p *Process) SendLine(line string) error {
	p.writeMux.Lock()
	defer p.writeMux.Unlock()
	_, err := io.WriteString(p.stdin, line+"\n")
	return err
}

// Notify sends a notification.
func (p *Process) Notify(method string, params any) error {
	return p.sendMessage(map[string]any{"jsonrpc": "2.0", "method": method}, params)
}

// Send sends a request with a fresh numeric id and returns the id.
func (p *Process) Send(method string, params any) (json.RawMessage, error) {
	p.mu.Lock()
	p.nextID++
	id := json.RawMessage(fmt.Sprint(p.nextID))
	p.mu.Unlock()
	return id, p.sendMessage(map[string]any{"jsonrpc": "2.0", "id": id, "method": method}, params)
}

// sendMessage sends msg, with params unless they are nil.
func (p *Process) sendMessage(msg map[string]any, params any) error {
	if params != nil {
		msg["params"] = params
	}
	b, _ := json.Marshal(msg)
	return p.SendLine(string(b))
}

// Call sends a request and waits for its answer.
func (p *Process) Call(ctx context.Context, method string, params any) (Response, error) {
	id, err := p.Send(method, params)
	if err != nil {
		return Response{}, err
	}
	return p.Await(ctx, id)
}

// Await waits for the answer to the request with this id.
func (p *Process) Await(ctx context.Context, id json.RawMessage) (Response, error) {
	var found Response
	err := p.await(ctx, "the answer to request "+string(id), func() bool {
		r, ok := p.answers[string(id)]
		found = r
		return ok || p.exited
	})
	if err == nil && found.ID == nil {
		err = fmt.Errorf("the process exited before answering request %s", id)
	}
	return found, err
}

// CallTool calls a tool and decodes its structured content into out (when
// out is not nil). It returns the tool's isError flag and its text.
func (p *Process) CallTool(ctx context.Context, name string, arguments map[string]any, out any) (isError bool, text string, err error) {
	return p.CallToolWithMeta(ctx, name, arguments, nil, out)
}

// CallToolWithMeta is CallTool with meta as the request's _meta, which is
// how a client of protocol revision 2026-07-28 says who it is on every
// request.
func (p *Process) CallToolWithMeta(ctx context.Context, name string, arguments, meta map[string]any, out any) (isError bool, text string, err error) {
	if arguments == nil {
		arguments = map[string]any{}
	}
	params := map[string]any{"name": name, "arguments": arguments}
	if meta != nil {
		params["_meta"] = meta
	}
	r, err := p.Call(ctx, "tools/call", params)
	if err != nil {
		return false, "", err
	}
	if r.Error != nil {
		return false, "", r.Error
	}
	var res struct {
		IsError           bool `json:"isError"`
		Content           []struct{ Text string }
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil {
		return false, "", err
	}
	if len(res.Content) > 0 {
		text = res.Content[0].Text
	}
	if out != nil && !res.IsError {
		if err := json.Unmarshal(res.StructuredContent, out); err != nil {
			return false, text, fmt.Errorf("decoding %s: %w", name, err)
		}
	}
	return res.IsError, text, nil
}

// Initialize performs the handshake and returns the initialize result.
func (p *Process) Initialize(ctx context.Context, client, protocol string) (InitializeResult, error) {
	r, err := p.Call(ctx, "initialize", map[string]any{
		"protocolVersion": protocol,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": client, "version": "1.2.3"},
	})
	if err != nil {
		return InitializeResult{}, err
	}
	if r.Error != nil {
		return InitializeResult{}, r.Error
	}
	var res InitializeResult
	if err := json.Unmarshal(r.Result, &res); err != nil {
		return res, err
	}
	return res, p.Notify("notifications/initialized", nil)
}

// InitializeResult is what a client reads from initialize.
type InitializeResult struct {
	ProtocolVersion string         `json:"protocolVersion"`
	Capabilities    map[string]any `json:"capabilities"`
	ServerInfo      struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"serverInfo"`
	Instructions string `json:"instructions"`
}

// Frames returns every stdout line so far.
func (p *Process) Frames() [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([][]byte(nil), p.frames...)
}

// Logs returns every stderr line so far.
func (p *Process) Logs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.logs...)
}

// CloseStdin ends the client's input, as a host does when it leaves.
func (p *Process) CloseStdin() error { return p.stdin.Close() }

// CloseStdout closes the reading end of the process's stdout, as a host
// that stops reading does; the process's next write fails.
func (p *Process) CloseStdout() error { return p.stdout.Close() }

// Signal sends sig to the process.
func (p *Process) Signal(sig syscall.Signal) error { return p.Cmd.Process.Signal(sig) }

// Exit is how a process ended.
type Exit struct {
	Code   int            // -1 when a signal ended it
	Signal syscall.Signal // 0 when it exited
}

// Wait waits for the process to end and says how.
func (p *Process) Wait(ctx context.Context) (Exit, error) {
	if err := p.await(ctx, "the process to exit", func() bool { return p.exited }); err != nil {
		return Exit{}, err
	}
	state := p.Cmd.ProcessState
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return Exit{Code: -1, Signal: ws.Signal()}, nil
	}
	if _, exited := errors.AsType[*exec.ExitError](p.waitErr); p.waitErr != nil && !exited {
		return Exit{}, p.waitErr
	}
	return Exit{Code: state.ExitCode()}, nil
}

// Kill ends the process at once (SIGKILL) and waits for it.
func (p *Process) Kill(ctx context.Context) {
	_ = p.Cmd.Process.Kill()
	_, _ = p.Wait(ctx)
}
