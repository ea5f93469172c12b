package main

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
)

// The npm packages follow esbuild's and biome's pattern: one package per
// platform holding only its binary (its os and cpu fields let npm install
// it on that platform alone), all of them optionalDependencies of the
// majordomus-mcp package, whose bin is a launcher that starts the one npm
// installed. `npx -y majordomus-mcp` therefore downloads one binary, not six.

// npmScope is the npm organisation the platform packages are published
// under, as esbuild's are under @esbuild.
const npmScope = "@majordomus-mcp"

//go:embed launcher.js
var launcher []byte

// npmPlatform is Node's name for t (process.platform-process.arch), which
// is the platform package's name in the scope and its os and cpu.
func npmPlatform(t target) (goos, cpu string) {
	goos, cpu = t.os, t.arch
	if goos == "windows" {
		goos = "win32"
	}
	if cpu == "amd64" {
		cpu = "x64"
	}
	return goos, cpu
}

func npmPackageName(t target) string {
	goos, cpu := npmPlatform(t)
	return npmScope + "/" + goos + "-" + cpu
}

// writeNPMPlatform writes t's package into dir/<os>-<cpu>.
func writeNPMPlatform(dir string, t target, version string, exe []byte, common []member, notices []byte) error {
	goos, cpu := npmPlatform(t)
	pkg := packageJSON{
		Name:            npmPackageName(t),
		Version:         version,
		Description:     "The " + t.String() + " binary of majordomus-mcp (installed by the majordomus-mcp package)",
		Homepage:        homepage,
		License:         "Apache-2.0",
		OS:              []string{goos},
		CPU:             []string{cpu},
		Files:           []string{"bin/", "LICENSE", "NOTICE", "THIRD_PARTY_NOTICES"},
		PreferUnplugged: true,
	}
	files := []member{{name: filepath.Join("bin", t.binaryName()), mode: 0o755, data: exe}}
	files = append(files, pick(common, "LICENSE", "NOTICE")...)
	files = append(files, member{name: "THIRD_PARTY_NOTICES", mode: 0o644, data: notices})
	return writePackage(filepath.Join(dir, goos+"-"+cpu), pkg, files)
}

// writeNPMMain writes the majordomus-mcp package into dir/majordomus-mcp.
func writeNPMMain(dir, version string, targets []target, common []member) error {
	optional := map[string]string{}
	for _, t := range targets {
		optional[npmPackageName(t)] = version
	}
	pkg := packageJSON{
		Name:                 "majordomus-mcp",
		Version:              version,
		Description:          description,
		Homepage:             homepage,
		License:              "Apache-2.0",
		Bin:                  map[string]string{"majordomus-mcp": "bin/majordomus-mcp.js"},
		Files:                []string{"bin/", "README.md", "LICENSE", "NOTICE"},
		Engines:              map[string]string{"node": ">=18"},
		OptionalDependencies: optional,
	}
	files := append([]member{{name: filepath.Join("bin", "majordomus-mcp.js"), mode: 0o755, data: launcher}}, pick(common, "README.md", "LICENSE", "NOTICE")...)
	return writePackage(filepath.Join(dir, "majordomus-mcp"), pkg, files)
}

func pick(ms []member, names ...string) []member {
	var out []member
	for _, n := range names {
		for _, m := range ms {
			if m.name == n {
				out = append(out, m)
			}
		}
	}
	return out
}

// packageJSON is the part of npm's package.json these packages use.
type packageJSON struct {
	Name                 string            `json:"name"`
	Version              string            `json:"version"`
	Description          string            `json:"description"`
	Homepage             string            `json:"homepage"`
	License              string            `json:"license"`
	Bin                  map[string]string `json:"bin,omitempty"`
	OS                   []string          `json:"os,omitempty"`
	CPU                  []string          `json:"cpu,omitempty"`
	Files                []string          `json:"files"`
	Engines              map[string]string `json:"engines,omitempty"`
	OptionalDependencies map[string]string `json:"optionalDependencies,omitempty"`
	PreferUnplugged      bool              `json:"preferUnplugged,omitempty"`
}

func writePackage(dir string, pkg packageJSON, files []member) error {
	files = append(files, member{name: "package.json", mode: 0o644, data: marshal(pkg)})
	for _, f := range files {
		path := filepath.Join(dir, f.name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("make %s: %w", filepath.Dir(path), err)
		}
		if err := os.WriteFile(path, f.data, f.mode); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		// WriteFile's mode is cut by the umask; the binary and launcher must be executable.
		if err := os.Chmod(path, f.mode); err != nil {
			return fmt.Errorf("chmod %s: %w", path, err)
		}
	}
	return nil
}
