package runtimes

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testchild"
)

// TestMain runs the test binary in a child's role when it is one: "read"
// reads the registry at $REGISTRY and says how many rows, or why not.
func TestMain(m *testing.M) {
	if testchild.Role() == "read" {
		rows, err := Read(context.Background(), os.Getenv("REGISTRY"))
		if err != nil {
			fmt.Println("error:", err)
		} else {
			fmt.Println("rows:", len(rows))
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
