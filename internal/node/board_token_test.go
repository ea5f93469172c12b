package node

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
)

// The board's link is asked, with the token, of the server that has just
// proved it holds the lease's secret, on the connection it proved itself
// on: a process that took the port as the server stopped is sent no token,
// and the link `board` prints and opens is never one it made up.
func TestTheBoardLinkIsAskedOnlyOfTheServerThatProvedItself(t *testing.T) {
	key := secret.New()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	addr := ln.Addr().String()
	heard := make(chan string, 16)
	answer := func(conn net.Conn, body string) error {
		_, err := fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		return err
	}
	theirs := func(other net.Listener) { // another user's process, on the freed port
		for {
			conn, err := other.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				req, err := http.ReadRequest(bufio.NewReader(conn))
				if err != nil {
					return
				}
				heard <- req.Header.Get("Authorization")
				_ = answer(conn, `{"path":"/board?token=theirs"}`)
			}()
		}
	}
	go func() { // the lease's server: it stops listening as it proves itself
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		br := bufio.NewReader(conn)
		for listening := ln; ; {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			body := `{"path":"/board?token=ours"}`
			if !secret.Authorized(req.Header.Get("Authorization"), key) {
				if listening != nil {
					listening.Close()
					other, err := net.Listen("tcp", addr)
					if err != nil {
						t.Errorf("taking the freed port %s: %v", addr, err)
						return
					}
					t.Cleanup(func() { other.Close() })
					go theirs(other)
					listening = nil
				}
				challenge := req.URL.Query().Get("challenge")
				b, _ := json.Marshal(map[string]any{"name": "majordomus", "leaseholder": true, "proof": secret.Proof(key, challenge, true)})
				body = string(b)
			}
			if answer(conn, body) != nil {
				return
			}
		}
	}()
	path, err := boardToken(context.Background(), "http://"+addr, key, Timings{ProbeTimeout: 10 * time.Second})
	select {
	case h := <-heard:
		if secret.Authorized(h, key) {
			t.Fatalf("the process that took the freed port was sent the lease's token (%q); the link is %q", h, path)
		}
	default:
	}
	if err != nil || path != "/board?token=ours" {
		t.Fatalf("the link is %q (%v); want the proven server's", path, err)
	}
}
