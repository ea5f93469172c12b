//go:build linux

package scenarios

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// No client sees the layer's generation go back (docs/design.md "the
// shared state outlives every process": never back to 1), whichever way
// it moves: a bridged client whose server dies while the lease directory
// is unusable is served alone, and a client served alone joins the shared
// server once the directory is back.
func TestTheLayersGenerationNeverGoesBackForAClientThatMovesAloneOrBack(t *testing.T) {
	dir := checkout(t)
	a, b, _ := leaseholderAndTwo(t, dir)
	editTold(t, dir, b, "5. Is the README still true?\n")
	editTold(t, dir, b, "6. Are the tests still true?\n")
	if g := generationTold(t, b); g != 3 {
		t.Fatalf("generation %d after two changes, want 3", g)
	}

	// A file takes the lease directory's place, and gives it back, in one
	// step each: no process finds the path missing and makes it anew.
	leaseDir := filepath.Dir(leasePath(dir))
	exchange := func() {
		t.Helper()
		if err := unix.Renameat2(unix.AT_FDCWD, leaseDir+".block", unix.AT_FDCWD, leaseDir, unix.RENAME_EXCHANGE); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(leaseDir+".block", []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	exchange()
	a.Signal(syscall.SIGKILL)
	a.Wait(ctx(t))
	g := generationTold(t, b) // it fails over, finds nothing to share: alone
	if _, err := b.WaitLog(ctx(t), "cannot use the shared server"); err != nil {
		t.Fatal(err)
	}
	if g < 3 {
		t.Errorf("a client told generation 3 is told %d once served alone", g)
	}

	c := shared(t, dir)
	initialize(t, c, "opencode")
	if _, err := c.WaitLog(ctx(t), "cannot use the shared server"); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"7. a\n", "8. b\n", "9. c\n", "10. d\n"} {
		editTold(t, dir, c, line)
	}
	alone := generationTold(t, c)
	exchange()
	if err := os.Remove(leaseDir + ".block"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitLog(ctx(t), "joined the checkout's shared server"); err != nil {
		t.Fatal(err)
	}
	if g := generationTold(t, c); g < alone {
		t.Errorf("a client served alone told generation %d is told %d once it joins the shared server", alone, g)
	}
}

// The generation a client read anywhere it is said — majordomus_server, the
// majordomus://repository and majordomus://server resources — is as much
// told as majordomus_repository's: a client that read it there and is then
// served alone is never told an older one.
func TestTheLayersGenerationReadAnywhereNeverGoesBackForAClientServedAlone(t *testing.T) {
	for _, read := range []struct {
		name string
		gen  func(t *testing.T, p *mcpclient.Process) int
	}{
		{"majordomus_server", generationOfServer},
		{"majordomus://repository", func(t *testing.T, p *mcpclient.Process) int { return generationRead(t, p, "majordomus://repository") }},
		{"majordomus://server", func(t *testing.T, p *mcpclient.Process) int { return generationRead(t, p, "majordomus://server") }},
	} {
		t.Run(read.name, func(t *testing.T) {
			dir := checkout(t)
			a, b, _ := leaseholderAndTwo(t, dir)
			editTold(t, dir, b, "5. Is the README still true?\n")
			editTold(t, dir, b, "6. Are the tests still true?\n")
			if g := read.gen(t, b); g != 3 {
				t.Fatalf("generation %d after two changes, want 3", g)
			}
			leaseDir := filepath.Dir(leasePath(dir))
			if err := os.WriteFile(leaseDir+".block", []byte("not a directory"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := unix.Renameat2(unix.AT_FDCWD, leaseDir+".block", unix.AT_FDCWD, leaseDir, unix.RENAME_EXCHANGE); err != nil {
				t.Fatal(err)
			}
			a.Signal(syscall.SIGKILL)
			a.Wait(ctx(t))
			if _, err := b.WaitLog(ctx(t), "cannot use the shared server"); err != nil {
				t.Fatal(err)
			}
			if g := read.gen(t, b); g < 3 {
				t.Errorf("a client that read generation 3 in %s is told %d once served alone", read.name, g)
			}
		})
	}
}

// generationOfServer is the layer's generation majordomus_server tells p.
func generationOfServer(t *testing.T, p *mcpclient.Process) int {
	t.Helper()
	var srv struct{ Generation int }
	if isErr, text, err := p.CallTool(ctx(t), "majordomus_server", nil, &srv); err != nil || isErr {
		t.Fatalf("majordomus_server: %s %v", text, err)
	}
	return srv.Generation
}

// generationRead is the layer's generation that reading the resource uri
// tells p.
func generationRead(t *testing.T, p *mcpclient.Process, uri string) int {
	t.Helper()
	r, err := p.Call(ctx(t), "resources/read", map[string]any{"uri": uri})
	if err != nil || r.Error != nil {
		t.Fatalf("resources/read %s: %+v %v", uri, r.Error, err)
	}
	var read struct {
		Contents []struct{ Text string }
	}
	var view struct{ Generation int }
	if err := json.Unmarshal(r.Result, &read); err != nil || len(read.Contents) != 1 || json.Unmarshal([]byte(read.Contents[0].Text), &view) != nil {
		t.Fatalf("resources/read %s: %s", uri, r.Result)
	}
	return view.Generation
}
