package imports

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// importRules says which project packages each package may import, and
// which other imports it must never use, directly or through any package it
// depends on (see doc.go), and why: a failure says the why, so that it
// teaches the rule.
var importRules = map[string]rule{
	"machine": {nil, []string{"github.com/mark3labs/mcp-go", "github.com/fsnotify/fsnotify", "net/http", "os/exec", "os/signal"},
		"the state machine is pure: it decides, and its ports (internal/node) do the I/O"},
	"registry": {[]string{"registry/proc", "internal/secret", "internal/fswatch"}, []string{"github.com/mark3labs/mcp-go", "os/signal", "database/sql", "modernc.org/sqlite"},
		"the lease file is a leaf: it speaks no MCP, and the runtime registry's SQLite stays in registry/runtimes"},
	"registry/proc": {nil, []string{"github.com/mark3labs/mcp-go", "github.com/fsnotify/fsnotify", "os/signal", "database/sql", "modernc.org/sqlite", "net/http"},
		"what the system says of processes: it asks the system, nothing else"},
	"registry/runtimes": {[]string{"registry", "registry/proc", "fleet"}, []string{"github.com/mark3labs/mcp-go", "os/signal"},
		"the runtime registry stores rows and evidence; it serves nothing"},
	"fleet": {nil, []string{"os", "syscall", "net", "io/fs", "database/sql", "modernc.org/sqlite", "github.com/mark3labs/mcp-go", "github.com/fsnotify/fsnotify"},
		"the inventory is a pure function of a snapshot: nothing in it may reach the host"},
	"transport/together": {nil, nil, "the transport as a whole: its documentation, and the tests that run its parts together"},
	"transport/wire": {[]string{"internal/blank"}, []string{"github.com/fsnotify/fsnotify", "os/signal", "net/http/httptest"},
		"the words every side of the transport speaks: it knows no side"},
	"transport/carry": {[]string{"transport/wire"}, []string{"github.com/fsnotify/fsnotify", "os/signal"},
		"a client's session as it is carried from one backend to the next: what every side records, and replays on whatever serves next"},
	"transport/stdio": {[]string{"transport/wire", "transport/carry"}, []string{"github.com/fsnotify/fsnotify", "os/signal", "net/http"},
		"the stdio side owns stdin and stdout, and serves its client in process: it reaches no network, and relays to no server (transport/bridge does)"},
	"transport/httpserver": {[]string{"transport/wire", "transport/carry", "internal/secret", "internal/rawio"}, []string{"github.com/fsnotify/fsnotify", "os/signal"},
		"the shared HTTP server serves MCP sessions over HTTP; it neither reads stdio nor relays to another server"},
	"transport/bridge": {[]string{"transport/wire", "transport/carry", "internal/secret", "internal/rawio"}, []string{"github.com/fsnotify/fsnotify", "os/signal"},
		"the bridge speaks to the shared server over HTTP, never through its types, and is a backend of the stdio loop, not a part of it"},
	"transport/board": {[]string{"internal/secret"}, []string{"github.com/mark3labs/mcp-go", "github.com/fsnotify/fsnotify", "os/signal"},
		"the board page is a read-only page for a person: it speaks no MCP, and the HTTP server mounts it as a handler"},
	"layer":                  {[]string{"internal/fswatch", "internal/blank"}, []string{"github.com/mark3labs/mcp-go", "net/http"}, "the checkout's index is data: it serves no protocol"},
	"surface":                {[]string{"layer", "internal/blank"}, []string{"github.com/fsnotify/fsnotify", "net/http", "os/signal"}, "the MCP surface is served by the transport, never serves itself"},
	"example":                {nil, nil, "an embedded checkout"},
	"docs":                   {nil, nil, "tests of the documents only"},
	"internal/mcpclient":     {nil, nil, "a test client of a child process"},
	"internal/blank":         {nil, []string{"github.com/mark3labs/mcp-go", "net/http", "os", "os/exec"}, "a rule on text: it reads nothing, runs nothing"},
	"internal/release":       {nil, []string{"os/exec", "net"}, "the build's numbers: nothing to run or reach"},
	"internal/cmd/mkrelease": {[]string{"internal/release"}, []string{"net", "net/http"}, "the release tool builds from the tree, offline"},
	"internal/secret":        {nil, []string{"os", "os/exec"}, "the secret's algebra: the lease file stores it, this only computes"},
	"internal/rawio":         {nil, []string{"github.com/mark3labs/mcp-go", "net/http", "os/exec", "os/signal"}, "reads and writes of descriptors: it knows nothing of what they carry"},
	"internal/demo":          {[]string{"example", "internal/mcpclient", "registry/runtimes"}, nil, "the demo drives the binary as a user would"},
	"internal/browser":       {nil, nil, "opening a link"},
	"internal/fswatch":       {nil, []string{"github.com/mark3labs/mcp-go", "net/http", "os/exec", "os/signal"}, "the process's one file watcher, shared by its watches: it knows nothing of what is watched"},
	"internal/node": {[]string{"internal/browser", "internal/secret", "internal/rawio", "machine", "registry", "registry/proc", "registry/runtimes", "transport/wire", "transport/carry", "transport/stdio", "transport/httpserver", "transport/bridge", "transport/board", "fleet", "layer", "surface", "internal/release"}, []string{"os/signal", "os/exec"},
		"one process wires the leaves together; signals are the command's"},
	"internal/testtemp":  {nil, nil, "a test helper"},
	"internal/testchild": {nil, nil, "a test helper"},
	"scenarios":          {[]string{"example", "internal/mcpclient", "internal/secret"}, nil, "scenarios run the built binary, not its packages"},
	"scenarios/browser":  {[]string{"example", "internal/mcpclient", "internal/secret"}, nil, "scenarios run the built binary, not its packages"},
	"scenarios/bench":    {[]string{"example", "internal/mcpclient"}, nil, "the benchmark runs the built binary, not its packages"},
	"internal/imports":   {nil, nil, "tests of the rules only"},
	"internal/leasecheck": {[]string{"machine", "registry", "registry/proc"}, nil,
		"a test-only package: it model-checks the lease protocol, running registry's code under the machine's decisions, as internal/node wires them"},
	"cmd/majordomus-mcp": {[]string{"internal/node", "internal/demo", "internal/release", "internal/logging", "machine"}, nil,
		"the command line is thin: flags, printing and exit codes around internal/node"},
	"internal/logging": {nil, []string{"github.com/mark3labs/mcp-go", "net/http", "os/exec"},
		"the process's log: where its lines go, never what they say or what the process does"},
}

