package layer

import (
	"errors"
	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestLoadManifest(t *testing.T) {
	tests := []struct {
		name    string
		content *string // nil = no manifest file
		want    Manifest
		wantErr []string // substrings of the error
	}{
		{
			name: "ok with profiles and timings",
			content: ptr(`schema: ai-repository/v1
name: demo
description: a demo checkout
repo: {path: repo}
local: {path: local, tracked: false, implicit_context: false}
sections: {rules: repo/rules, adrs: null}
context: {documents: [README.md]}
mcp:
  profiles:
    - default
    - {name: reviewer, role: review}
    - name: ops_2
server:
  bind_grace_seconds: 15
  probe_timeout_seconds: 0.5
  election_bound_seconds: 20
  busy_grace_seconds: 10
  session_idle_timeout_seconds: 90
  bridge_heartbeat_seconds: 1.25
`),
			want: Manifest{
				Schema: SchemaV1, Name: "demo", Description: "a demo checkout",
				Profiles: []Profile{{Name: "default"}, {Name: "reviewer", Role: "review"}, {Name: "ops_2"}},
				Server: Timings{
					BindGrace: 15 * time.Second, ProbeTimeout: 500 * time.Millisecond,
					ElectionBound: 20 * time.Second, BusyGrace: 10 * time.Second,
					SessionIdleTimeout: 90 * time.Second, BridgeHeartbeat: 1250 * time.Millisecond,
				},
			},
		},
		{name: "minimal", content: ptr(testManifest), want: Manifest{Schema: SchemaV1}},
		{name: "missing file", wantErr: []string{"cannot read"}},
		{name: "no schema", content: ptr("name: x\n"), wantErr: []string{`schema missing, want "ai-repository/v1"`}},
		{name: "other schema", content: ptr("schema: other/v2\n"), wantErr: []string{`schema is "other/v2", want "ai-repository/v1"`}},
		{name: "schema not a string", content: ptr("schema: [a]\n"), wantErr: []string{"schema: must be a string"}},
		{name: "unknown top-level keys sorted", content: ptr(testManifest + "zeta: 1\nbogus: 2\n"), wantErr: []string{"unknown top-level key(s): bogus, zeta"}},
		{name: "unknown server key", content: ptr(testManifest + "server: {xyz: 1}\n"), wantErr: []string{"unknown key server.xyz"}},
		{name: "unknown mcp key", content: ptr(testManifest + "mcp: {roster: []}\n"), wantErr: []string{"unknown key mcp.roster"}},
		{name: "negative timing", content: ptr(testManifest + "server: {bind_grace_seconds: -1}\n"), wantErr: []string{"server.bind_grace_seconds: -1 must be positive"}},
		{name: "zero timing", content: ptr(testManifest + "server: {busy_grace_seconds: 0}\n"), wantErr: []string{"server.busy_grace_seconds: 0 must be positive"}},
		// 2^63 nanoseconds, as a float64 rounds it: no Duration holds it
		{name: "timing just too long", content: ptr(testManifest + "server: {election_bound_seconds: 9223372036.854775807}\n"), wantErr: []string{"server.election_bound_seconds: 9223372036.854775807 seconds is too long"}},
		{name: "timing as text", content: ptr(testManifest + "server: {probe_timeout_seconds: \"2\"}\n"), wantErr: []string{"server.probe_timeout_seconds: must be a positive number of seconds"}},
		{name: "bad profile name", content: ptr(testManifest + "mcp: {profiles: [Bad]}\n"), wantErr: []string{`mcp.profiles[0]: profile name "Bad" must match`}},
		// as long a name as a lease or the registry takes, and no longer
		{name: "long profile name", content: ptr(testManifest + "mcp: {profiles: [" + strings.Repeat("a", 64) + "]}\n"), want: Manifest{Schema: SchemaV1, Profiles: []Profile{{Name: strings.Repeat("a", 64)}}}},
		{name: "too long a profile name", content: ptr(testManifest + "mcp: {profiles: [" + strings.Repeat("a", 65) + "]}\n"), wantErr: []string{`mcp.profiles[0]: profile name "` + strings.Repeat("a", 65) + `" must match ^[a-z0-9][a-z0-9_-]{0,63}$`}},
		{name: "profile without name", content: ptr(testManifest + "mcp: {profiles: [{role: x}]}\n"), wantErr: []string{"mcp.profiles[0]: name missing"}},
		{name: "unknown profile key", content: ptr(testManifest + "mcp: {profiles: [{name: a, colour: red}]}\n"), wantErr: []string{"unknown key mcp.profiles[0].colour"}},
		{name: "duplicate profile", content: ptr(testManifest + "mcp: {profiles: [a, {name: a}]}\n"), wantErr: []string{`mcp.profiles[1]: duplicate profile "a"`}},
		{name: "empty file", content: ptr(""), wantErr: []string{"empty manifest"}},
		{name: "not a mapping", content: ptr("- schema\n"), wantErr: []string{"not a mapping"}},
		{name: "not YAML", content: ptr("schema: [unclosed\n"), wantErr: []string{"not valid YAML"}},
		{name: "an empty document after it", content: ptr("---\n" + testManifest + "---\n# nothing more\n"), want: Manifest{Schema: SchemaV1}},
		{name: "a second document", content: ptr(testManifest + "---\nserver: {xyz: 1}\n"), wantErr: []string{"a second document begins at line"}},
		{name: "duplicate key", content: ptr(testManifest + "schema: ai-repository/v1\n"), wantErr: []string{"duplicate key schema"}},
		{name: "several problems joined", content: ptr("bogus: 1\nserver: {xyz: 1}\n"), wantErr: []string{"unknown key server.xyz; unknown top-level key(s): bogus; schema missing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := testtemp.Dir(t)
			path := filepath.Join(root, ".ai", "manifest.yaml")
			if tt.content != nil {
				writeTree(t, root, map[string]string{".ai/manifest.yaml": *tt.content})
			}
			got, err := LoadManifest(root)
			if len(tt.wantErr) > 0 {
				if !errors.Is(err, ErrInvalidManifest) {
					t.Fatalf("error = %v, want ErrInvalidManifest", err)
				}
				if tt.content == nil && !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("error = %v, want it to say the file does not exist", err)
				}
				for _, s := range append(tt.wantErr, path+": ") {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.want.Path = path
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("LoadManifest =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

// An unreadable manifest is invalid. A directory where the file should be
// cannot be read by anyone, root included (CI runs as root, where mode bits
// do not stop reads).
func TestLoadManifestUnreadable(t *testing.T) {
	root := testtemp.Dir(t)
	if err := os.MkdirAll(filepath.Join(root, ".ai", "manifest.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadManifest(root); !errors.Is(err, ErrInvalidManifest) || !strings.Contains(err.Error(), "manifest.yaml") {
		t.Fatalf("error = %v, want ErrInvalidManifest naming the file", err)
	}
}

// A manifest larger than an object may be is refused unread: every
// process reads it, bridges included.
func TestLoadManifestTooLarge(t *testing.T) {
	root := testtemp.Dir(t)
	writeTree(t, root, map[string]string{".ai/manifest.yaml": testManifest})
	if err := os.Truncate(filepath.Join(root, ".ai", "manifest.yaml"), maxObjectSize+1); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadManifest(root); !errors.Is(err, ErrInvalidManifest) || !strings.Contains(err.Error(), "over the") {
		t.Fatalf("error = %v, want ErrInvalidManifest: over the limit", err)
	}
}

func ptr(s string) *string { return &s }

// A manifest is YAML: a value given by an alias is the anchored value,
// read as if written there, as an object's front matter reads it.
func TestLoadManifestReadsAliases(t *testing.T) {
	root := testtemp.Dir(t)
	writeTree(t, root, map[string]string{".ai/manifest.yaml": `schema: &schema ai-repository/v1
context: {name: &name payments, roster: &roster [default, {name: reviewer, role: *name}], grace: &grace 30}
sections: {timings: &timings {bind_grace_seconds: *grace, bridge_heartbeat_seconds: 5}}
name: *name
description: *schema
mcp: {profiles: *roster}
server: *timings
`})
	got, err := LoadManifest(root)
	if err != nil {
		t.Fatal(err)
	}
	want := Manifest{
		Path: filepath.Join(root, ".ai", "manifest.yaml"), Schema: SchemaV1, Name: "payments", Description: SchemaV1,
		Profiles: []Profile{{Name: "default"}, {Name: "reviewer", Role: "payments"}},
		Server:   Timings{BindGrace: 30 * time.Second, BridgeHeartbeat: 5 * time.Second},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("LoadManifest =\n%+v\nwant\n%+v", got, want)
	}
}

// The manifest's name names the checkout, in every index the layer
// publishes; without one, the directory does.
func TestTheManifestNamesTheCheckout(t *testing.T) {
	root := testtemp.Dir(t)
	writeTree(t, root, realistic)
	l, err := Open(Config{Root: root, Name: " payments-service "})
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Current().Name; got != "payments-service" {
		t.Fatalf("name %q, want the manifest's", got)
	}
	write(t, root, ".ai/repo/prompts/continue.md", "---\nid: continue\nkind: prompt\n---\nGo on.\n")
	if _, ix, ok := l.rebuild(); !ok || ix.Name != "payments-service" {
		t.Fatalf("rebuilt (%v): %+v", ok, ix)
	}
	unnamed, err := Open(Config{Root: root, Name: "  "})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := unnamed.Current().Name, filepath.Base(l.root); got != want {
		t.Fatalf("name %q, want the directory's %q", got, want)
	}
}
