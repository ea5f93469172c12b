//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// A checkout whose manifest cannot be read (a link that leads nowhere, a
// FIFO) is still the nearest checkout: the command exits 10 naming that
// manifest, and never serves the checkout around it instead, whose layer
// and board are another project's.
func TestAnUnreadableManifestIsNotSkippedForTheCheckoutAround(t *testing.T) {
	outer := testtemp.Dir(t)
	for _, d := range []string{".ai/repo", "inner/.ai/repo"} {
		if err := os.MkdirAll(filepath.Join(outer, filepath.FromSlash(d)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outer, ".ai", "manifest.yaml"), []byte("schema: ai-repository/v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inner := filepath.Join(outer, "inner")
	manifest := filepath.Join(inner, ".ai", "manifest.yaml")
	for _, tc := range []struct {
		name string
		make func() error
	}{
		{"a link to nothing", func() error { return os.Symlink(filepath.Join(outer, "moved.yaml"), manifest) }},
		{"a FIFO", func() error { return syscall.Mkfifo(manifest, 0o600) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.make(); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(manifest)
			stderr := failedStatus(t, nil, inner, exitContract)
			if !strings.Contains(string(stderr), manifest) {
				t.Fatalf("the failure does not name %s:\n%s", manifest, stderr)
			}
		})
	}
}
