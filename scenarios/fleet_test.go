package scenarios

// The fleet inventory (F1) on real processes: servers register in a
// registry of the scenario's own, `fleet` and majordomus_fleet_inventory
// observe them through /proc, and what they answer follows what the
// processes do — start, die by SIGTERM or kill -9, fail to register, come
// from two cohorts. Every scenario sets its own registry through the
// environment, so that none ever shares the user's.

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

const (
	registryEnv = "MAJORDOMUS_MCP_REGISTRY"
	cohortEnv   = "MAJORDOMUS_MCP_CLIENT_COHORT_ID"
)

// inventory is the part of the answer the scenarios check.
type inventory struct {
	InventoryComplete     bool     `json:"inventory_complete"`
	MutationGateSatisfied bool     `json:"mutation_gate_satisfied"`
	ExactlyOnePerProfile  bool     `json:"exactly_one_per_profile"`
	BlockedReason         *string  `json:"blocked_reason"`
	RunningMembers        []member `json:"running_members"`
	UnexpectedMembers     []member `json:"unexpected_members"`
	MissingMembers        []member `json:"missing_members"`
	DuplicateMembers      []member `json:"duplicate_members"`
	StaleMembers          []member `json:"stale_members"`
	DrainingMembers       []member `json:"draining_members"`
	UnregisteredProcesses []member `json:"unregistered_processes"`
	BindingMismatches     []member `json:"repository_binding_mismatches"`
	IncompleteReasons     []reason `json:"incomplete_reasons"`
	SingleCohort          *bool    `json:"single_cohort"`
	MixedCohort           *bool    `json:"mixed_cohort"`
	MixedRevision         *bool    `json:"mixed_revision"`
	StartupRevisions      []string `json:"startup_revisions"`
	MutationsPerformed    []string `json:"mutations_performed"`
	AnsweringNamespace    string   `json:"answering_namespace"`
}

// member is the part of a listed member the scenarios check.
type member struct {
	Profile string  `json:"profile"`
	PID     int     `json:"pid"`
	Cohort  *string `json:"cohort,omitempty"`
	Reason  string  `json:"reason,omitempty"`
	Detail  string  `json:"detail,omitempty"`
}

// reason is one of an inventory's reasons.
type reason struct {
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

func (inv inventory) blocked() string {
	if inv.BlockedReason == nil {
		return ""
	}
	return *inv.BlockedReason
}

// fleetCheckout is the example checkout with a roster of two profiles.
func fleetCheckout(t *testing.T) string {
	t.Helper()
	dir := checkout(t)
	manifest := "schema: ai-repository/v1\nname: example\nmcp:\n  profiles:\n" +
		"    - {name: default, role: shared}\n    - {name: review, role: reviewer}\n"
	if err := os.WriteFile(filepath.Join(dir, ".ai/manifest.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	layerEdited(t, dir)
	return dir
}

// fleetEnv is this process's environment with the registry set and the
// cohort set to cohort ("" = none, so the launching parent is the cohort).
func fleetEnv(registry, cohort string) []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, registryEnv+"=") || strings.HasPrefix(kv, cohortEnv+"=")
	})
	env = append(env, registryEnv+"="+registry)
	if cohort != "" {
		env = append(env, cohortEnv+"="+cohort)
	}
	return env
}

// serveProfile starts `serve` for profile and waits until it serves (its
// registration, or the failure to register, is logged before that).
func serveProfile(t *testing.T, dir, registry, cohort, profile string) *mcpclient.Process {
	t.Helper()
	p := startEnv(t, dir, fleetEnv(registry, cohort), "serve", "--http-port", "0", "--profile", profile)
	serverURL(t, p)
	// The row is written in the background once the server listens.
	if _, err := p.WaitLog(ctx(t), "registered this server in the fleet registry"); err != nil {
		t.Fatal(err)
	}
	return p
}

// startEnv is start with an environment of its own.
func startEnv(t *testing.T, dir string, env []string, args ...string) *mcpclient.Process {
	t.Helper()
	p, err := mcpclient.Start(bin, args, dir, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Kill(ctx(t))
		if t.Failed() {
			t.Logf("stderr of %s:\n%s", strings.Join(args, " "), strings.Join(p.Logs(), "\n"))
		}
	})
	return p
}

