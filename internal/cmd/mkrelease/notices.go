package main

import (
	"bytes"
	"debug/buildinfo"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
)

// licensed is one linked module with its license files.
type licensed struct {
	name  string // path and version
	files []member
}

// thirdPartyNotices lists the modules the binary bin (built for t) links,
// as its build information names them (what `go version -m` prints), each
// with its LICENSE, COPYING and NOTICE files read from the module cache,
// and the Go standard library's license: what the binary must carry to
// honour them.
func thirdPartyNotices(root string, t target, version, bin string) ([]byte, error) {
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return nil, fmt.Errorf("read the %s binary's build information: %w", t, err)
	}
	goenv, err := goEnv(root, "GOROOT", "GOMODCACHE")
	if err != nil {
		return nil, err
	}
	std, err := licenseFiles(goenv[0])
	if err != nil || len(std) == 0 {
		return nil, fmt.Errorf("the Go standard library's license in %s: %w", goenv[0], orMissing(err))
	}
	all := []licensed{{"Go standard library " + info.GoVersion, std}}
	for _, m := range info.Deps {
		dir := moduleDir(root, goenv[1], m)
		files, err := licenseFiles(dir)
		if err != nil || len(files) == 0 {
			return nil, fmt.Errorf("the license of %s %s in %s: %w", m.Path, m.Version, dir, orMissing(err))
		}
		all = append(all, licensed{m.Path + " " + m.Version, files})
	}
	return renderNotices(version, t, all), nil
}

// moduleDir is the directory of m's files: its replacement's directory, or
// where the module cache holds it (or its replacement), upper-case letters
// written as '!' and the lower-case letter.
func moduleDir(root, cache string, m *debug.Module) string {
	if r := m.Replace; r != nil && r.Version == "" && filepath.IsAbs(r.Path) {
		return r.Path
	} else if r != nil && r.Version == "" {
		return filepath.Join(root, r.Path)
	} else if r != nil {
		m = m.Replace
	}
	var b strings.Builder
	for _, r := range m.Path + "@" + m.Version {
		if 'A' <= r && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return filepath.Join(cache, b.String())
}

func orMissing(err error) error {
	if err != nil {
		return err
	}
	return errors.New("no LICENSE, COPYING or NOTICE file")
}

// goEnv is the go command's value of each name, in order.
func goEnv(root string, names ...string) ([]string, error) {
	cmd := exec.Command("go", append([]string{"env"}, names...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			err = fmt.Errorf("%w: %s", err, bytes.TrimSpace(ee.Stderr))
		}
		return nil, fmt.Errorf("go env %s: %w", strings.Join(names, " "), err)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n"), nil
}

// isLicenseFile says whether a file at a module's root is one of its
// license texts (LICENSE, LICENCE, COPYING, NOTICE, PATENTS, with any
// suffix: LICENSE-GO, LICENSE.md, COPYING.txt…).
func isLicenseFile(name string) bool {
	n := strings.ToUpper(name)
	return slices.ContainsFunc([]string{"LICENSE", "LICENCE", "COPYING", "NOTICE", "PATENTS", "UNLICENSE"},
		func(p string) bool { return strings.HasPrefix(n, p) })
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
