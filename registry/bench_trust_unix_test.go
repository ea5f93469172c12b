//go:build unix

package registry

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// BenchmarkTrusted is one Trusted call on a checkout's existing lease, as
// every election attempt makes it: a checkout of private directories,
// where no group is looked up.
func BenchmarkTrusted(b *testing.B) {
	lease := benchLease(b)
	for b.Loop() {
		if err := Trusted(lease); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTrustedGroupWritable is the same check on a checkout cloned
// under umask 002, every directory from its parent down 0775 (the group
// files read once, then stat'ed on every call).
func BenchmarkTrustedGroupWritable(b *testing.B) {
	lease := benchLease(b)
	parent := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(lease))))))
	for _, rel := range []string{".", "repo", "repo/.ai", "repo/.ai/local", "repo/.ai/local/state"} {
		groupMayWriteDir(b, filepath.Join(parent, rel), 0o775)
	}
	groups := testGroups(b, "", "")
	for b.Loop() {
		if err := trustedWith(lease, groups.check()); err != nil {
			b.Fatal(err)
		}
	}
}

func benchLease(b *testing.B) string {
	lease := Path(filepath.Join(testtemp.Dir(b), "repo"), "")
	if err := os.MkdirAll(filepath.Dir(lease), 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(lease, []byte("{}"), 0o600); err != nil {
		b.Fatal(err)
	}
	return lease
}
