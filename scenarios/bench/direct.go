package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// directClient speaks MCP streamable HTTP straight to a server's /mcp with
// one keep-alive connection: the baseline that a bridge is compared with.
type directClient struct {
	url     string // <server>/mcp
	auth    string // the Authorization header's value
	hc      *http.Client
	session string
	next    int
	fresh   bool   // a new connection for every request, as the bridge does
	modern  string // the client's name when it speaks 2026-07-28 (modernRevision)
}

// newDirectClient is a client of the server at url (without /mcp) that
// sends auth as its Authorization header.
func newDirectClient(url, auth string) *directClient {
	// A Transport of its own uses no proxy: loopback only, whatever the
	// environment says.
	tr := &http.Transport{MaxIdleConnsPerHost: 2}
	return &directClient{url: url + "/mcp", auth: auth, hc: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

// request is an HTTP request to /mcp with the headers every client sends.
func (d *directClient) request(ctx context.Context, method string, body []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, d.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", protocol)
	req.Header.Set("Authorization", d.auth)
	if d.session != "" {
		req.Header.Set("Mcp-Session-Id", d.session)
	}
	req.Close = d.fresh
	return req, nil
}

// notify POSTs a notification; there is none before a session.
func (d *directClient) notify(method string) error {
	if d.session == "" {
		return fmt.Errorf("POST %s: no Mcp-Session-Id in the answer to initialize", d.url)
	}
	ctx, cancel := step()
	defer cancel()
	_, err := d.post(ctx, []byte(`{"jsonrpc":"2.0","method":"`+method+`"}`), 0, nil)
	return err
}

// call POSTs one request and returns its result.
func (d *directClient) call(ctx context.Context, method string, params map[string]any) (json.RawMessage, error) {
	d.next++
	var header http.Header // a 2026-07-28 POST says its revision, method and tool
	if d.modern != "" {
		header = http.Header{"Mcp-Protocol-Version": {modernRevision}, "Mcp-Method": {method}}
		if name, _ := params["name"].(string); name != "" {
			header.Set("Mcp-Name", name)
		}
		params = mcpclient.WithMeta(params, mcpclient.ModernMeta(d.modern))
	}
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": d.next, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	f, err := d.post(ctx, b, d.next, header)
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
func (d *directClient) post(ctx context.Context, body []byte, id int, header http.Header) (frame, error) {
	req, err := d.request(ctx, http.MethodPost, body)
	if err != nil {
		return frame{}, err
	}
	maps.Copy(req.Header, header)
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

// endSession ends the current session (DELETE), if any.
func (d *directClient) endSession() {
	if d.session == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if req, err := d.request(ctx, http.MethodDelete, nil); err == nil {
		if resp, err := d.hc.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	d.session = ""
}

// close ends the session and the connections.
func (d *directClient) close() {
	d.endSession()
	d.hc.CloseIdleConnections()
}

// floodToCap opens sessions on d's server until it says it is full (HTTP
// 503), floodBound at most, or ctx ends; it gives their ids, and whether
// the server said it was full. ctx ends it between initializes, never
// during one: an initialize cut off as the server answers it opens a
// session whose id is never read, which nobody could end (a soak's end
// board listed such a session as one more peer than its clients).
func floodToCap(ctx context.Context, d *directClient) (sessions []string, full bool) {
	for range floodBound {
		if ctx.Err() != nil {
			break
		}
		_, err := d.call(context.WithoutCancel(ctx), "initialize", initParams("bench-flood"))
		if d.session == "" {
			return sessions, err != nil && strings.Contains(err.Error(), "HTTP 503")
		}
		sessions = append(sessions, d.session)
		d.session = "" // the next initialize opens another
	}
	return sessions, false
}

// floodBound bounds the sessions a flood opens: past the servers' cap.
const floodBound = 1024

// endAll ends every session of sessions.
func (d *directClient) endAll(sessions []string) {
	for _, sid := range sessions {
		d.session = sid
		d.endSession()
	}
}
