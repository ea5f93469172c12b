package release

import (
	"fmt"
	"os"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testchild"
)

func TestMain(m *testing.M) {
	if testchild.Role() == "replaced" {
		// the file this process runs from is replaced, as an upgrade does,
		// before it says what code it runs
		exe, _ := os.Executable()
		os.Remove(exe)
		os.WriteFile(exe, []byte("another build"), 0o700)
		fmt.Println(StartupRevision().Startup)
		return
	}
	os.Exit(m.Run())
}
