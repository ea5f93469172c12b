//go:build unix

package scenarios

// A lease that cannot be created or replaced serves the client alone, with
// the reason logged (R2) — as root too, where mode bits stop nothing.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// nobody is the unprivileged user the permission-denied cases run as when
// the tests run as root.
const nobody = 65534

// S6 (root): a file where the lease directory should be. Root cannot write
// through a regular file, so this proves the case whoever runs the test.
func TestAFileWhereTheLeaseDirectoryShouldBeServesAlone(t *testing.T) {
	dir := checkout(t)
	os.MkdirAll(filepath.Join(dir, ".ai/local"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, ".ai/local/state"), []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := shared(t, dir)
	assertServedAlone(t, p, dir, "state")
}

// S6 (unprivileged): the lease directory refuses writes: permission denied.
func TestAReadOnlyLeaseDirectoryServesAlone(t *testing.T) {
	dir := sharedCheckout(t)
	leaseDir := filepath.Dir(leasePath(dir))
	if err := os.MkdirAll(leaseDir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := startUnprivileged(t, dir, leaseDir)
	line := assertServedAlone(t, p, dir, "server.json")
	if !strings.Contains(line, "permission denied") {
		t.Fatalf("the reason is not named: %s", line)
	}
}

// S6: a stale lease in a directory that refuses writes cannot be taken over:
// served alone, the lease left as it was.
func TestAStaleLeaseThatCannotBeReplacedServesAlone(t *testing.T) {
	dir := sharedCheckout(t)
	leaseDir := filepath.Dir(leasePath(dir))
	stale := fmt.Sprintf(`{"schema":"majordomus-mcp-lease/v1","pid":%d,"instance":"old","url":"http://127.0.0.1:%d"}`, deadPID(t), freePort(t))
	plantLease(t, dir, stale, time.Minute)
	os.Chmod(leaseDir, 0o755)
	os.Chmod(leasePath(dir), 0o644)
	p := startUnprivileged(t, dir, leaseDir)
	// As root the lease is another user's (nobody runs the client), which
	// is refused before it is judged; otherwise taking it over fails.
	if _, err := p.WaitLog(ctx(t), "cannot use the shared server", "server.json"); err != nil {
		t.Fatal(err)
	}
	initialize(t, p, "codex")
	p.CloseStdin()
	exitsWith(t, p, 0)
	if b, _ := os.ReadFile(leasePath(dir)); string(b) != stale {
		t.Fatalf("the lease was changed: %q", b)
	}
}

// assertServedAlone proves a client was served alone: the log line names
// the path, the instructions carry no URL, a board of one, no port bound,
// exit 0, no lease. It returns the log line.
func assertServedAlone(t *testing.T, p *mcpclient.Process, dir, pathPart string) string {
	t.Helper()
	line, err := p.WaitLog(ctx(t), "cannot use the shared server", "serving this client alone")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(line, pathPart) || !strings.Contains(line, `"reason"`) {
		t.Fatalf("the line does not name the path and the reason: %s", line)
	}
	inst := initialize(t, p, "codex")
	if strings.Contains(inst, "http://") || !strings.Contains(inst, "You are peer p1") {
		t.Fatalf("instructions of a client served alone:\n%s", inst)
	}
	toldServedAlone(t, p, inst)
	if b := peersOf(t, p); b.Count != 1 {
		t.Fatalf("a board of %d", b.Count)
	}
	var repo struct{ State string }
	if isErr, text, _ := p.CallTool(ctx(t), "majordomus_repository", nil, &repo); isErr || repo.State != "ok" {
		t.Fatalf("majordomus_repository: %s", text)
	}
	p.CloseStdin()
	exitsWith(t, p, 0)
	if p.CountLogs("listening on") != 0 {
		t.Fatal("a client served alone bound a port")
	}
	if _, err := os.Lstat(leasePath(dir)); err == nil {
		t.Fatal("a lease was created")
	}
	return line
}

// sharedCheckout is a checkout an unprivileged user can read: a fresh
// directory of mode 0755 outside the test's private temp directory.
func sharedCheckout(t *testing.T) string {
	t.Helper()
	parent, err := os.MkdirTemp("", "majordomus-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	os.Chmod(parent, 0o755)
	dir := filepath.Join(parent, "example")
	copyExample(t, dir)
	return dir
}

// startUnprivileged starts a client that cannot write readOnly: as root it
// runs as nobody, readOnly given to nobody and made read-only (a lease
// directory of another user is not trusted at all); otherwise readOnly's
// mode is enough.
func startUnprivileged(t *testing.T, dir, readOnly string) *mcpclient.Process {
	t.Helper()
	cmd := exec.Command(bin, "--http-port", "0")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME=/")
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		if err := os.Chown(readOnly, nobody, nobody); err != nil {
			t.Fatal(err)
		}
		os.Chmod(readOnly, 0o555)
		t.Cleanup(func() { os.Chmod(readOnly, 0o755) })
	} else {
		os.Chmod(readOnly, 0o555)
		t.Cleanup(func() { os.Chmod(readOnly, 0o755) })
	}
	p, err := mcpclient.StartCmd(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Kill(ctx(t))
		if t.Failed() {
			t.Logf("stderr:\n%s", strings.Join(p.Logs(), "\n"))
		}
	})
	return p
}

// A directory where the lease file should be can be neither read nor
// replaced: served alone, at once.
func TestADirectoryWhereTheLeaseShouldBeServesAlone(t *testing.T) {
	dir := checkout(t)
	if err := os.MkdirAll(leasePath(dir), 0o700); err != nil {
		t.Fatal(err)
	}
	p := shared(t, dir)
	line, err := p.WaitLog(ctx(t), "cannot use the shared server", "serving this client alone")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(line, "directory") {
		t.Fatalf("the reason is not named: %s", line)
	}
	toldServedAlone(t, p, initialize(t, p, "codex"))
	p.CloseStdin()
	exitsWith(t, p, 0)
	if info, err := os.Stat(leasePath(dir)); err != nil || !info.IsDir() {
		t.Fatal("the directory was touched")
	}
}

// A lease directory another user owns (as root the test gives it to
// nobody), or one anybody may write (otherwise), is not used: the client is
// served alone with the reason, and nothing in it is removed or changed —
// the lease planted there included (docs/security.md).
func TestAnotherUsersLeaseDirectoryIsNotUsed(t *testing.T) {
	dir := checkout(t)
	leaseDir := filepath.Dir(leasePath(dir))
	planted := fmt.Sprintf(`{"schema":"majordomus-mcp-lease/v1","pid":%d,"instance":"theirs","url":"http://127.0.0.1:%d"}`, deadPID(t), freePort(t))
	plantLease(t, dir, planted, time.Minute)
	reason := "writable by other users"
	if os.Geteuid() == 0 {
		for _, p := range []string{leaseDir, leasePath(dir)} {
			if err := os.Chown(p, nobody, nobody); err != nil {
				t.Fatal(err)
			}
		}
		reason = "belongs to another user"
	}
	os.Chmod(leaseDir, 0o777)
	p := shared(t, dir)
	line := assertServedAliveAlone(t, p)
	if !strings.Contains(line, reason) {
		t.Fatalf("the reason is not named (want %q): %s", reason, line)
	}
	if b, _ := os.ReadFile(leasePath(dir)); string(b) != planted {
		t.Fatalf("the lease in the untrusted directory was changed: %q", b)
	}
}

// assertServedAliveAlone waits for the served-alone line and serves one
// session through it.
func assertServedAliveAlone(t *testing.T, p *mcpclient.Process) string {
	t.Helper()
	line, err := p.WaitLog(ctx(t), "cannot use the shared server", "serving this client alone")
	if err != nil {
		t.Fatal(err)
	}
	toldServedAlone(t, p, initialize(t, p, "codex"))
	p.CloseStdin()
	exitsWith(t, p, 0)
	return line
}

// A client that nothing can serve (the lease directory unusable, the
// layer refused alone under --strict) is told why before the process ends
// with its error. (The answer was made as the process ended, and mostly
// lost with it: the client saw its server go without a word.)
func TestAClientNothingCanServeIsToldWhyBeforeTheEnd(t *testing.T) {
	dir := checkout(t)
	// A layer long to index: the client's initialize is read before the
	// layer is refused, as a host's first line is.
	for i := range 2000 {
		if err := os.WriteFile(filepath.Join(dir, ".ai/repo", fmt.Sprintf("bulk-%d.md", i)), fmt.Appendf(nil, "---\nid: bulk-%d\nkind: note\n---\nbody\n", i), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeBroken(t, dir)
	os.MkdirAll(filepath.Join(dir, ".ai/local"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, ".ai/local/state"), []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--strict", "--http-port", "0")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"strict","version":"1"}}}` + "\n")
	var out strings.Builder
	cmd.Stdout = &out
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 10 {
		t.Fatalf("ended with %v, want exit 10", err)
	}
	if !strings.Contains(out.String(), `"id":1,"error"`) || !strings.Contains(out.String(), "refusing to serve under --strict") {
		t.Fatalf("the client was told %q; want why nothing serves it", out.String())
	}
}
