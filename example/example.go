// Package example embeds a small but realistic checkout whose .ai/ layer the
// demo and the tests serve: a few rules, an ADR, a prompt and a glossary.
// A separate overlay adds one object with broken front matter, for the tests
// of a degraded index; the example itself is clean.
package example

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

//go:embed all:checkout
var checkout embed.FS

//go:embed all:broken
var broken embed.FS

// BrokenObject is the path, relative to a checkout, of the overlay's object.
const BrokenObject = ".ai/repo/rules/broken.md"

// WriteCheckout copies the example checkout into dir (created if needed).
func WriteCheckout(dir string) error { return copyTree(checkout, "checkout", dir) }

// WriteBrokenObject adds the object with broken front matter to a checkout.
func WriteBrokenObject(dir string) error { return copyTree(broken, "broken", dir) }

func copyTree(src fs.FS, top, dir string) error {
	sub, err := fs.Sub(src, top)
	if err != nil {
		return err
	}
	return fs.WalkDir(sub, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(path))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := fs.ReadFile(sub, path)
		if err != nil {
			return err
		}
		if err := os.WriteFile(target, data, 0o644); err != nil {
			return fmt.Errorf("writing the example: %w", err)
		}
		return nil
	})
}
