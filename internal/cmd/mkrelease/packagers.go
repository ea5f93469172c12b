package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

const (
	homepage    = "https://github.com/majordomus-mcp/majordomus-mcp"
	description = "One shared MCP server per checkout for every AI coding agent in it: the .ai layer and a peer board"
)

// find returns the artifact built for t, if any.
func find(arts []artifact, t target) (artifact, bool) {
	for _, a := range arts {
		if a.target == t {
			return a, true
		}
	}
	return artifact{}, false
}

// sha256Sums is SHA256SUMS in the form `sha256sum -c` and `shasum -a 256
// -c` read: the sum, two spaces, the file name.
func sha256Sums(arts []artifact) []byte {
	var b bytes.Buffer
	for _, a := range arts {
		fmt.Fprintf(&b, "%s  %s\n", a.sha256, a.name)
	}
	return b.Bytes()
}

// homebrewFormula is a formula for the macOS and Linux archives that were
// built, each url with its archive's sha256 (a tap's Formula/majordomus-mcp.rb).
func homebrewFormula(version, base string, arts []artifact) []byte {
	var b bytes.Buffer
	b.WriteString("# Made by the release tool (internal/cmd/mkrelease) from the archives it built; do not edit.\n")
	b.WriteString("class MajordomusMcp < Formula\n")
	fmt.Fprintf(&b, "  desc %q\n", "Shared MCP server per checkout: the .ai layer and a peer board")
	fmt.Fprintf(&b, "  homepage %q\n", homepage)
	fmt.Fprintf(&b, "  version %q\n", version)
	b.WriteString("  license \"Apache-2.0\"\n")
	for _, goos := range []struct{ goos, block string }{{"darwin", "on_macos"}, {"linux", "on_linux"}} {
		var inner bytes.Buffer
		for _, arch := range []struct{ arch, block string }{{"arm64", "on_arm"}, {"amd64", "on_intel"}} {
			a, ok := find(arts, target{goos.goos, arch.arch})
			if !ok {
				continue
			}
			fmt.Fprintf(&inner, "    %s do\n      url %q\n      sha256 %q\n    end\n", arch.block, base+"/"+a.name, a.sha256)
		}
		if inner.Len() > 0 {
			fmt.Fprintf(&b, "\n  %s do\n%s  end\n", goos.block, inner.String())
		}
	}
	b.WriteString("\n  def install\n    bin.install \"majordomus-mcp\"\n  end\n")
	b.WriteString("\n  test do\n    assert_match version.to_s, shell_output(\"#{bin}/majordomus-mcp version\")\n  end\nend\n")
	return b.Bytes()
}

// scoopManifest is a Scoop manifest for the Windows archives that were
// built (a bucket's bucket/majordomus-mcp.json), from baseURL (where
// {version} stands); autoupdate takes the next release from the same
// place, and its sums from its SHA256SUMS.
func scoopManifest(version, baseURL string, arts []artifact) []byte {
	base := strings.ReplaceAll(baseURL, "{version}", version)
	type arch struct {
		URL  string `json:"url"`
		Hash string `json:"hash,omitempty"`
	}
	type manifest struct {
		Version      string            `json:"version"`
		Description  string            `json:"description"`
		Homepage     string            `json:"homepage"`
		License      string            `json:"license"`
		Architecture map[string]arch   `json:"architecture"`
		Bin          string            `json:"bin"`
		Checkver     map[string]string `json:"checkver"`
		Autoupdate   struct {
			Architecture map[string]arch   `json:"architecture"`
			Hash         map[string]string `json:"hash"`
		} `json:"autoupdate"`
	}
	m := manifest{
		Version: version, Description: description, Homepage: homepage, License: "Apache-2.0",
		Architecture: map[string]arch{}, Bin: "majordomus-mcp.exe",
		Checkver: map[string]string{"github": homepage},
	}
	m.Autoupdate.Architecture = map[string]arch{}
	m.Autoupdate.Hash = map[string]string{"url": "$baseurl/SHA256SUMS"}
	for _, s := range []struct{ arch, scoop string }{{"amd64", "64bit"}, {"arm64", "arm64"}} {
		a, ok := find(arts, target{"windows", s.arch})
		if !ok {
			continue
		}
		m.Architecture[s.scoop] = arch{URL: base + "/" + a.name, Hash: a.sha256}
		m.Autoupdate.Architecture[s.scoop] = arch{URL: strings.ReplaceAll(baseURL, "{version}", "$version") + "/majordomus-mcp_$version_windows_" + s.arch + ".zip"}
	}
	return marshal(m)
}

// marshal is v as indented JSON, its < and > left as they are (npm's
// engines ranges).
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		panic(err) // plain structs, maps and strings always encode
	}
	return b.Bytes()
}
