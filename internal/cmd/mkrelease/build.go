package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// target is one platform a release is built for.
type target struct{ os, arch string }

// allTargets are the platforms majordomus-mcp ships for.
var allTargets = []target{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

func parseTarget(s string) (target, error) {
	goos, arch, ok := strings.Cut(strings.TrimSpace(s), "/")
	if t := (target{goos, arch}); ok && slices.Contains(allTargets, t) {
		return t, nil
	}
	return target{}, fmt.Errorf("unknown target %q (want one of linux, darwin, windows / amd64, arm64)", s)
}

func (t target) String() string { return t.os + "/" + t.arch }

func (t target) binaryName() string {
	if t.os == "windows" {
		return "majordomus-mcp.exe"
	}
	return "majordomus-mcp"
}

func (t target) archiveName(version string) string {
	ext := ".tar.gz"
	if t.os == "windows" {
		ext = ".zip"
	}
	return "majordomus-mcp_" + version + "_" + t.os + "_" + t.arch + ext
}

// env is the go command's environment for this target: pure Go, for
// every processor of its architecture, whatever the packager's own
// environment asks (GOAMD64=v3 needs AVX2, and changes the bytes), and
// without the FIPS 140 module GOFIPS140 would link in.
func (t target) env() []string {
	return append(os.Environ(), "GOOS="+t.os, "GOARCH="+t.arch, "CGO_ENABLED=0", "GOAMD64=v1", "GOARM64=v8.0", "GOEXPERIMENT=", "GOFIPS140=off")
}

// buildAll compiles the command for every target into bins, two builds at
// once: a single go build leaves a core idle while it links, or while one
// package the rest wait on compiles.
func buildAll(o options, bins string) error {
	errs := make([]error, len(o.targets))
	slots := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i, t := range o.targets {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			errs[i] = build(o.root, t, o.buildFlags, filepath.Join(bins, t.String(), t.binaryName()))
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// build compiles the command for t into bin.
func build(root string, t target, flags []string, bin string) error {
	args := append([]string{"build"}, flags...)
	args = append(args, "-o", bin, "./cmd/majordomus-mcp")
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Env = t.env()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build for %s: %w\n%s", t, err, out)
	}
	return nil
}
