package scenarios

// Ordinary conventions (docs/design.md#sharing-heals): what the product
// writes stays out of git; serve runs until a signal, whatever its parent
// does.

import (
	"os/exec"
	"strings"
	"testing"
)

// In a git checkout with a leaseholder and an attached client running,
// git sees nothing under .ai/local/state: neither the lease (which carries
// the secret), its lock and peer counter, nor the .gitignore that ignores
// them — while it still sees the checkout's own files.
func TestTheStateDirectoryIsIgnoredByGit(t *testing.T) {
	dir := checkout(t)
	gitIn(t, dir, "init", "--quiet")
	layerEdited(t, dir)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	b := shared(t, dir)
	initialize(t, b, "codex")
	peersOf(t, b)

	status := gitIn(t, dir, "--no-optional-locks", "status", "--porcelain", "--untracked-files=all")
	if !strings.Contains(status, ".ai/manifest.yaml") {
		t.Fatalf("git status does not see the checkout's files:\n%s", status)
	}
	if strings.Contains(status, ".ai/local") {
		t.Fatalf("git status sees what majordomus-mcp wrote:\n%s", status)
	}
}

// gitIn runs git in dir and returns its output; it fails the test if git
// fails.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx(t), "git", args...)
	cmd.Dir = dir
	cmd.Env = append(cmd.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
