package scenarios

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// A container and its host share a checkout: processes of one kernel in
// other pid and network namespaces, where neither sees the other's pid nor
// reaches the other's loopback. Each used to take the other's lease for a
// dead owner's, and they took it in turn many times a second. Now the
// first's server keeps its lease, held locked for its term (the one fact
// both sides see); the other's client is served alone, saying why; and
// once the first is killed (the file left in place), the other's next try
// takes the lease over.
//
// Making namespaces needs CAP_SYS_ADMIN: this runs as root (as CI does);
// registry's TestAnOwnerInOtherNamespacesIsJudgedByTheLockItHolds proves
// the judging for every user, with a real lock.
func TestAContainerAndItsHostNeverFightOverTheLease(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Log("not root: no namespaces to run a container's process in")
		return
	}
	for _, first := range []string{"host", "container"} {
		t.Run(first+" first", func(t *testing.T) {
			dir := checkout(t)
			inContainer := func(side string) *mcpclient.Process {
				if side == "container" {
					return startIn(t, dir, syscall.CLONE_NEWPID|syscall.CLONE_NEWNET)
				}
				return startIn(t, dir, 0)
			}
			other := map[string]string{"host": "container", "container": "host"}[first]
			a := inContainer(first)
			initialize(t, a, "claude-code")
			serverURL(t, a)
			instance := readLease(t, dir)["instance"]

			b := inContainer(other)
			initialize(t, b, "codex")
			if _, err := b.WaitLog(ctx(t), servedAlone, "runs in another network namespace than this process", "holds the lease"); err != nil {
				t.Fatal(err)
			}
			var repo struct{ State string }
			if isErr, text, err := b.CallTool(ctx(t), "majordomus_repository", nil, &repo); err != nil || isErr || repo.State != "ok" {
				t.Fatalf("the client served alone: %v %s %v", isErr, text, err)
			}
			if got := readLease(t, dir)["instance"]; got != instance {
				t.Fatalf("the lease changed hands: %v, then %v", instance, got)
			}
			for _, p := range []*mcpclient.Process{a, b} {
				if n := p.CountLogs("taking it over"); n != 0 {
					t.Fatalf("a lease was taken over %d times:\n%s", n, strings.Join(p.Logs(), "\n"))
				}
			}

			a.Kill(ctx(t))
			if _, err := b.WaitLog(ctx(t), "is gone", "taking it over"); err != nil {
				t.Fatal(err)
			}
			if _, err := b.WaitLog(ctx(t), "joined the checkout's shared server"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A container sharing its host's network (docker --network=host) shares
// its server too: its processes attach to the host's. Its pid means
// nothing there, so a stopped leaseholder is told alive by its lock, and
// taken over after the busy grace, as in one namespace.
func TestAContainerOnTheHostsNetworkSharesItsServer(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Log("not root: no namespaces to run a container's process in")
		return
	}
	dir := checkout(t)
	a := startIn(t, dir, 0)
	initialize(t, a, "claude-code")
	url := serverURL(t, a)
	b := startIn(t, dir, syscall.CLONE_NEWPID)
	initialize(t, b, "codex")
	attached(t, b, url)

	stop(t, a)
	t.Cleanup(func() { a.Signal(syscall.SIGCONT) })
	c := startIn(t, dir, syscall.CLONE_NEWPID, "--busy-grace", "1s", "--probe-timeout", "500ms")
	initialize(t, c, "gemini-cli")
	if _, err := c.WaitLog(ctx(t), "busy lease:", "is alive", "taking it over"); err != nil {
		t.Fatal(err)
	}
	if got := serverURL(t, c); readLease(t, dir)["url"] != got {
		t.Fatal("the lease does not name the container's server")
	}
	// c registered from a pid namespace of its own, where a's pid names no
	// process: a's row is not c's to prune. Seen from the host, a is still
	// its profile's member (stopped), and c's row cannot be judged.
	if _, err := c.WaitLog(ctx(t), "registered this server in the fleet registry"); err != nil {
		t.Fatal(err)
	}
	_, inv := fleet(t, dir, os.Getenv(registryEnv))
	if !slices.ContainsFunc(inv.RunningMembers, func(m member) bool { return m.PID == pids(a)[0] }) ||
		!slices.ContainsFunc(inv.StaleMembers, func(m member) bool {
			return m.Reason == "unverifiable" && strings.Contains(m.Detail, "another pid namespace")
		}) {
		t.Fatalf("the host's inventory: running %+v, stale %+v, unregistered %+v", inv.RunningMembers, inv.StaleMembers, inv.UnregisteredProcesses)
	}
}

// startIn starts a client of the shared server in dir, in the new
// namespaces cloneflags asks for, with args.
func startIn(t *testing.T, dir string, cloneflags uintptr, args ...string) *mcpclient.Process {
	t.Helper()
	args = append([]string{"--http-port", "0"}, args...)
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: cloneflags}
	p, err := mcpclient.StartCmd(cmd)
	if err != nil {
		t.Fatal(err)
	}
	killedAtEnd(t, p, bin, args)
	return p
}
