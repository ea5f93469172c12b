package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// b8 floods a leaseholder as a misbehaving local client would (issue 12,
// docs/security.md#bounded): 1,000 initializes answered with an error,
// then 200 connections that send a body one byte and then nothing. It
// reports the leaseholder's resident set and open descriptors before and
// after: an initialize that fails opens no session, and a trickled body is
// cut off at the body timeout (10 s), so both should come back to where
// they were.
func (b *bench) b8() ([]Figure, error) {
	lh, err := b.newLeaseholder("B8", 0)
	if err != nil {
		return nil, err
	}
	defer lh.c.close()
	pid := lh.c.pid()
	rssBefore, fdsBefore := newSeries("MiB"), newSeries("descriptors")
	rssAfter, fdsAfter := newSeries("MiB"), newSeries("descriptors")
	if err := sampleProcess(pid, rssBefore, fdsBefore); err != nil {
		return nil, err
	}
	client := newDirectClient(lh.url, lh.authorization)
	const invalid, slow = 1000, 200
	for i := range invalid {
		req, _ := client.request(context.Background(), http.MethodPost,
			[]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":"not params"}`))
		resp, err := client.hc.Do(req)
		if err != nil {
			return nil, fmt.Errorf("B8 invalid initialize %d: %w", i, err)
		}
		resp.Body.Close()
	}
	client.close()
	host := strings.TrimPrefix(lh.url, "http://")
	conns := make([]net.Conn, 0, slow)
	for range slow {
		c, err := net.Dial("tcp", host)
		if err != nil {
			return nil, fmt.Errorf("B8 slow body: %w", err)
		}
		_, _ = c.Write([]byte("POST /mcp HTTP/1.1\r\nHost: " + host + "\r\nAuthorization: " + lh.authorization +
			"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{"))
		conns = append(conns, c)
	}
	cutOff := 0
	deadline := time.Now().Add(30 * time.Second) // the cap of the wait; the server closes each at its body timeout
	for _, c := range conns {
		_ = c.SetReadDeadline(deadline)
		if _, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
			cutOff++
		}
		c.Close()
	}
	if err := sampleProcess(pid, rssAfter, fdsAfter); err != nil {
		return nil, err
	}
	rss := compare("B8", fmt.Sprintf("leaseholder RSS after %d failed initializes and %d trickled bodies", invalid, slow), "max",
		rssAfter, "the same before the flood", rssBefore, 1.5, "≤ 1.5× before")
	fds := compare("B8", "its open descriptors after the same", "max",
		fdsAfter, "the same before the flood", fdsBefore, 1.2, "≤ 1.2× before")
	rss.Note = fmt.Sprintf("%d of %d trickled bodies were answered and closed by the server within 30 s", cutOff, slow)
	return []Figure{rss, fds}, nil
}
