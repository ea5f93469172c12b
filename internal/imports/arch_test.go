package imports

import (
	"go/build/constraint"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// architectures are the GOARCH values a file name or a build constraint
// may name.
var architectures = []string{"386", "amd64", "arm", "arm64", "loong64", "mips", "mipsle", "mips64", "mips64le",
	"ppc64", "ppc64le", "riscv64", "s390x", "wasm"}

// No file of this module tells one architecture from another, by its name
// or by its build constraint: what differs between platforms is the
// operating system (its _linux, _darwin, _windows and _other files). So
// CI vets and compiles the tests for amd64 only, and builds the binary
// for arm64 as well (.ci/platforms.sh); a file of arm64's own would go
// unvetted there.
func TestNoFileIsForOneArchitecture(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		rel := relPath(root, path)
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasPrefix(rel, "tools") || strings.Contains(rel, "testdata") {
			return err
		}
		checked++
		if arch := archOfName(d.Name()); arch != "" {
			t.Errorf("%s is for %s alone by its name: vet and the test builds run for amd64 only (.ci/platforms.sh)", rel, arch)
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if arch := archOfConstraint(src); arch != "" {
			t.Errorf("%s names %s in its build constraint: vet and the test builds run for amd64 only (.ci/platforms.sh)", rel, arch)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d files checked: the walk is wrong", checked)
	}
}

// archOfName is the architecture a file's name restricts it to, as the go
// command reads it (name_GOARCH.go, name_GOOS_GOARCH_test.go), or "".
func archOfName(name string) string {
	stem := strings.TrimSuffix(strings.TrimSuffix(name, ".go"), "_test")
	parts := strings.Split(stem, "_")
	if last := parts[len(parts)-1]; len(parts) > 1 && slices.Contains(architectures, last) {
		return last
	}
	return ""
}

// archOfConstraint is an architecture the //go:build line of src names,
// or "".
func archOfConstraint(src []byte) string {
	for line := range strings.Lines(string(src)) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "package ") {
			return ""
		}
		if !constraint.IsGoBuild(line) {
			continue
		}
		expr, err := constraint.Parse(line)
		if err != nil {
			return ""
		}
		found := ""
		expr.Eval(func(tag string) bool {
			if found == "" && slices.Contains(architectures, tag) {
				found = tag
			}
			return false
		})
		return found
	}
	return ""
}
