package registry

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

// stoppingServer is the lease's server (it holds probeSecret), which stops
// listening as it proves itself to its first probe, and another user's
// process, which takes the port it freed at once. It returns the lease's
// URL and what that process heard: the Authorization header of each
// request that reached it.
func stoppingServer(t *testing.T) (string, <-chan string) {
	t.Helper()
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
	theirs := func(other net.Listener) {
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
				_ = answer(conn, `{"name":"majordomus","checkout":"theirs","leaseholder":true}`)
			}()
		}
	}
	go func() {
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
			body := `{"name":"majordomus","checkout":"ours","leaseholder":true}`
			if !secret.Authorized(req.Header.Get("Authorization"), probeSecret) {
				if listening != nil { // the server stops; another process takes its port
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
				body = identityJSON(t, nil)(req.URL.Query().Get("challenge"))
			}
			if answer(conn, body) != nil {
				return
			}
		}
	}()
	return "http://" + addr, heard
}

func TestFetchReport_TheTokenGoesOnlyWhereTheProofWasGiven(t *testing.T) {
	base, heard := stoppingServer(t)
	report, err := FetchReport(context.Background(), base, probeSecret, 10*time.Second)
	select {
	case h := <-heard:
		if secret.Authorized(h, probeSecret) {
			t.Fatalf("the process that took the freed port was sent the lease's token (%q); the report was %s", h, report)
		}
	default:
	}
	var id struct{ Checkout string }
	if err != nil || json.Unmarshal(report, &id) != nil || id.Checkout != "ours" {
		t.Fatalf("the report is %s (%v); want the proven server's", report, err)
	}
}
