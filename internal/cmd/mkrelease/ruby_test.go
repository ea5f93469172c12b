//go:build ruby

// This test needs ruby, which a machine with only Go and git has not:
// `task release-check` runs it (go test -tags ruby).

package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// The formula is valid Ruby (ruby -c) and, its DSL evaluated on each
// system and processor Homebrew runs on, fetches the archive built for it
// with that archive's sum and installs the binary; where no archive was
// built it fetches nothing.
func TestTheFormulaEvaluatesToEachArchive(t *testing.T) {
	r := makeRelease(t)
	formula := filepath.Join(r.dir, "majordomus-mcp.rb")
	if out, err := exec.Command("ruby", "-c", formula).CombinedOutput(); err != nil {
		t.Fatalf("ruby -c: %v\n%s", err, out)
	}
	stub, err := filepath.Abs("testdata/formula_stub.rb")
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range []target{{"darwin", "arm64"}, {"darwin", "amd64"}, {"linux", "arm64"}, {"linux", "amd64"}} {
		out, err := exec.Command("ruby", stub, formula, tg.os, tg.arch).Output()
		if err != nil {
			t.Fatalf("%s: evaluating the formula: %v", tg, err)
		}
		var got struct {
			Version, License, URL, Sha256 string
			Install                       []string
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%s: %v: %s", tg, err, out)
		}
		if got.Version != r.version || got.License != "Apache-2.0" || !slices.Equal(got.Install, []string{"majordomus-mcp"}) {
			t.Errorf("%s: version %q license %q installs %v", tg, got.Version, got.License, got.Install)
		}
		name := tg.archiveName(r.version)
		if _, built := r.sums[name]; !built {
			if got.URL != "" || got.Sha256 != "" {
				t.Errorf("%s: no archive was built, the formula fetches %s", tg, got.URL)
			}
			continue
		}
		if got.URL != r.base+"/"+name || got.Sha256 != r.sums[name] {
			t.Errorf("%s: the formula fetches %s (sha256 %s), want %s (%s)", tg, got.URL, got.Sha256, r.base+"/"+name, r.sums[name])
		}
	}
}