// A rule is what a package may import of this project, what it must never
// use, and why.
type rule struct {
	project   []string
	forbidden []string
	why       string
}

// testImports are what a package's tests may import besides its rule and
// the fixtures: the transport's parts are tested together, a real server
// and a real stdio loop around a bridge.
var testImports = map[string][]string{
	"transport/together": {"internal/secret", "transport/wire", "transport/carry", "transport/stdio", "transport/httpserver", "transport/bridge", "transport/board"},
	"transport/bridge":   {"transport/httpserver", "transport/stdio"},
}

// standardOnly are the packages that may depend on the standard library
// alone.
var standardOnly = []string{"fleet", "internal/release", "internal/secret"}

const module = "github.com/majordomus-mcp/majordomus-mcp/"

// testFixtures may be imported by any package's tests.
var testFixtures = []string{"example", "internal/mcpclient", "internal/testtemp", "internal/testchild"}

func TestImportRules(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		if pkg == "tools" || strings.Contains(pkg, "testdata") {
			return nil
		}
		rule, ok := importRules[pkg]
		if !ok {
			t.Errorf("package %s has no import rule: add one", pkg)
			return nil
		}
		seen[pkg] = true
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		allowed := rule.project
		if strings.HasSuffix(path, "_test.go") {
			allowed = slices.Concat(allowed, testFixtures, testImports[pkg], []string{pkg}) // an external test imports its own package
		}
		for _, spec := range f.Imports {
			imp, _ := strconv.Unquote(spec.Path.Value)
			if after, ok := strings.CutPrefix(imp, module); ok && !slices.Contains(allowed, after) {
				t.Errorf("%s imports %s; it may import only %v of this project: %s", relPath(root, path), imp, allowed, rule.why)
			}
			for _, bad := range rule.forbidden {
				if imp == bad || strings.HasPrefix(imp, bad+"/") {
					t.Errorf("%s imports %s, which %s must never use: %s", relPath(root, path), imp, pkg, rule.why)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) < 5 {
		t.Fatalf("only %d packages checked: the walk is wrong", len(seen))
	}
}

func relPath(root, path string) string {
	r, _ := filepath.Rel(root, path)
	return r
}

// Every package's whole dependency graph (not its tests'), on each system
// the binary is built for, keeps the rules: a project package reached
// through another still counts, a standard-only package reaches no module,
// and a forbidden module (not a standard package: zap itself uses
// net/http) is not reached except through a project package allowed to
// use it.
func TestTransitiveDependencies(t *testing.T) {
	for _, goos := range []string{"linux", "darwin", "windows"} {
		t.Run(goos, func(t *testing.T) {
			cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}", "github.com/majordomus-mcp/majordomus-mcp/...")
			cmd.Env = append(os.Environ(), "GOOS="+goos, "CGO_ENABLED=0")
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("go list: %v", err)
			}
			deps := map[string][]string{}
			for line := range strings.Lines(string(out)) {
				fields := strings.Fields(line)
				if pkg, ok := strings.CutPrefix(fields[0], module); ok {
					deps[pkg] = fields[1:]
				}
			}
			checked := 0
			for pkg, rule := range importRules {
				all, ok := deps[pkg]
				if !ok {
					continue
				}
				checked++
				through := map[string]bool{} // what the allowed project packages bring
				for _, a := range rule.project {
					through[module+a] = true
					for _, d := range deps[a] {
						through[d] = true
					}
				}
				for _, dep := range all {
					if strings.HasPrefix(dep, module) {
						if !through[dep] {
							t.Errorf("%s depends on %s; it may depend only on %v of this project: %s", pkg, dep, rule.project, rule.why)
						}
						continue
					}
					external := strings.Contains(strings.SplitN(dep, "/", 2)[0], ".")
					if external && slices.Contains(standardOnly, pkg) {
						t.Errorf("%s depends on %s: it may depend on the standard library alone", pkg, dep)
					}
					for _, bad := range rule.forbidden {
						if external && !through[dep] && (dep == bad || strings.HasPrefix(dep, bad+"/")) {
							t.Errorf("%s depends on %s, which it must never use: %s", pkg, dep, rule.why)
						}
					}
				}
			}
			if checked < len(importRules)-1 {
				t.Fatalf("only %d packages checked: the listing is wrong", checked)
			}
		})
	}
}
