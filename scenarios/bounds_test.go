package scenarios

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// One size limit, however a message arrives (docs/security.md#bounded): a
// leaseholder's own session, a bridged one, a standalone one and one served
// alone answer a 2 MiB message with the same JSON-RPC error, and go on
// serving.
func TestAnOversizedMessageGetsTheSameAnswerInEveryMode(t *testing.T) {
	_, modes := everyMode(t)
	query := strings.Repeat("x", 2<<20)
	answers := map[string]string{}
	for _, c := range modes {
		r, err := c.p.Call(ctx(t), "tools/call", map[string]any{"name": "majordomus_search", "arguments": map[string]any{"query": query}})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, "over the limit of 1048576 bytes") {
			t.Fatalf("%s answered %s %v; want -32600 naming the limit", c.name, r.Result, r.Error)
		}
		frame, _ := json.Marshal(r)
		answers[c.name] = string(frame)
		if after, err := c.p.Call(ctx(t), "tools/call", map[string]any{"name": "majordomus_search", "arguments": map[string]any{"query": "commit"}}); err != nil || after.Error != nil {
			t.Fatalf("%s after the oversized message: %v %v", c.name, err, after.Error)
		}
	}
	for name, a := range answers {
		if a != answers["leaseholder"] {
			t.Errorf("%s answered\n%s\nthe leaseholder's own session\n%s", name, a, answers["leaseholder"])
		}
	}
}

// A batch's answers are bounded, however it arrives (docs/security.md#bounded):
// a member's answer may be a hundred times the member (tools/list), and a
// shared server that answered a batch of 1 MiB whole grew to 640 MB. Once
// its answers reach 16 MiB, the batch's further requests are not run, each
// answered -32600, with the same bytes in every mode and over HTTP.
func TestABatchsAnswersAreBoundedInEveryMode(t *testing.T) {
	const bound = 16 << 20
	dir, modes := everyMode(t)
	list, err := modes[0].p.Call(ctx(t), "tools/list", nil)
	if err != nil || list.Error != nil {
		t.Fatalf("tools/list: %v %v", err, list.Error)
	}
	one, _ := json.Marshal(list)
	members := make([]string, bound/len(one)+100) // past the bound by a hundred answers
	for i := range members {
		members[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":"batch-%d","method":"tools/list"}`, i)
	}
	batch := "[" + strings.Join(members, ",") + "]"

	answers := map[string][]byte{}
	for _, c := range modes {
		answers[c.name] = sendBatch(t, c, batch)
	}
	c := connect(t, dir)
	s := plainSession{t: t, c: c, sid: openPlainSession(t, c)}
	defer s.end()
	_, _, answers["http"] = httpDo(t, http.MethodPost, c.URL, []byte(batch),
		c.with(map[string]string{"Mcp-Session-Id": s.sid, "Mcp-Protocol-Version": "2025-11-25"}))

	for name, a := range answers {
		var got []mcpclient.Response
		if err := json.Unmarshal(a, &got); err != nil || len(got) != len(members) {
			t.Fatalf("%s answered %d of %d members (%v): %.200s", name, len(got), len(members), err, a)
		}
		run := 0
		for run < len(got) && got[run].Error == nil {
			run++
		}
		if len(a) > bound+len(one)+(len(members)-run)*200 {
			t.Errorf("%s answered %d bytes, %d of %d members run: over the bound of %d", name, len(a), run, len(members), bound)
		}
		if last := got[len(got)-1].Error; last == nil || last.Code != -32600 || !strings.Contains(last.Message, "not run") {
			t.Errorf("%s answered the batch's last request %v; want -32600 saying it was not run", name, last)
		}
		if !bytes.Equal(bytes.TrimSpace(a), answers["leaseholder"]) {
			t.Errorf("%s answered the batch otherwise than the leaseholder's own session", name)
		}
	}

	// A line over the message limit is refused member by member, by the
	// stdio loop every mode shares: a member that is no object (1) is
	// answered with an error of its own, a hundred times its size, so the
	// refusals are bounded alike.
	line := "[" + strings.Repeat("1,", 600_000) + `{"jsonrpc":"2.0","id":"last","method":"ping"}]`
	a := sendBatch(t, modes[0], line)
	var got []mcpclient.Response
	if err := json.Unmarshal(a, &got); err != nil || len(a) > bound+bound/16 { // the bound counts no commas
		t.Fatalf("a line of %d bytes refused with %d bytes (%v)", len(line), len(a), err)
	}
	if last := got[len(got)-1]; string(last.ID) != `"last"` || last.Error == nil || !strings.Contains(last.Error.Message, "not run") {
		t.Fatalf("the line's request answered %s %v; want -32600 saying it was not run", last.ID, last.Error)
	}
}

// mode is a client of one of the ways a process serves it.
type mode struct {
	name string
	p    *mcpclient.Process
}

// everyMode starts a client of each way a process serves one, in a
// checkout it returns: a leaseholder's own, a bridged one, a standalone
// one, and one served alone (in a checkout of its own, whose lease cannot
// be made). The leaseholder's comes first.
func everyMode(t *testing.T) (string, []mode) {
	t.Helper()
	dir := checkout(t)
	leaseholder := shared(t, dir)
	initialize(t, leaseholder, "claude-code")
	serverURL(t, leaseholder)
	bridged := shared(t, dir)
	initialize(t, bridged, "codex")
	attached(t, bridged)
	standalone := start(t, dir, "--standalone")
	initialize(t, standalone, "cursor")
	aloneDir := checkout(t)
	if err := os.MkdirAll(leasePath(aloneDir), 0o700); err != nil { // a directory where the lease should be
		t.Fatal(err)
	}
	alone := shared(t, aloneDir)
	initialize(t, alone, "gemini-cli")
	if _, err := alone.WaitLog(ctx(t), "serving this client alone"); err != nil {
		t.Fatal(err)
	}
	return dir, []mode{{"leaseholder", leaseholder}, {"bridged", bridged}, {"standalone", standalone}, {"alone", alone}}
}

// sendBatch sends c the line of a batch and returns its answer, an array.
func sendBatch(t *testing.T, c mode, line string) []byte {
	t.Helper()
	n := len(c.p.Frames())
	if err := c.p.SendLine(line); err != nil {
		t.Fatal(err)
	}
	frame, err := c.p.WaitFrameAfter(ctx(t), "the batch's answer", n, func(f []byte) bool { return bytes.HasPrefix(f, []byte("[")) })
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	return frame
}

// Another local user who holds every connection the shared server takes
// (2,048), without the token, keeps no client of the lease out: a new
// client proves the server and attaches, its call is answered, and the
// leaseholder keeps the checkout (docs/security.md#bounded).
func TestConnectionsHeldWithoutTheTokenKeepNoClientOut(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	addr := strings.TrimPrefix(serverURL(t, a), "http://")
	held := make([]*bufio.Reader, 0, 2048)
	var conns []net.Conn
	for range cap(held) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		conns = append(conns, conn)
		br := bufio.NewReader(conn)
		_, _ = conn.Write([]byte("GET / HTTP/1.1\r\nHost: " + addr + "\r\n\r\n"))
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("connection %d without the token: %v", len(held)+1, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		held = append(held, br)
	}

	b := shared(t, dir)
	initialize(t, b, "codex")
	line, err := b.WaitLogAny(ctx(t), "bridging this stdio session", "took over as the shared server", "serving this client alone")
	if err != nil || !strings.Contains(line, "bridging this stdio session") {
		t.Fatalf("a client beside 2,048 connections without the token: %v %s", err, line)
	}
	if isErr, text, err := b.CallTool(ctx(t), "majordomus_list", map[string]any{}, nil); err != nil || isErr {
		t.Fatalf("majordomus_list: %v %s", err, text)
	}
	// The first made room for the new client's (idle, and the oldest).
	_ = conns[0].SetReadDeadline(time.Now().Add(10 * time.Second)) // the cap of the wait, not the measure
	if _, err := held[0].ReadByte(); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the oldest connection without the token was kept (%v)", err)
	}
	if n := a.CountLogs("took over"); n != 0 {
		t.Errorf("the leaseholder logged a take-over %d times", n)
	}
}

