package fleet

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// The fixture: a checkout, a boot and a clock; servers are rows and the
// processes that agree with them, built so that each test changes only
// what it is about.

const boot = "boot-1"

var (
	repo = Repository{Root: "/work/checkout", ID: "0123456789abcdef0123456789abcdef"}
	t0   = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
)

// server is one live server of this checkout: its row and its process.
type server struct {
	row  Row
	proc Process
}

func newServer(profile string, pid int) server {
	r := Row{
		RuntimeID: fmt.Sprintf("rt-%s-%d", profile, pid), Profile: profile, State: StateLeaseholder,
		RepositoryRoot: repo.Root, RepositoryID: repo.ID,
		Cohort: "env:cohort-1", CohortSource: CohortFromEnvironment,
		StartupRevision: "0.1.0+abcdef", Transport: "streamable-http",
		URL: fmt.Sprintf("http://127.0.0.1:%d", 40000+pid), PID: pid, ProcessStart: uint64(pid) * 10,
		BootID: boot, Executable: "/usr/local/bin/majordomus-mcp",
		RegisteredAt: t0.Add(time.Duration(pid) * time.Second), RegisteredTicks: uint64(pid)*10 + 3,
	}
	p := Process{
		PID: pid, PPID: 900, Start: r.ProcessStart, Executable: r.Executable,
		Listen: []string{fmt.Sprintf("127.0.0.1:%d", 40000+pid)}, StartDir: repo.Root, Checkout: repo.Root,
	}
	return server{r, p}
}

// with returns a copy of the server changed by f.
func (s server) with(f func(*Row, *Process)) server {
	f(&s.row, &s.proc)
	return s
}

// roster makes a roster of profiles whose roles are known and empty.
func roster(profiles ...string) []Configured {
	out := make([]Configured, len(profiles))
	for i, p := range profiles {
		out[i] = Configured{Profile: p, RoleKnown: true}
	}
	return out
}

// snapshotOf is the snapshot in which exactly these servers run.
func snapshotOf(r []Configured, servers ...server) Snapshot {
	s := Snapshot{
		Roster: r, Repository: repo, BootID: boot, RegistryPath: "/state/registry.db",
		PIDs: map[int]PID{}, Now: t0.Add(time.Hour), AnsweringNamespace: "cli",
	}
	for _, sv := range servers {
		s.Rows = append(s.Rows, sv.row)
		s.Processes = append(s.Processes, sv.proc)
		s.PIDs[sv.row.PID] = PID{Known: true, Exists: true, Start: sv.row.ProcessStart}
	}
	return s
}

// withRow adds a row no process agrees with, and what signal 0 says of its pid.
func (s Snapshot) withRow(r Row, pid PID) Snapshot {
	s.Rows = append(append([]Row(nil), s.Rows...), r)
	pids := map[int]PID{}
	for k, v := range s.PIDs {
		pids[k] = v
	}
	pids[r.PID] = pid
	s.PIDs = pids
	return s
}

// withProcess adds an observed process no row is about.
func (s Snapshot) withProcess(p Process) Snapshot {
	s.Processes = append(append([]Process(nil), s.Processes...), p)
	return s
}

func codes(rs []Reason) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.Code)
	}
	return out
}

func pidsOf(ms []Member) []int {
	out := []int{}
	for _, m := range ms {
		out = append(out, m.PID)
	}
	return out
}

func encode(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func strOf(b *bool) string {
	if b == nil {
		return "null"
	}
	return fmt.Sprint(*b)
}
