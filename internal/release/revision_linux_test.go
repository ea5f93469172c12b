package release

import (
	"path/filepath"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testchild"
)

// A process whose file was replaced since it started (an upgrade renamed
// over it, or removed it) still says what code it runs: the fleet
// registry's row of a server that registers then names the build it
// started from. (It named whatever file had the name by then, and the
// inventory saw one revision where two ran.)
func TestTheRevisionIsTheCodeThatRunsNotTheFileNamedSo(t *testing.T) {
	exe := testchild.Copy(t, filepath.Join(t.TempDir(), "majordomus-mcp"), 0o700)
	child := testchild.StartAt(t, exe, "replaced")
	if got, want := child.Line(t), StartupRevision().Startup; got != want {
		t.Fatalf("a process whose file was replaced says it runs %q; it runs %q", got, want)
	}
}