// status tells a full server apart: its lease is live, and it says that a
// new client that needs a session is served alone until one ends.
func TestStatusSaysWhenTheServerIsFull(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir, "--max-sessions", "1")
	initialize(t, a, "claude-code")
	serverURL(t, a)
	reason := func() string {
		t.Helper()
		code, stdout, _ := runOnce(t, dir, "", "status")
		var report struct{ Class, Reason string }
		if code != 0 || json.Unmarshal([]byte(stdout), &report) != nil || report.Class != "live" {
			t.Fatalf("status: %d\n%s", code, stdout)
		}
		return report.Reason
	}
	if r := reason(); strings.Contains(r, "full") {
		t.Fatalf("a server with room for a session is said full: %s", r)
	}
	openPlainSession(t, connect(t, dir))
	if r := reason(); !strings.Contains(r, "it is full: it opens no session until one ends, and a new client that needs one is served alone meanwhile") {
		t.Fatalf("a full server is not said full: %s", r)
	}
}

// No token holder opens a session the server did not count, past the cap
// (which a plain session fills here): not with the header that lets a
// bridge send a 2026-07-28 request's names in its body, whose body names
// a legacy revision; nor with a _meta this server would read as
// 2026-07-28 and mcp-go as none (a "_META" beside it), which mcp-go would
// serve as a session's.
func TestNoRequestOpensASessionPastTheCap(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir, "--max-sessions", "1")
	initialize(t, a, "claude-code")
	serverURL(t, a)
	server := connect(t, dir)
	openPlainSession(t, server)
	initialize := func(meta string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{` + meta +
			`"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"direct-http","version":"1"}}}`)
	}
	for _, tc := range []struct {
		name   string
		body   []byte
		header map[string]string
	}{
		{"names in the body", initialize(`"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"},`),
			map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Majordomus-Names-In-Body": "1"}},
		{"a _META beside _meta", initialize(`"_META":5,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},`), nil},
		{"params twice", []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":5,"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},` +
			`"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"direct-http","version":"1"}}}`), nil},
	} {
		for range 2 {
			status, header, answer := httpDo(t, http.MethodPost, server.URL, tc.body, server.with(tc.header))
			if sid := header.Get("Mcp-Session-Id"); sid != "" || status == http.StatusOK && !strings.Contains(string(answer), `"error"`) {
				t.Fatalf("%s: opened session %q: %d %s", tc.name, sid, status, answer)
			}
		}
	}
}
