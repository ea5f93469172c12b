//go:build !linux

package registry

import (
	"os"

	"github.com/majordomus-mcp/majordomus-mcp/registry/proc"
)

// Only Linux has the namespaces that put a lease's owner out of its
// judges' sight ([proc.Namespaces]): elsewhere a lease is judged by its
// owner's pid alone, and held by nothing (on Windows, where locks are
// mandatory, a lock would even keep its readers out).

func holdFile(string) (*os.File, error) { return nil, nil }

func holderOf(*os.File) proc.Liveness { return proc.OwnerUnknown }