// fleet runs `majordomus-mcp fleet` and returns its exit code and answer.
func fleet(t *testing.T, dir, registry string, args ...string) (int, inventory) {
	t.Helper()
	cmd := exec.CommandContext(ctx(t), bin, append([]string{"fleet"}, args...)...)
	cmd.Dir, cmd.Env = dir, fleetEnv(registry, "")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	code := 0
	if err := cmd.Run(); err != nil {
		exitErr, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = exitErr.ExitCode()
	}
	var inv inventory
	if code == 0 || code == 10 {
		if err := json.Unmarshal(stdout.Bytes(), &inv); err != nil {
			t.Fatalf("fleet printed something that is not an inventory: %v\n%s\n%s", err, stdout.Bytes(), stderr.Bytes())
		}
	}
	return code, inv
}

func pids(ps ...*mcpclient.Process) []int {
	out := []int{}
	for _, p := range ps {
		out = append(out, p.Cmd.Process.Pid)
	}
	return out
}

func digest(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// F1: servers of two profiles agree with their rows; an unexpected profile,
// a SIGTERM (its row removed) and a kill -9 (its row stale) change the
// answer; the command and the tool agree; nothing is written.
func TestFleetInventoryFollowsRealServers(t *testing.T) {
	dir := fleetCheckout(t)
	registry := filepath.Join(t.TempDir(), "state", "registry.db")
	// The cohort is the launching parent: this test. --profile '' (a host's
	// variable left unset) is the default profile, in its lease and its row.
	def := serveProfile(t, dir, registry, "", "")
	review := serveProfile(t, dir, registry, "", "review")

	before := digest(t, registry)
	code, inv := fleet(t, dir, registry)
	if code != 0 || !inv.MutationGateSatisfied || !inv.InventoryComplete || !inv.ExactlyOnePerProfile || inv.blocked() != "" {
		t.Fatalf("two profiles, two servers, one parent: exit %d, %+v", code, inv)
	}
	var running []int
	for _, m := range inv.RunningMembers {
		running = append(running, m.PID)
	}
	if !slices.Equal(running, pids(def, review)) || inv.SingleCohort == nil || !*inv.SingleCohort ||
		inv.MixedRevision == nil || *inv.MixedRevision || len(inv.StartupRevisions) != 1 || len(inv.MutationsPerformed) != 0 {
		t.Fatalf("running %v (want %v), %+v", running, pids(def, review), inv)
	}

	// The tool, asked through a bridged client, answers the same verdict.
	client := startEnv(t, dir, fleetEnv(registry, ""), "--http-port", "0")
	initialize(t, client, "claude-code")
	var viaTool inventory
	if isErr, text, err := client.CallTool(ctx(t), "majordomus_fleet_inventory", nil, &viaTool); err != nil || isErr {
		t.Fatalf("majordomus_fleet_inventory: %s %v", text, err)
	}
	if viaTool.AnsweringNamespace != "default" || inv.AnsweringNamespace != "cli" {
		t.Errorf("answering namespaces: tool %q, command %q", viaTool.AnsweringNamespace, inv.AnsweringNamespace)
	}
	viaTool.AnsweringNamespace = inv.AnsweringNamespace
	if got, want := mustJSON(t, viaTool), mustJSON(t, inv); got != want {
		t.Fatalf("the tool and the command disagree:\n%s\n%s", got, want)
	}
	if isErr, _, _ := client.CallTool(ctx(t), "majordomus_fleet_inventory", map[string]any{"process": 1}, nil); !isErr {
		t.Error("the tool took a parameter: nothing a caller says is evidence")
	}
	if digest(t, registry) != before {
		t.Fatal("an inventory changed the registry file's bytes")
	}

	// A profile outside the roster is unexpected, not a duplicate.
	extra := serveProfile(t, dir, registry, "", "extra")
	code, inv = fleet(t, dir, registry)
	if code != 10 || inv.blocked() != "unexpected_member" || len(inv.UnexpectedMembers) != 1 ||
		inv.UnexpectedMembers[0].PID != pids(extra)[0] || len(inv.DuplicateMembers) != 0 {
		t.Fatalf("an unexpected profile: exit %d, %+v", code, inv)
	}

	// SIGTERM: a clean exit removes its row; the fleet is whole again.
	extra.Signal(syscall.SIGTERM)
	if _, err := extra.WaitLog(ctx(t), "removed this server's row from the fleet registry"); err != nil {
		t.Fatal(err)
	}
	extra.Wait(ctx(t))
	if code, inv = fleet(t, dir, registry); code != 0 || len(inv.StaleMembers) != 0 {
		t.Fatalf("after a clean exit: exit %d, %+v", code, inv)
	}

	// kill -9: its row stays, stale (dead), and its profile is missing.
	review.Kill(ctx(t))
	code, inv = fleet(t, dir, registry)
	if code != 10 || inv.blocked() != "missing_member" || len(inv.MissingMembers) != 1 || inv.MissingMembers[0].Profile != "review" ||
		len(inv.StaleMembers) != 1 || inv.StaleMembers[0].PID != pids(review)[0] || inv.StaleMembers[0].Reason != "dead" {
		t.Fatalf("after kill -9: exit %d, %+v", code, inv)
	}
}

// F1: a server whose registry cannot be written (a file where its
// directory should be: root cannot bypass that) still serves, and the
// inventory lists it as unregistered and is incomplete.
func TestFleetListsAServerThatCouldNotRegister(t *testing.T) {
	dir := fleetCheckout(t)
	tmp := t.TempDir()
	registry := filepath.Join(tmp, "registry.db")
	blocker := filepath.Join(tmp, "blocker")
	if err := os.WriteFile(blocker, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	serveProfile(t, dir, registry, "c1", "default")
	unregistered := startEnv(t, dir, fleetEnv(filepath.Join(blocker, "registry.db"), "c1"), "serve", "--http-port", "0", "--profile", "review")
	if _, err := unregistered.WaitLog(ctx(t), "cannot register this server in the fleet registry", "serving anyway"); err != nil {
		t.Fatal(err)
	}
	serverURL(t, unregistered)
	if id := identity(t, connect(t, dir, "--profile", "review")); id["profile"] != "review" {
		t.Fatalf("the unregistered server does not serve: %v", id)
	}

	code, inv := fleet(t, dir, registry)
	if code != 10 || inv.InventoryComplete || inv.blocked() != "unregistered_process" ||
		len(inv.UnregisteredProcesses) != 1 || inv.UnregisteredProcesses[0].PID != pids(unregistered)[0] {
		t.Fatalf("a server that could not register: exit %d, %+v", code, inv)
	}
}

// F1: two cohorts (two clients launching the fleet's servers) are mixed,
// whatever their revisions. What a client set (a cohort id here, with a
// bidi override and a terminal escape) reaches the operator escaped, on
// stdout and in the error line alike.
func TestFleetReportsMixedCohorts(t *testing.T) {
	dir := fleetCheckout(t)
	registry := filepath.Join(t.TempDir(), "registry.db")
	serveProfile(t, dir, registry, "claude-code-1", "default")
	serveProfile(t, dir, registry, "codex-7\u202e\x1b[31m", "review")

	code, inv := fleet(t, dir, registry)
	if code != 10 || !inv.InventoryComplete || inv.blocked() != "mixed_cohort" || inv.MixedCohort == nil || !*inv.MixedCohort ||
		inv.SingleCohort == nil || *inv.SingleCohort || inv.MixedRevision == nil || *inv.MixedRevision {
		t.Fatalf("two cohorts: exit %d, %+v", code, inv)
	}
	cmd := exec.CommandContext(ctx(t), bin, "fleet")
	cmd.Dir, cmd.Env = dir, fleetEnv(registry, "")
	out, _ := cmd.CombinedOutput()
	if strings.ContainsAny(string(out), "\u202e\x1b") || !strings.Contains(string(out), "codex-7") {
		t.Fatalf("fleet prints what a client set unescaped:\n%q", out)
	}
}

// F1: a server that lost its lease and still serves a session is draining,
// neither running nor a duplicate of the server that took over; when its
// last session ends it ends, removes its row, and the fleet is whole. (Its
// client left first: one still there would be handed over at once, and
// its process would take the lease it found gone.)
func TestFleetCountsALeaseLostServerAsDraining(t *testing.T) {
	dir := fleetCheckout(t)
	registry := filepath.Join(t.TempDir(), "registry.db")
	old := startEnv(t, dir, fleetEnv(registry, "c1"), "--http-port", "0")
	initialize(t, old, "claude-code")
	serverURL(t, old)
	oldServer := connect(t, dir)
	plain := openPlainSession(t, oldServer) // a plain HTTP session keeps the lease-lost server serving (R6)
	old.CloseStdin()
	if _, err := old.WaitLog(ctx(t), `"to":"owner-left"`); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(leasePath(dir)); err != nil {
		t.Fatal(err)
	}
	if _, err := old.WaitLog(ctx(t), "recorded in the fleet registry that this server lost its lease"); err != nil {
		t.Fatal(err)
	}
	current := serveProfile(t, dir, registry, "c1", "default")

	code, inv := fleet(t, dir, registry, "--roster", "default")
	if code != 10 || inv.blocked() != "draining_member" || len(inv.DuplicateMembers) != 0 || !inv.ExactlyOnePerProfile ||
		len(inv.RunningMembers) != 1 || inv.RunningMembers[0].PID != pids(current)[0] ||
		len(inv.DrainingMembers) != 1 || inv.DrainingMembers[0].PID != pids(old)[0] {
		t.Fatalf("a lease-lost server still serving: exit %d, %+v", code, inv)
	}

	httpDo(t, http.MethodDelete, oldServer.URL, nil, oldServer.with(map[string]string{"Mcp-Session-Id": plain, "Mcp-Protocol-Version": "2025-11-25"}))
	exitsWith(t, old, 0)
	if code, inv = fleet(t, dir, registry, "--roster", "default"); code != 0 || len(inv.StaleMembers) != 0 {
		t.Fatalf("after the draining server ended: exit %d, %+v", code, inv)
	}
}

// F1, its client still there: the process hands its client over at once
// and, the lease gone, wins it again; its new server is the running member
// and its old one, still serving a plain session, the draining one, both
// under its pid. When that session ends, the old server leaves and the
// fleet is whole.
func TestFleetCountsTheDrainingServerBesideItsProcesssNewOne(t *testing.T) {
	dir := fleetCheckout(t)
	registry := filepath.Join(t.TempDir(), "registry.db")
	p := startEnv(t, dir, fleetEnv(registry, "c1"), "--http-port", "0")
	initialize(t, p, "claude-code")
	serverURL(t, p)
	oldServer := connect(t, dir)
	plain := openPlainSession(t, oldServer)
	if err := os.Remove(leasePath(dir)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.WaitLog(ctx(t), "took over as the shared server"); err != nil {
		t.Fatal(err)
	}
	if err := p.WaitLogs(ctx(t), 2, "registered this server in the fleet registry"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.WaitLog(ctx(t), "recorded in the fleet registry that this server lost its lease"); err != nil {
		t.Fatal(err)
	}
	code, inv := fleet(t, dir, registry, "--roster", "default")
	pid := pids(p)[0]
	if code != 10 || inv.blocked() != "draining_member" || len(inv.StaleMembers) != 0 || !inv.ExactlyOnePerProfile ||
		len(inv.RunningMembers) != 1 || inv.RunningMembers[0].PID != pid || len(inv.DrainingMembers) != 1 || inv.DrainingMembers[0].PID != pid {
		t.Fatalf("a process serving beside its draining server: exit %d, %+v", code, inv)
	}
	httpDo(t, http.MethodDelete, oldServer.URL, nil, oldServer.with(map[string]string{"Mcp-Session-Id": plain, "Mcp-Protocol-Version": "2025-11-25"}))
	if _, err := p.WaitLog(ctx(t), "shared server stopped with its last session"); err != nil {
		t.Fatal(err)
	}
	if code, inv = fleet(t, dir, registry, "--roster", "default"); code != 0 || len(inv.StaleMembers) != 0 || len(inv.DrainingMembers) != 0 {
		t.Fatalf("after the draining server ended: exit %d, %+v", code, inv)
	}
}

// F1: fleet's exit codes: 0 and 10 above; 12 outside a checkout, 2 for a
// bad roster; --roster replaces the manifest's; a missing registry is not
// created.
func TestFleetExitCodes(t *testing.T) {
	registry := filepath.Join(t.TempDir(), "none", "registry.db")
	if code, _ := fleet(t, t.TempDir(), registry); code != 12 {
		t.Errorf("outside a checkout: exit %d, want 12", code)
	}
	dir := fleetCheckout(t)
	if code, _ := fleet(t, dir, registry, "--roster", "default,,review"); code != 2 {
		t.Errorf("a bad roster: exit %d, want 2", code)
	}
	code, inv := fleet(t, dir, registry, "--roster", "solo")
	if code != 10 || inv.blocked() != "missing_member" || len(inv.MissingMembers) != 1 || inv.MissingMembers[0].Profile != "solo" {
		t.Errorf("no server at all: exit %d, %+v", code, inv)
	}
	if _, err := os.Stat(filepath.Dir(registry)); !os.IsNotExist(err) {
		t.Errorf("an inventory created the registry's directory (%v)", err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
