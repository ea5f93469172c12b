//go:build npm && unix

package main

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// Every way npm gives a host to start majordomus-mcp serves until the host
// ends it: npx; a global install's bin (npm install -g); a local install's
// node_modules/.bin; node running the launcher. Each, in a checkout of its
// own, becomes the leaseholder, answers a ping after 10 s of idle stdin,
// and ends as the binary spawned directly does (its exit code, or death by
// its signal) when its host closes stdin or signals it; when the host is
// killed hard, every process ends; no lease stays. All start together and
// share one idle wait. npx gets SIGINT through bash: dash, npm's sh here,
// keeps a SIGINT while it waits for its command (the README says so); npm
// passes on no SIGHUP.
func TestEveryNPMWayServesUntilItsHostEndsIt(t *testing.T) {
	// Every way starts with the hosts' signals at their default action,
	// as under a host, even when the tests run with them ignored (nohup,
	// a background job): exec resets a caught signal, and keeps an ignored
	// one ignored.
	caught := make(chan os.Signal, 1)
	signal.Notify(caught, syscall.SIGHUP, syscall.SIGINT)
	defer signal.Stop(caught)
	_, host, _, prefix := installNPM(t)
	global := installGlobal(t)
	ways := []struct {
		name string
		argv []string
	}{
		{"binary", []string{filepath.Join(prefix, "node_modules", npmScope, npmDir(host), "bin", host.binaryName())}},
		{"npx", []string{"npx", "--offline", "--prefix", prefix, "majordomus-mcp"}},
		{"global", []string{filepath.Join(global, "bin", "majordomus-mcp")}},
		{"node_modules/.bin", []string{filepath.Join(prefix, "node_modules", ".bin", "majordomus-mcp")}},
		{"node", []string{"node", filepath.Join(prefix, "node_modules", "majordomus-mcp", "bin", "majordomus-mcp.js")}},
	}
	endings := []string{"stdin closed", "SIGTERM", "SIGINT", "SIGHUP", "host SIGKILL"}
	type run struct {
		way, ending, checkout string
		p                     *mcpclient.Process
	}
	var runs []*run
	for _, w := range ways {
		for _, ending := range endings {
			argv := w.argv
			switch {
			case w.name == "npx" && ending == "SIGHUP":
				continue
			case w.name == "npx" && ending == "SIGINT":
				argv = []string{"npx", "--offline", "--script-shell=/bin/bash", "--prefix", prefix, "majordomus-mcp"}
			case ending == "host SIGKILL": // a host that is not node, and waits for its server
				argv = append([]string{"sh", "-c", `"$@"; exit $?`, "host"}, argv...)
			}
			r := &run{way: w.name, ending: ending, checkout: newCheckout(t)}
			r.p = start(t, exec.Command(argv[0], argv[1:]...), r.checkout)
			runs = append(runs, r)
		}
	}
	// Two dozen starts at once (npx alone takes a second of CPU) can be slow.
	started, cancelStarts := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancelStarts()
	for _, r := range runs {
		if _, err := r.p.WaitLog(started, `"msg":"transition"`, `"to":"leaseholder"`); err != nil {
			t.Fatalf("%s, %s: %v %v\n%s", r.way, r.ending, err, processChain(t, r.p.Cmd.Process.Pid), strings.Join(r.p.Logs(), "\n"))
		}
		if _, err := r.p.Initialize(started, "npm-way", "2025-11-25"); err != nil {
			t.Fatalf("%s, %s: initialize: %v", r.way, r.ending, err)
		}
	}
	idle, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, r := range runs {
		if exit, err := r.p.Wait(idle); err == nil {
			t.Fatalf("%s (for %s) ended %+v with its stdin open and idle:\n%s", r.way, r.ending, exit, strings.Join(r.p.Logs(), "\n"))
		}
	}
	for _, r := range runs {
		if resp, err := r.p.Call(ctx(t), "ping", map[string]any{}); err != nil || resp.Error != nil {
			t.Fatalf("%s (for %s): no answer to a ping after 10 s idle: %v %v", r.way, r.ending, err, resp.Error)
		}
		var err error
		switch r.ending {
		case "stdin closed":
			err = r.p.CloseStdin()
		case "SIGTERM":
			err = r.p.Signal(syscall.SIGTERM)
		case "SIGINT":
			err = r.p.Signal(syscall.SIGINT)
		case "SIGHUP":
			err = r.p.Signal(syscall.SIGHUP)
		default:
			err = r.p.Signal(syscall.SIGKILL)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	binary := map[string]mcpclient.Exit{}
	for _, r := range runs {
		t.Run(r.way+"/"+r.ending, func(t *testing.T) {
			// Wait returns once every process holding the pipes has ended.
			exit, err := r.p.Wait(ctx(t))
			if err != nil {
				t.Fatalf("%v\n%s", err, strings.Join(r.p.Logs(), "\n"))
			}
			if _, err := os.Stat(leaseOf(r.checkout)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the lease is still there (%v):\n%s", err, strings.Join(r.p.Logs(), "\n"))
			}
			if r.way == "binary" {
				binary[r.ending] = exit
			}
			if r.ending != "host SIGKILL" && exit != binary[r.ending] { // the host's own status
				t.Errorf("ended %+v, the binary %+v:\n%s", exit, binary[r.ending], strings.Join(r.p.Logs(), "\n"))
			}
		})
	}
}

var globalInstall struct {
	sync.Once
	prefix string
	err    error
}

// installGlobal installs the packages installNPM packed as
// `npm install -g` does, into a scratch prefix: the launcher's link in
// its bin/, the packages in lib/node_modules.
func installGlobal(t *testing.T) string {
	t.Helper()
	r, host, _, _ := installNPM(t)
	globalInstall.Do(func() {
		packs := filepath.Join(scratch, "packs")
		globalInstall.prefix = filepath.Join(scratch, "global")
		_, globalInstall.err = output(scratch, "npm", "install", "-g", "--offline", "--no-audit", "--no-fund",
			"--prefix", globalInstall.prefix,
			filepath.Join(packs, "majordomus-mcp-"+r.version+".tgz"), filepath.Join(packs, "majordomus-mcp-"+npmDir(host)+"-"+r.version+".tgz"))
	})
	if globalInstall.err != nil {
		t.Fatal(globalInstall.err)
	}
	return globalInstall.prefix
}

// When npm could not fetch this platform's package (an optional
// dependency: npm skips it without failing the install), the launcher
// names the registry npm asked, through npx and through node_modules/.bin:
// here one nobody listens at (the discard port), set in the project's
// .npmrc as a user sets a mirror.
func TestWithoutItsBinaryTheLauncherNamesTheRegistry(t *testing.T) {
	r, _, _, _ := installNPM(t)
	const registry = "http://127.0.0.1:9/"
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".npmrc"), []byte("registry="+registry+"\nfetch-retries=0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	main := filepath.Join(scratch, "packs", "majordomus-mcp-"+r.version+".tgz")
	if _, err := output(dir, "npm", "install", "--no-audit", "--no-fund", "--prefix", dir, main); err != nil {
		t.Fatal(err)
	}
	want := "npm could not fetch it from " + registry + ","
	for _, argv := range [][]string{{"npx", "--prefix", dir, "majordomus-mcp"}, {filepath.Join(dir, "node_modules", ".bin", "majordomus-mcp")}} {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); err == nil || code != 1 || !strings.Contains(string(out), want) {
			t.Errorf("%s without its binary: exit %d (%v), %q; want exit 1 and %q", argv[0], code, err, out, want)
		}
	}
}
