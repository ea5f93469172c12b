package layer

import (
	"errors"
	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindCheckout(t *testing.T) {
	base, err := filepath.EvalSymlinks(testtemp.Dir(t))
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "checkout")
	writeTree(t, root, map[string]string{".ai/manifest.yaml": testManifest})
	nested := filepath.Join(root, "a", "b", "c")
	bare := filepath.Join(base, "bare", "x")
	decoy := filepath.Join(base, "decoy") // .ai/manifest.yaml is a directory there
	for _, d := range []string{nested, bare, filepath.Join(decoy, ".ai", "manifest.yaml")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	looped := filepath.Join(root, "looped") // its .ai a link to itself: a broken checkout, not none
	if err := os.MkdirAll(looped, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".ai", filepath.Join(looped, ".ai")); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(filepath.Join(root, "a"), link); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		start   string
		want    string
		wantErr string // substring; "" = success
	}{
		{"root itself", root, root, ""},
		{"nested directory", nested, root, ""},
		{"symlinked start resolves", filepath.Join(link, "b"), root, ""},
		{"none found", bare, "", "no checkout found from " + bare + ": no ancestor directory holds .ai/manifest.yaml"},
		{"manifest that is a directory does not count", decoy, "", "no checkout found from " + decoy},
		{"an .ai that is a loop of links is its directory's", looped, looped, ""},
		{"missing start", filepath.Join(base, "nope"), "", "no checkout found from " + filepath.Join(base, "nope")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FindCheckout(tt.start)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrNoCheckout) {
					t.Fatalf("FindCheckout(%s) error = %v, want ErrNoCheckout", tt.start, err)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %q does not contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("FindCheckout(%s) = %q, %v; want %q", tt.start, got, err, tt.want)
			}
		})
	}
}
