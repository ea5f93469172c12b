//go:build npm

// These tests need node and npm, which a machine with only Go and git has
// not: `task release-check` runs them (go test -tags npm).

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
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
