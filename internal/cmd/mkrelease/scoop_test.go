package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The Scoop manifest names each Windows archive's URL and sum, and the
// binary it puts on the PATH is in that archive.
func checkTheScoopManifestPointsAtEachArchiveWithItsSum(t *testing.T, r released) {
	var m struct {
		Version      string
		License      string
		Bin          string
		Architecture map[string]struct{ URL, Hash string }
		Autoupdate   struct {
			Architecture map[string]struct{ URL string }
		}
	}
	if err := json.Unmarshal(readFile(t, r.dir, "majordomus-mcp.json"), &m); err != nil {
		t.Fatal(err)
	}
	if m.Version != r.version || m.License != "Apache-2.0" || m.Bin != "majordomus-mcp.exe" {
		t.Errorf("manifest version %q license %q bin %q", m.Version, m.License, m.Bin)
	}
	scoopArch := map[string]string{"amd64": "64bit", "arm64": "arm64"}
	named := 0
	for _, tg := range r.targets {
		if tg.os != "windows" {
			continue
		}
		named++
		name := tg.archiveName(r.version)
		a := m.Architecture[scoopArch[tg.arch]]
		if a.URL != r.base+"/"+name || a.Hash != r.sums[name] {
			t.Errorf("%s: manifest says %s %s, want %s %s", tg, a.URL, a.Hash, r.base+"/"+name, r.sums[name])
		}
		// the next release comes from where this one does (-base-url)
		next := strings.ReplaceAll(r.base+"/"+name, r.version, "$version")
		if got := m.Autoupdate.Architecture[scoopArch[tg.arch]].URL; got != next {
			t.Errorf("%s: autoupdate says %s, want %s", tg, got, next)
		}
		if names, _, _ := extract(t, filepath.Join(r.dir, name)); !slices.Contains(names, m.Bin) {
			t.Errorf("%s holds no %s", name, m.Bin)
		}
	}
	if named == 0 || len(m.Architecture) != named {
		t.Errorf("the manifest names %d architectures, %d Windows archives were made", len(m.Architecture), named)
	}
	checkScoopSchemaFields(t, readFile(t, r.dir, "majordomus-mcp.json"))
}

// checkScoopSchemaFields checks the manifest against the fields of Scoop's
// manifest schema (schema.json in ScoopInstaller/Scoop), which allows no
// other properties: its required ones are there and not empty, every
// other is one it defines, and the architectures are its names for them.
func checkScoopSchemaFields(t *testing.T, data []byte) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	known := []string{"##", "$schema", "architecture", "autoupdate", "bin", "checkver", "cookie", "depends",
		"description", "env_add_path", "env_set", "extract_dir", "extract_to", "hash", "homepage", "innosetup",
		"installer", "license", "notes", "persist", "post_install", "post_uninstall", "pre_install",
		"pre_uninstall", "psmodule", "shortcuts", "suggest", "uninstaller", "url", "version"}
	for key := range m {
		if !slices.Contains(known, key) {
			t.Errorf("the manifest has %q, which Scoop's schema does not allow", key)
		}
	}
	for _, key := range []string{"version", "description", "homepage", "license"} {
		var v string
		if err := json.Unmarshal(m[key], &v); err != nil || v == "" {
			t.Errorf("the manifest's required %q is %s, want a string", key, m[key])
		}
	}
	for _, where := range []string{"architecture", "autoupdate"} {
		var archs map[string]map[string]string
		raw := m[where]
		if where == "autoupdate" {
			var auto map[string]json.RawMessage
			if err := json.Unmarshal(raw, &auto); err != nil {
				t.Fatalf("autoupdate: %v", err)
			}
			raw = auto["architecture"]
		}
		if err := json.Unmarshal(raw, &archs); err != nil || len(archs) == 0 {
			t.Fatalf("%s's architectures %s: %v", where, raw, err)
		}
		for name, a := range archs {
			if !slices.Contains([]string{"32bit", "64bit", "arm64"}, name) {
				t.Errorf("%s names %q, not one of Scoop's architectures", where, name)
			}
			if !strings.HasPrefix(a["url"], "https://") {
				t.Errorf("%s.%s's url is %q", where, name, a["url"])
			}
			if h, ok := a["hash"]; (ok || where == "architecture") && !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(h) {
				t.Errorf("%s.%s's hash %q is no sha256", where, name, h)
			}
		}
	}
}
