package scenarios

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/example"
	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// bin is the majordomus-mcp binary built once for all scenarios.
var bin string

// wait bounds every wait for an event: generous, because a loaded 2-core
// machine is slow, and never a sleep — each wait ends when the event comes.
const wait = 30 * time.Second

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "majordomus-scenarios-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Chmod(dir, 0o755) // some scenarios run it as an unprivileged user
	bin = filepath.Join(dir, "majordomus-mcp")
	// Every server a scenario starts registers in a fleet registry of the
	// run's own, never in the user's; fleet scenarios set one each.
	os.Setenv("MAJORDOMUS_MCP_REGISTRY", filepath.Join(dir, "registry.db"))
	// SCENARIOS_RACE=1 builds the binary with the race detector: a race in
	// any process then shows on its stderr and makes it exit 66.
	args := []string{"build", "-o", bin}
	if os.Getenv("SCENARIOS_RACE") == "1" {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "github.com/majordomus-mcp/majordomus-mcp/cmd/majordomus-mcp")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building majordomus-mcp:", err)
		os.Exit(1)
	}
	waitInParallel()
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// waitInParallel lets four of the scenarios that call t.Parallel run at
// once where the machine has fewer processors (go test's default is one a
// processor), unless -parallel says otherwise: those scenarios spend their
// time waiting on their processes' timers (graces, heartbeats, retries),
// using a tenth of a processor or less, and run alone they were most of
// the suite's time.
func waitInParallel() {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set && runtime.GOMAXPROCS(0) < 4 {
		flag.Set("test.parallel", "4")
	}
}

// trackSources reads every source file of the module once, from inside a
// test: go test keys its cache on the files a test opens, and the binary
// these scenarios run is built from sources the test binary does not
// import. Without it, `go test ./...` could answer from its cache after a
// change to cmd/ or transport/.
var trackSources = sync.OnceFunc(func() {
	root := filepath.Join("..")
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "scenarios") {
			return filepath.SkipDir
		}
		if name := d.Name(); strings.HasSuffix(name, ".go") || name == "go.mod" || name == "go.sum" {
			os.ReadFile(path)
		}
		return nil
	})
})

// checkout writes the example checkout into a fresh directory. When the
// test ends — after its processes were stopped — nothing outside .ai/local/
// may have changed but what the test changed itself (see layerEdited).
// The directory it is made in is 0755 whatever the umask (t.TempDir's
// would be 0775 under umask 002), so that no scenario depends on the
// umask; TestACheckoutClonedUnderUmask002Shares makes that case itself.
func checkout(t *testing.T) string {
	t.Helper()
	parent := t.TempDir()
	if err := os.Chmod(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, "example")
	copyExample(t, dir)
	return dir
}

// baselines holds, per checkout, the digest of what lies outside .ai/local/.
var baselines sync.Map

func copyExample(t *testing.T, dir string) {
	t.Helper()
	trackSources()
	if err := example.WriteCheckout(dir); err != nil {
		t.Fatal(err)
	}
	layerEdited(t, dir)
	t.Cleanup(func() {
		want, _ := baselines.Load(dir)
		if got := snapshot(t, dir); got != want {
			t.Errorf("files outside .ai/local/ of %s were written by majordomus-mcp", dir)
		}
	})
}

// layerEdited records that the test itself changed files of the checkout.
func layerEdited(t *testing.T, dir string) {
	t.Helper()
	baselines.Store(dir, snapshot(t, dir))
}

// editReviewPrompt appends line to dir's review prompt, as a user edits
// the layer, and records the edit as the test's own.
func editReviewPrompt(t *testing.T, dir, line string) {
	t.Helper()
	path := filepath.Join(dir, ".ai/repo/prompts/review.md")
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, append(data, line...), 0o644); err != nil {
		t.Fatal(err)
	}
	layerEdited(t, dir)
}

// ctx bounds one scenario step.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return c
}

// start spawns majordomus-mcp in dir with args; the process is killed at
// the end of the test if it is still running.
func start(t *testing.T, dir string, args ...string) *mcpclient.Process {
	t.Helper()
	return startBinary(t, bin, dir, args...)
}

// startBinary is start with another copy of the binary.
func startBinary(t *testing.T, bin, dir string, args ...string) *mcpclient.Process {
	t.Helper()
	p, err := mcpclient.Start(bin, args, dir, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	killedAtEnd(t, p, bin, args)
	return p
}

// killedAtEnd kills p at the end of the test if it still runs, and shows
// its stderr if the test failed.
func killedAtEnd(t *testing.T, p *mcpclient.Process, bin string, args []string) {
	t.Cleanup(func() {
		p.Kill(context.Background())
		if t.Failed() {
			t.Logf("stderr of %s %s:\n%s", filepath.Base(bin), strings.Join(args, " "), strings.Join(p.Logs(), "\n"))
		}
	})
}

// runOnce runs majordomus-mcp to completion with stdin from input and
// returns its exit code, stdout and stderr.
func runOnce(t *testing.T, dir, input string, args ...string) (int, string, string) {
	t.Helper()
	return runBinaryOnce(t, bin, dir, input, args...)
}

// runBinaryOnce is runOnce with another copy of the binary.
func runBinaryOnce(t *testing.T, bin, dir, input string, args ...string) (int, string, string) {
	t.Helper()
	trackSources()
	cmd := exec.CommandContext(ctx(t), bin, args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(input)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if exitErr, ok := err.(*exec.ExitError); ok {
		code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

// assertOnlyFrames fails unless every stdout line is one JSON-RPC 2.0 message
// (or a batch of them).
func assertOnlyFrames(t *testing.T, frames [][]byte) {
	t.Helper()
	for _, f := range frames {
		var one struct {
			JSONRPC string `json:"jsonrpc"`
		}
		var batch []struct {
			JSONRPC string `json:"jsonrpc"`
		}
		if json.Unmarshal(f, &one) == nil && one.JSONRPC == "2.0" {
			continue
		}
		if json.Unmarshal(f, &batch) == nil && len(batch) > 0 && batch[0].JSONRPC == "2.0" {
			continue
		}
		t.Errorf("stdout carried something that is not a JSON-RPC frame: %q", f)
	}
}

// writeBroken adds the object with broken front matter to a checkout.
func writeBroken(t *testing.T, dir string) {
	t.Helper()
	if err := example.WriteBrokenObject(dir); err != nil {
		t.Fatal(err)
	}
	layerEdited(t, dir)
}
