//go:build npm && unix

package main

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// What npx adds to a start: the time from spawning to the first log line
// (written before any probe) of the binary itself, of the launcher, and of
// `npx majordomus-mcp` with npm's default shell and with bash, which
// execs the launcher. Each start then ends on stdin's end. Run with
// `go test -tags npm -run '^$' -bench FirstLogLine ./internal/cmd/mkrelease`.
func BenchmarkFirstLogLine(b *testing.B) {
	_, host, _, prefix := installNPM(b)
	launcher := filepath.Join(prefix, "node_modules", ".bin", "majordomus-mcp")
	npx := func(args ...string) []string {
		return append(append([]string{"npx", "--offline"}, args...), "--prefix", prefix, "majordomus-mcp")
	}
	for _, c := range []struct {
		name string
		argv []string
	}{
		{"binary", []string{filepath.Join(prefix, "node_modules", npmScope, npmDir(host), "bin", host.binaryName())}},
		{"launcher", []string{launcher}},
		{"npx", npx()},
		{"npx-bash", npx("--script-shell=/bin/bash")},
	} {
		b.Run(c.name, func(b *testing.B) {
			checkout := newCheckout(b)
			var total time.Duration
			for b.Loop() {
				total += firstLogLine(b, checkout, c.argv)
			}
			b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/first-line")
		})
	}
}

func firstLogLine(b *testing.B, dir string, argv []string) time.Duration {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	r := bufio.NewReader(stderr)
	if _, err := r.ReadString('\n'); err != nil {
		b.Fatalf("%v: no log line: %v", argv, err)
	}
	took := time.Since(start)
	stdin.Close()
	for { // the rest of the log, until every process holding it has ended
		if _, err := r.ReadString('\n'); err != nil {
			break
		}
	}
	if err := cmd.Wait(); err != nil {
		b.Fatalf("%v: %v", argv, err)
	}
	return took
}
