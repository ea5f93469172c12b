//go:build npm

// These tests need node and npm, which a machine with only Go and git has
// not: `task release-check` runs them (go test -tags npm).

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/example"
)

// npm installs the generated packages from their tarballs into a scratch
// prefix, no registry asked (--offline), taking only this platform's
// package; the majordomus-mcp bin that npx runs is the launcher, which
// starts that binary with the arguments, stdio and working directory given
// and ends with its exit code.
func TestNPXRunsThisPlatformsBinary(t *testing.T) {
	_, host, _, prefix := installNPM(t)
	hostBin := filepath.Join(prefix, "node_modules", npmScope, npmDir(host), "bin", host.binaryName())
	want := runOK(t, prefix, hostBin, "version")
	if got := runOK(t, prefix, "npx", "--offline", "majordomus-mcp", "version"); !bytes.Equal(got, want) {
		t.Errorf("through npx, version printed %q; the binary prints %q", got, want)
	}

	// Exit codes pass through the launcher and npx: 2 for a usage error,
	// 12 for a server started outside any checkout.
	outside := t.TempDir()
	for _, args := range [][]string{{"no-such-command"}, {"--repo", outside}} {
		direct := exitCode(t, outside, hostBin, args...)
		viaLauncher := exitCode(t, outside, filepath.Join(prefix, "node_modules", ".bin", "majordomus-mcp"), args...)
		viaNPX := exitCode(t, outside, "npx", append([]string{"--offline", "--prefix", prefix, "majordomus-mcp"}, args...)...)
		t.Logf("majordomus-mcp %v: exit %d direct, %d through the launcher, %d through npx", args, direct, viaLauncher, viaNPX)
		if direct == 0 || viaLauncher != direct || viaNPX != direct {
			t.Errorf("majordomus-mcp %v: the binary exits %d, the launcher %d, npx %d", args, direct, viaLauncher, viaNPX)
		}
	}
}

var installed struct {
	sync.Once
	prefix string
	err    error
}

// installNPM installs the release's npm packages from their tarballs into
// a scratch prefix, as `npm install` from the registry would: this
// platform's package only. Once per test binary: the tests run what it
// installed and change none of it.
func installNPM(t testing.TB) (r released, host, other target, prefix string) {
	t.Helper()
	r = makeRelease(t)
	host, other = r.targets[0], r.targets[1]
	installed.Do(func() { installed.prefix, installed.err = npmInstall(r, host, other) })
	if installed.err != nil {
		t.Fatal(installed.err)
	}
	prefix = installed.prefix
	hostBin := filepath.Join(prefix, "node_modules", npmScope, npmDir(host), "bin", host.binaryName())
	if _, err := os.Stat(hostBin); err != nil {
		t.Fatalf("npm did not install this platform's binary: %v", err)
	}
	// The other platform's package, offered by no registry here, is
	// skipped as a failed optional dependency, not an error.
	if _, err := os.Stat(filepath.Join(prefix, "node_modules", npmScope, npmDir(other))); err == nil {
		t.Errorf("npm installed %s's package too", other)
	}
	return r, host, other, prefix
}

func npmInstall(r released, host, other target) (string, error) {
	packs, prefix := filepath.Join(scratch, "packs"), filepath.Join(scratch, "prefix")
	for _, d := range []string{packs, prefix} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", err
		}
	}
	var tarballs []string
	for _, dir := range []string{"majordomus-mcp", npmDir(host), npmDir(other)} {
		out, err := output(packs, "npm", "pack", "--silent", "--pack-destination", packs, filepath.Join(r.dir, "npm", dir))
		if err != nil {
			return "", err
		}
		tarballs = append(tarballs, filepath.Join(packs, strings.TrimSpace(string(out))))
	}
	_, err := output(prefix, "npm", append([]string{"install", "--offline", "--no-audit", "--no-fund", "--prefix", prefix}, tarballs[:2]...)...)
	return prefix, err
}

// Spawned as a host spawns it, `npx majordomus-mcp` in a checkout becomes
// the leaseholder; SIGTERM to the npx process (Gemini's ending, Codex's
// after stdin) ends the binary, which removes the lease (R4): npm passes
// it on to the shell it runs the launcher through, the shell dies of it,
// and the launcher, orphaned, ends the binary; stdin's end ends everything
// with 0. A SIGINT (Claude Code's ending) npm passes on too, but dash
// (Debian's sh) keeps it while it waits, so here the SIGINT case is the
// launcher's own, which passes it on (TestThroughNPXTheProcessTree sends
// it to npx where the shell is bash).
func TestThroughNPXTheBinaryKeepsItsEndings(t *testing.T) {
	_, _, _, prefix := installNPM(t)
	for _, c := range []struct{ via, ending string }{{"npx", "SIGTERM"}, {"npx", "stdin EOF"}, {"launcher", "SIGINT"}, {"launcher", "SIGTERM"}} {
		ending := c.ending
		t.Run(c.via+" "+ending, func(t *testing.T) {
			checkout := t.TempDir()
			if err := example.WriteCheckout(checkout); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("npx", "--offline", "--prefix", prefix, "majordomus-mcp")
			if c.via == "launcher" {
				cmd = exec.Command(filepath.Join(prefix, "node_modules", ".bin", "majordomus-mcp"))
			}
			cmd.Dir = checkout
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			// The log ends when the last process holding stderr (npx,
			// the launcher, the binary) has ended.
			logged := make(chan []byte)
			go func() { b, _ := io.ReadAll(stderr); logged <- b }()
			lease := filepath.Join(checkout, ".ai", "local", "state", "mcp", "server.json")
			waitFor(t, func() bool { _, err := os.Stat(lease); return err == nil }, "the lease "+lease)
			switch ending {
			case "SIGINT":
				err = cmd.Process.Signal(os.Interrupt)
			case "SIGTERM":
				err = cmd.Process.Signal(syscall.SIGTERM)
			default:
				err = stdin.Close()
			}
			if err != nil {
				t.Fatal(err)
			}
			var log []byte
			select {
			case log = <-logged:
			case <-time.After(30 * time.Second):
				t.Fatalf("the processes %s started did not end within 30 s", c.via)
			}
			waitErr := cmd.Wait()
			if _, err := os.Stat(lease); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the lease is still there after %s (%v)\n%s", ending, err, log)
			}
			if ending == "stdin EOF" {
				if waitErr != nil {
					t.Errorf("after stdin's end npx ended with %v, want 0\n%s", waitErr, log)
				}
				return
			}
			if !bytes.Contains(log, []byte(`"trigger":"signal","rule":"R4"`)) {
				t.Errorf("the binary did not end on the signal (R4):\n%s", log)
			}
			var ee *exec.ExitError
			if c.via == "launcher" && (!errors.As(waitErr, &ee) || ee.ExitCode() == 0) {
				t.Errorf("after %s the launcher ended with %v; the binary's status is not 0", ending, waitErr)
			}
		})
	}
}

// waitFor waits for cond, looking every 20 ms, for at most 30 s.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30 s for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func npmDir(t target) string {
	goos, cpu := npmPlatform(t)
	return goos + "-" + cpu
}

func runOK(t *testing.T, dir, name string, args ...string) []byte {
	t.Helper()
	out, err := output(dir, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func output(dir, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %v: %w\n%s", name, args, err, stderr.String())
	}
	return out, nil
}

func exitCode(t *testing.T, dir, name string, args ...string) int {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return 0
}
