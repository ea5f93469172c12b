package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// directClient speaks MCP streamable HTTP straight to a server's /mcp with
// one keep-alive connection: the baseline that a bridge is compared with.
type directClient struct {
	url     string // <server>/mcp
	auth    string // the Authorization header's value
	hc      *http.Client
	session string
	next    int
	fresh   bool // a new connection for every request, as the bridge does
	// modern is the client's name when it speaks 2026-07-28: no session,
	// _meta in every request, the revision's headers on every POST.
	modern string
	header http.Header // the current POST's revision headers
}

func newDirectClient(lh *leaseProc) *directClient {
	tr := &http.Transport{
		Proxy:               nil, // loopback only, whatever the environment says
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     time.Minute,
	}
	return &directClient{url: lh.url + "/mcp", auth: lh.authorization, hc: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

// initialize opens a session and sends notifications/initialized.
func (d *directClient) initialize(ctx context.Context, client string) error {
	if _, err := d.call(ctx, "initialize", initParams(client)); err != nil {
		return err
	}
	if d.session == "" {
		return fmt.Errorf("POST %s initialize: no Mcp-Session-Id in the answer", d.url)
	}
	if _, err := d.post(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), 0); err != nil {
		return err
	}
	_, err := d.call(ctx, "tools/list", map[string]any{}) // as hosts do
	return err
}

// discover opens a 2026-07-28 client, named client: server/discover, then
// tools/list as hosts do.
func (d *directClient) discover(ctx context.Context, client string) error {
	d.modern = client
	if _, err := d.call(ctx, "server/discover", nil); err != nil {
		return err
	}
	_, err := d.call(ctx, "tools/list", nil)
	return err
}

// tool calls a tool and fails on a tool error result.
func (d *directClient) tool(ctx context.Context, name string, args map[string]any) (json.RawMessage, error) {
	res, err := d.call(ctx, "tools/call", toolParams(name, args))
	if err != nil {
		return nil, err
	}
	return res, toolError(name, res)
}

// call POSTs one request and returns its result.
func (d *directClient) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	d.next++
	d.header = nil
	if d.modern != "" {
		p, _ := params.(map[string]any)
		params = withModernMeta(d.modern, p)
		d.header = http.Header{"Mcp-Protocol-Version": {modernRevision}, "Mcp-Method": {method}}
		if name, _ := p["name"].(string); name != "" {
			d.header.Set("Mcp-Name", name)
		}
	}
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": d.next, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	f, err := d.post(ctx, b, d.next)
	if err != nil {
		return nil, fmt.Errorf("POST %s %s: %w", d.url, method, err)
	}
	if f.Error != nil {
		return nil, fmt.Errorf("POST %s %s answered an error: %s", d.url, method, f.Error)
	}
	return f.Result, nil
}

// post sends one message; for a request (id > 0) it reads the answer from
// a JSON body or from an event stream, and drains the body so that the
// connection is reused.
func (d *directClient) post(ctx context.Context, body []byte, id int) (frame, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.url, bytes.NewReader(body))
	if err != nil {
		return frame{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", protocol)
	req.Header.Set("Authorization", d.auth)
	for k, v := range d.header {
		req.Header[k] = v
	}
	if d.session != "" {
		req.Header.Set("Mcp-Session-Id", d.session)
	}
	req.Close = d.fresh
	resp, err := d.hc.Do(req)
	if err != nil {
		return frame{}, err
	}
	defer func() {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
	}()
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		d.session = sid
	}
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return frame{}, fmt.Errorf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(msg))
	}
	if id == 0 {
		return frame{}, nil
	}
	want := fmt.Sprint(id)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return answerInStream(resp.Body, want)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return frame{}, err
	}
	var f frame
	if err := json.Unmarshal(raw, &f); err != nil || string(f.ID) != want {
		return frame{}, fmt.Errorf("the answer is not the response to request %s: %.200s", want, raw)
	}
	return f, nil
}

// answerInStream reads server-sent events until the response with id want.
func answerInStream(r io.Reader, want string) (frame, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var data []byte
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) > 0 {
			if rest, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				data = append(data, bytes.TrimPrefix(rest, []byte(" "))...)
			}
			continue
		}
		var f frame
		if json.Unmarshal(data, &f) == nil && f.Method == "" && string(f.ID) == want {
			return f, nil
		}
		data = data[:0]
	}
	if err := sc.Err(); err != nil {
		return frame{}, err
	}
	return frame{}, fmt.Errorf("the event stream ended without the response to request %s", want)
}

// close ends the session (DELETE) and the connections.
func (d *directClient) close() {
	if d.session != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if req, err := http.NewRequestWithContext(ctx, http.MethodDelete, d.url, nil); err == nil {
			req.Header.Set("Mcp-Session-Id", d.session)
			req.Header.Set("Mcp-Protocol-Version", protocol)
			req.Header.Set("Authorization", d.auth)
			if resp, err := d.hc.Do(req); err == nil {
				resp.Body.Close()
			}
		}
	}
	d.hc.CloseIdleConnections()
}
