package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// module is a module the binary links, as `go list -deps -json` names it.
type module struct {
	Path    string
	Version string
	Dir     string
	Main    bool
	Replace *module
}

// licensed is one linked module with its license files.
type licensed struct {
	name  string // path and version
	files []member
}

// thirdPartyNotices lists the modules the command links when built for t,
// each with its LICENSE, COPYING and NOTICE files read from the module
// cache, and the Go standard library's license: what the binary must carry
// to honour them.
func thirdPartyNotices(root string, t target, version string) ([]byte, error) {
	mods, err := linkedModules(root, t)
	if err != nil {
		return nil, err
	}
	var all []licensed
	goenv, err := goEnv(root, "GOROOT", "GOVERSION")
	if err != nil {
		return nil, err
	}
	std, err := licenseFiles(goenv[0])
	if err != nil || len(std) == 0 {
		return nil, fmt.Errorf("the Go standard library's license in %s: %w", goenv[0], orMissing(err))
	}
	all = append(all, licensed{"Go standard library " + goenv[1], std})
	for _, m := range mods {
		files, err := licenseFiles(m.Dir)
		if err != nil || len(files) == 0 {
			return nil, fmt.Errorf("the license of %s %s in %s: %w", m.Path, m.Version, m.Dir, orMissing(err))
		}
		all = append(all, licensed{m.Path + " " + m.Version, files})
	}
	return renderNotices(version, t, all), nil
}

func orMissing(err error) error {
	if err != nil {
		return err
	}
	return errors.New("no LICENSE, COPYING or NOTICE file")
}

// linkedModules are the modules other than this one that provide a package
// the command imports, directly or not, when built for t (sorted by path).
func linkedModules(root string, t target) ([]module, error) {
	cmd := exec.Command("go", "list", "-deps", "-json=Module,Standard", "./cmd/majordomus-mcp")
	cmd.Dir = root
	cmd.Env = t.env()
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list the dependencies for %s: %w", t, withStderr(err))
	}
	seen := map[string]module{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			Standard bool
			Module   *module
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("read go list's output: %w", err)
		}
		if p.Standard || p.Module == nil || p.Module.Main {
			continue
		}
		m := *p.Module
		if m.Replace != nil {
			m.Dir = m.Replace.Dir
		}
		seen[m.Path] = m
	}
	mods := make([]module, 0, len(seen))
	for _, m := range seen {
		mods = append(mods, m)
	}
	sort.Slice(mods, func(i, j int) bool { return mods[i].Path < mods[j].Path })
	return mods, nil
}

// goEnv is the go command's value of each name, in order.
func goEnv(root string, names ...string) ([]string, error) {
	cmd := exec.Command("go", append([]string{"env"}, names...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go env %s: %w", strings.Join(names, " "), withStderr(err))
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n"), nil
}

func withStderr(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return fmt.Errorf("%w: %s", err, bytes.TrimSpace(ee.Stderr))
	}
	return err
}

// isLicenseFile says whether a file at a module's root is one of its
// license texts (LICENSE, LICENCE, COPYING, NOTICE, PATENTS, with any
// suffix: LICENSE-GO, LICENSE.md, COPYING.txt…).
func isLicenseFile(name string) bool {
	n := strings.ToUpper(name)
	for _, p := range []string{"LICENSE", "LICENCE", "COPYING", "NOTICE", "PATENTS", "UNLICENSE"} {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return false
}

func licenseFiles(dir string) ([]member, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []member
	for _, e := range entries {
		if e.IsDir() || !isLicenseFile(e.Name()) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		files = append(files, member{name: e.Name(), data: data})
	}
	return files, nil
}

// renderNotices is the THIRD_PARTY_NOTICES text: the list, then each
// module's files in full.
func renderNotices(version string, t target, all []licensed) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Third-party notices for majordomus-mcp %s (%s)\n\n", version, t)
	b.WriteString("This binary is licensed under the Apache License, Version 2.0 (LICENSE).\n")
	b.WriteString("It links the following software, whose license texts follow in full:\n\n")
	for _, l := range all {
		fmt.Fprintf(&b, "  %s\n", l.name)
	}
	rule := strings.Repeat("=", 78)
	for _, l := range all {
		for _, f := range l.files {
			fmt.Fprintf(&b, "\n%s\n%s: %s\n%s\n\n", rule, l.name, f.name, rule)
			b.Write(bytes.TrimRight(f.data, "\n"))
			b.WriteString("\n")
		}
	}
	return b.Bytes()
}
