package registry

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
	"github.com/majordomus-mcp/majordomus-mcp/registry/proc"
)

// ourExe and ourVersion describe the judging process in the judge tables.
var ourExe = Executable{Path: "/opt/bin/majordomus-mcp", MTime: 1_700_000_000, Size: 9_000_000}

const ourVersion = "1.2.0"

// docBytes returns a valid lease document, changed by edit.
func docBytes(t testing.TB, edit func(*Lease)) []byte {
	t.Helper()
	url := "http://127.0.0.1:8741"
	exe := ourExe
	doc := Lease{
		Schema: Schema, PID: 4242, Instance: "0123456789abcdef0123456789abcdef",
		Root: "/checkout", RepositoryID: "fedcba9876543210fedcba9876543210", Profile: "default",
		URL: &url, StartedAt: "2026-01-02T03:04:05Z", Host: "host", BootID: "boot",
		ProcessStart: 12345, Executable: &exe, Version: ourVersion,
	}
	if edit != nil {
		edit(&doc)
	}
	b, err := Encode(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func noURL(l *Lease) { l.URL = nil }

// started is when docBytes' owner started, by its started_at.
var started = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestJudge(t *testing.T) {
	const bind = DefaultBindGrace
	failedProbe := ProbeResult{Status: ProbeFailed, Reason: "connection refused"}
	okProbe := ProbeResult{Status: ProbeOK}
	valid := docBytes(t, nil)
	bound := func(edit func(*Lease)) []byte { return docBytes(t, edit) }

	tests := []struct {
		name   string
		in     Input
		class  Class
		probe  bool          // NeedsProbe
		reason string        // a substring of Reason
		grace  time.Duration // Grace
	}{
		{name: "no file", in: Input{Found: Missing}, class: Absent},
		{name: "directory", in: Input{Found: Directory}, class: Unusable, reason: "is a directory"},
		{name: "unreadable", in: Input{Found: Unreadable, ReadErr: "permission denied"}, class: Unusable, reason: "cannot be read (permission denied)"},
		{name: "symlink", in: Input{Found: Symlink, Raw: []byte("/etc/passwd")}, class: Corrupt, reason: "lease path is a symbolic link"},
		{name: "fifo", in: Input{Found: Special}, class: Corrupt, reason: "not a regular file"},

		// An empty file is never waited for: no owner writes one. The
		// judge cannot even see a file's mtime, so touching it changes
		// nothing (TestObserver_AgeComesFromStartedAtNeverTheMTime).
		{name: "empty", in: Input{Found: Regular}, class: Empty, reason: "empty lease: the file holds nothing"},
		{name: "whitespace", in: Input{Found: Regular, Raw: []byte(" \n\t")}, class: Empty},
		{name: "empty with a long grace", in: Input{Found: Regular, Raw: []byte("\n"), Timings: Timings{BindGrace: time.Hour}}, class: Empty},

		{name: "not JSON", in: Input{Found: Regular, Raw: []byte("{not a lease")}, class: Corrupt, reason: "corrupt lease: not JSON ("},
		{name: "array", in: Input{Found: Regular, Raw: []byte("[]")}, class: Corrupt, reason: "corrupt lease: not a majordomus-mcp-lease/v1 document"},
		{name: "null", in: Input{Found: Regular, Raw: []byte("null")}, class: Corrupt, reason: "not a majordomus-mcp-lease/v1 document"},
		{name: "number", in: Input{Found: Regular, Raw: []byte("42")}, class: Corrupt, reason: "not a majordomus-mcp-lease/v1 document"},
		{name: "other schema", in: Input{Found: Regular, Raw: []byte(`{"schema":"something/v9","url":"http://127.0.0.1:1"}`)}, class: Corrupt, reason: "corrupt lease: not a majordomus-mcp-lease/v1 document"},
		{name: "no schema", in: Input{Found: Regular, Raw: []byte(`{"pid":1}`)}, class: Corrupt},
		{name: "schema of another type", in: Input{Found: Regular, Raw: []byte(`{"schema":1}`)}, class: Corrupt},
		{name: "type error", in: Input{Found: Regular, Raw: []byte(`{"schema":"majordomus-mcp-lease/v1","pid":"x"}`)}, class: Corrupt, reason: "document (json: cannot unmarshal"},
		// a lease copied by hand to another profile's path is not its server
		{name: "another profile's", in: Input{Found: Regular, Raw: bound(func(l *Lease) { l.Profile = "review" }), Owner: proc.OwnerAlive, Profile: "default"}, class: Corrupt, reason: `it is profile "review"'s, at the path of profile "default"'s`},
		{name: "its own profile's, spelled in another case", in: Input{Found: Regular, Raw: bound(func(l *Lease) { l.Profile = "review" }), Owner: proc.OwnerAlive, Profile: "Review"}, class: Unprobed, probe: true},
		{name: "its own profile's", in: Input{Found: Regular, Raw: bound(func(l *Lease) { l.Profile = "review" }), Owner: proc.OwnerAlive, Profile: "review"}, class: Unprobed, probe: true},
		// a URL no server publishes is never waited for, whoever its owner is
		{name: "a file URL", in: Input{Found: Regular, Raw: bound(func(l *Lease) { l.URL = new("file:///etc/passwd") }), Owner: proc.OwnerAlive}, class: Corrupt, reason: `its url "file:///etc/passwd" is not an http URL`},
		{name: "no URL after the scheme", in: Input{Found: Regular, Raw: bound(func(l *Lease) { l.URL = new("http://") }), Owner: proc.OwnerAlive}, class: Corrupt, reason: "is not an http URL"},
		{name: "a zoned link-local URL", in: Input{Found: Regular, Raw: bound(func(l *Lease) { l.URL = new("http://[fe80::1%eth0]:8741") }), Owner: proc.OwnerAlive}, class: Unprobed, probe: true},
		{name: "too large", in: Input{Found: Regular, Raw: []byte(`{"schema":"majordomus-mcp-lease/v1","x":"` + strings.Repeat("a", MaxLeaseSize) + `"}`)}, class: Corrupt, reason: "larger than"},

		{name: "no URL, owner alive, new", in: Input{Found: Regular, Raw: bound(noURL), Owner: proc.OwnerAlive, Now: started.Add(time.Second)}, class: Binding, reason: "has not published a URL yet (started 1s ago, grace 15s)", grace: bind - time.Second},
		{name: "no URL, owner unknown, new", in: Input{Found: Regular, Raw: bound(noURL), Owner: proc.OwnerUnknown}, class: Binding, grace: bind},
		{name: "empty URL string counts as none", in: Input{Found: Regular, Raw: bound(func(l *Lease) { s := ""; l.URL = &s }), Owner: proc.OwnerAlive}, class: Binding, grace: bind},
		{name: "no URL, started to the millisecond", in: Input{Found: Regular, Raw: bound(func(l *Lease) { l.URL, l.StartedAt = nil, "2026-01-02T03:04:05.250Z" }), Owner: proc.OwnerAlive, Now: started.Add(time.Second)}, class: Binding, grace: bind - 750*time.Millisecond},
		{name: "no URL, owner alive, exactly the grace since it started", in: Input{Found: Regular, Raw: bound(noURL), Owner: proc.OwnerAlive, Now: started.Add(bind)}, class: Abandoned, reason: "abandoned lease: its owner never published a URL (started 15s ago, grace 15s)"},
		{name: "no URL, owner gone, new", in: Input{Found: Regular, Raw: bound(noURL), Owner: proc.OwnerGone}, class: Abandoned, reason: "pid 4242 is gone"},
		// started_at is the owner's clock, which is this host's: a second
		// ahead is a clock stepped back and counts as now; further ahead
		// it ages nothing, and a lease nobody can age is not waited for.
		{name: "no URL, started a second ahead of the clock", in: Input{Found: Regular, Raw: bound(noURL), Owner: proc.OwnerAlive, Now: started.Add(-time.Second)}, class: Binding, grace: bind},
		{name: "no URL, started an hour ahead of the clock", in: Input{Found: Regular, Raw: bound(noURL), Owner: proc.OwnerAlive, Now: started.Add(-time.Hour)}, class: Abandoned, reason: "is 1h0m0s ahead of this host's clock"},
		{name: "no URL, no started_at", in: Input{Found: Regular, Raw: bound(func(l *Lease) { l.URL, l.StartedAt = nil, "" }), Owner: proc.OwnerAlive}, class: Abandoned, reason: `its started_at ("") is no time to count a wait from`},
		{name: "no URL, a started_at that is no time", in: Input{Found: Regular, Raw: bound(func(l *Lease) { l.URL, l.StartedAt = nil, "yesterday" }), Owner: proc.OwnerAlive}, class: Abandoned, reason: `"yesterday"`},

		{name: "URL not probed yet", in: Input{Found: Regular, Raw: valid, Owner: proc.OwnerAlive}, class: Unprobed, probe: true},
		{name: "URL answers", in: Input{Found: Regular, Raw: valid, Owner: proc.OwnerAlive, Probe: okProbe}, class: Live, probe: true, reason: "http://127.0.0.1:8741"},
		{name: "URL answers, owner gone", in: Input{Found: Regular, Raw: valid, Owner: proc.OwnerGone, Probe: okProbe}, class: Live, probe: true},
		{name: "URL silent, owner gone", in: Input{Found: Regular, Raw: valid, Owner: proc.OwnerGone, Probe: failedProbe}, class: Stale, probe: true,
			reason: "stale lease: the server it names at http://127.0.0.1:8741 does not answer for this checkout and its owner (pid 4242) is gone"},
		{name: "URL silent, owner alive", in: Input{Found: Regular, Raw: valid, Owner: proc.OwnerAlive, Probe: failedProbe}, class: Busy, probe: true, reason: "busy lease:"},
		{name: "URL silent, owner unknown", in: Input{Found: Regular, Raw: valid, Owner: proc.OwnerUnknown, Probe: failedProbe}, class: Busy, probe: true, reason: "cannot be told"},
		// How long it has been busy is the machine's to weigh: the judge
		// says busy however old the lease is.
		{name: "busy however old", in: Input{Found: Regular, Raw: valid, Owner: proc.OwnerAlive, Probe: failedProbe, Now: started.Add(24 * time.Hour)}, class: Busy, probe: true},

		// A lease copied here with its checkout: its server would prove the
		// copied secret, and serves the other checkout, so it is not asked.
		{name: "written for another checkout, owner alive", in: Input{Found: Regular, Raw: valid, Owner: proc.OwnerAlive, Elsewhere: "/original"}, class: Busy,
			reason: `does not answer (it serves the checkout at "/original", for which the lease was written: it came here with a copy of it) but its owner (pid 4242) is alive`},
		{name: "shared with another checkout, owner alive", in: Input{Found: Regular, Raw: valid, Owner: proc.OwnerAlive, Elsewhere: "/original", Shared: true}, class: Unusable,
			reason: `this checkout's .ai is the checkout at "/original"'s too`},
		{name: "shared with another checkout, owner gone", in: Input{Found: Regular, Raw: valid, Owner: proc.OwnerGone, Elsewhere: "/original", Shared: true}, class: Stale},
		{name: "written for another checkout, owner gone", in: Input{Found: Regular, Raw: valid, Owner: proc.OwnerGone, Probe: okProbe, Elsewhere: "/original"}, class: Stale, reason: `it came here with a copy of the checkout at "/original", whose server`},

		// An owner in other namespaces (a container's, or the host's beside
		// it) is told alive by the lock it holds on its lease: alive, it is
		// out of reach, never taken over (both sides would take it in turn).
		{name: "in other namespaces, held", in: Input{Found: Regular, Raw: valid, Owner: proc.OwnerAlive, Probe: failedProbe, Foreign: "pid:[1] net:[2]", OutOfReach: true}, class: Unusable, probe: true,
			reason: "runs in another network namespace than this process (a container's, or its host's), out of its reach (connection refused), and its owner (pid 4242 in pid:[1] net:[2]) holds the lease"},
		// Sharing the network, a silent server is a busy one, whose owner
		// its lock tells alive: replaced after the busy grace, as here.
		{name: "in another pid namespace, held, silent", in: Input{Found: Regular, Raw: valid, Owner: proc.OwnerAlive, Probe: failedProbe, Foreign: "pid:[1] net:[2]"}, class: Busy, probe: true, reason: "its owner (pid 4242 in pid:[1] net:[2]) is alive"},
		{name: "in other namespaces, no longer held", in: Input{Found: Regular, Raw: valid, Owner: proc.OwnerGone, Probe: failedProbe, Foreign: "pid:[1] net:[2]", OutOfReach: true}, class: Stale, probe: true, reason: "its owner (pid 4242 in pid:[1] net:[2]) is gone"},
		{name: "in other namespaces, whether held cannot be told", in: Input{Found: Regular, Raw: valid, Owner: proc.OwnerUnknown, Probe: failedProbe, Foreign: "pid:[1] net:[2]", OutOfReach: true}, class: Busy, probe: true},
		{name: "in other namespaces, sharing the network", in: Input{Found: Regular, Raw: valid, Owner: proc.OwnerAlive, Probe: okProbe, Foreign: "pid:[1] net:[2]"}, class: Live, probe: true},
		{name: "in other namespaces, from a file replaced here", in: Input{Found: Regular, Raw: bound(func(l *Lease) { l.Executable.MTime-- }), OnDisk: ourExe, Owner: proc.OwnerAlive, Probe: failedProbe, Foreign: "pid:[1] net:[2]", OutOfReach: true}, class: Unusable, probe: true},
		{name: "in other namespaces, older", in: Input{Found: Regular, Raw: bound(func(l *Lease) { l.Version = "1.1.9" }), Owner: proc.OwnerAlive, Probe: failedProbe, Foreign: "pid:[1] net:[2]", OutOfReach: true}, class: Unusable, probe: true},
		{name: "in other namespaces, binding", in: Input{Found: Regular, Raw: bound(noURL), Owner: proc.OwnerAlive, Foreign: "pid:[1] net:[2]"}, class: Binding, grace: bind},
		{name: "in other namespaces, binding no longer", in: Input{Found: Regular, Raw: bound(noURL), Owner: proc.OwnerGone, Foreign: "pid:[1] net:[2]"}, class: Abandoned, reason: "pid 4242 in pid:[1] net:[2] is gone"},

		{name: "superseded by mtime", in: Input{Found: Regular, Raw: bound(func(l *Lease) { l.Executable.MTime-- }), OnDisk: ourExe}, class: Superseded,
			reason: "superseded lease: the server was started from /opt/bin/majordomus-mcp and that file has been replaced since"},
		{name: "superseded by size", in: Input{Found: Regular, Raw: bound(func(l *Lease) { l.Executable.Size++ }), OnDisk: ourExe}, class: Superseded},
		{name: "superseded without a URL", in: Input{Found: Regular, Raw: bound(func(l *Lease) { l.URL = nil; l.Executable.Size++ }), Owner: proc.OwnerAlive, OnDisk: ourExe}, class: Superseded},
		{name: "a file on disk that cannot be read makes no claim", in: Input{Found: Regular, Raw: bound(func(l *Lease) { l.Executable.MTime-- }), Probe: okProbe}, class: Live, probe: true},
		{name: "same executable makes no claim", in: Input{Found: Regular, Raw: valid, Probe: okProbe}, class: Live, probe: true},
		{name: "another path makes no claim", in: Input{Found: Regular, Raw: bound(func(l *Lease) { l.Executable.Path = "/usr/bin/majordomus-mcp"; l.Executable.MTime = 1 }), Probe: okProbe}, class: Live, probe: true},
		{name: "no executable makes no claim", in: Input{Found: Regular, Raw: bound(func(l *Lease) { l.Executable = nil }), Probe: okProbe}, class: Live, probe: true},
		// An older process (its executable replaced since it started)
		// judging the lease of a server started from the new file: the file
		// on disk says that server is current.
		{name: "a server newer than the judge is current", in: Input{Found: Regular, Raw: bound(func(l *Lease) { l.Executable.MTime++ }),
			OnDisk: Executable{Path: ourExe.Path, MTime: ourExe.MTime + 1, Size: ourExe.Size}, Probe: okProbe}, class: Live, probe: true},
		// Two processes of the file replaced since: neither is current, and
		// neither takes the lease from the other.
		{name: "a judge as old as the server makes no claim", in: Input{Found: Regular, Raw: valid,
			OnDisk: Executable{Path: ourExe.Path, MTime: ourExe.MTime + 1, Size: ourExe.Size}, Probe: okProbe}, class: Live, probe: true},
		{name: "a judge older than the server makes no claim", in: Input{Found: Regular, Raw: bound(func(l *Lease) { l.Executable.MTime-- }),
			OnDisk: Executable{Path: ourExe.Path, MTime: ourExe.MTime + 1, Size: ourExe.Size}, Probe: okProbe}, class: Live, probe: true},
		// A release put back in place of a newer one (a downgrade): the
		// newer server's process, started from the file replaced since,
		// judges the lease of a server of the file now there, which takes
		// the lease as superseded (above) from any server of the newer one.
		{name: "a judge whose file was replaced by an older release makes no claim", in: Input{Found: Regular, Raw: bound(func(l *Lease) { l.Executable.MTime++; l.Version = "1.1.9" }),
			OnDisk: Executable{Path: ourExe.Path, MTime: ourExe.MTime + 1, Size: ourExe.Size}, Probe: okProbe}, class: Live, probe: true},
		{name: "older version", in: Input{Found: Regular, Raw: bound(func(l *Lease) { l.Version = "1.1.9" })}, class: Superseded, reason: "runs version 1.1.9, older than this executable's 1.2.0"},
		{name: "older version with a v", in: Input{Found: Regular, Raw: bound(func(l *Lease) { l.Version = "v1.1.10" })}, class: Superseded},
		{name: "older major", in: Input{Found: Regular, Raw: bound(func(l *Lease) { l.Version = "0.99.99" })}, class: Superseded},
		{name: "newer version", in: Input{Found: Regular, Raw: bound(func(l *Lease) { l.Version = "1.10.0" }), Probe: okProbe}, class: Live, probe: true},
		{name: "same version", in: Input{Found: Regular, Raw: valid, Probe: okProbe}, class: Live, probe: true},
		{name: "pre-release makes no claim", in: Input{Found: Regular, Raw: bound(func(l *Lease) { l.Version = "1.0.0-rc1" }), Probe: okProbe}, class: Live, probe: true},
		{name: "two parts make no claim", in: Input{Found: Regular, Raw: bound(func(l *Lease) { l.Version = "1.0" }), Probe: okProbe}, class: Live, probe: true},
		{name: "devel makes no claim", in: Input{Found: Regular, Raw: bound(func(l *Lease) { l.Version = "(devel)" }), Probe: okProbe}, class: Live, probe: true},
		{name: "no version makes no claim", in: Input{Found: Regular, Raw: bound(func(l *Lease) { l.Version = "" }), Probe: okProbe}, class: Live, probe: true},
		{name: "our unparsable version makes no claim", in: Input{Found: Regular, Raw: bound(func(l *Lease) { l.Version = "0.0.1" }), Probe: okProbe, Version: "dev"}, class: Live, probe: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			if in.Executable == (Executable{}) {
				in.Executable = ourExe
			}
			if in.Version == "" {
				in.Version = ourVersion
			}
			if in.Now.IsZero() {
				in.Now = started
			}
			got := Judge(in)
			if got.Class != tt.class {
				t.Errorf("class = %s, want %s (reason %q)", got.Class, tt.class, got.Reason)
			}
			if got.NeedsProbe != tt.probe {
				t.Errorf("NeedsProbe = %t, want %t", got.NeedsProbe, tt.probe)
			}
			if !strings.HasPrefix(got.Reason, string(got.Class)+" lease: ") {
				t.Errorf("reason %q does not start with the class", got.Reason)
			}
			if !strings.Contains(got.Reason, tt.reason) {
				t.Errorf("reason %q does not contain %q", got.Reason, tt.reason)
			}
			if got.Grace != tt.grace {
				t.Errorf("Grace = %s, want %s", got.Grace, tt.grace)
			}
		})
	}
}

func TestClass_TakesOver(t *testing.T) {
	take := map[Class]bool{Stale: true, Corrupt: true, Empty: true, Abandoned: true, Superseded: true}
	for _, c := range []Class{Absent, Live, Stale, Busy, Corrupt, Empty, Binding, Abandoned, Superseded, Unusable, Unprobed} {
		if got := c.TakesOver(); got != take[c] {
			t.Errorf("%s.TakesOver() = %t, want %t", c, got, take[c])
		}
	}
}

func TestDecode_ToleratesUnknownAndMissingKeys(t *testing.T) {
	raw := []byte(`{"schema":"majordomus-mcp-lease/v1","instance":"abc","future":{"x":[1,2]},"url":null}`)
	doc, err := Decode(raw)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if doc.Instance != "abc" || doc.PID != 0 || doc.HasURL() || doc.Executable != nil {
		t.Errorf("Decode = %+v", doc)
	}
	if _, err := Decode([]byte(" ")); err != ErrLeaseEmpty {
		t.Errorf("Decode(blank) error = %v, want ErrLeaseEmpty", err)
	}
	if _, err := Decode([]byte("{")); err == nil || !strings.Contains(err.Error(), "registry: corrupt lease: not JSON") {
		t.Errorf("Decode({) error = %v", err)
	}
}

func TestEncode_WritesEveryField(t *testing.T) {
	var m map[string]any
	if err := json.Unmarshal(docBytes(t, noURL), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"schema", "pid", "instance", "root", "repository_id", "profile", "url", "started_at", "host", "boot_id", "process_start", "executable", "version"} {
		if _, ok := m[k]; !ok {
			t.Errorf("encoded lease has no %q", k)
		}
	}
	if m["url"] != nil {
		t.Errorf("url = %v, want null", m["url"])
	}
}

func TestHolds(t *testing.T) {
	raw := docBytes(t, nil)
	if !Holds(raw, "0123456789abcdef0123456789abcdef") {
		t.Error("Holds(own instance) = false")
	}
	for _, tc := range []struct {
		raw      []byte
		instance string
	}{{raw, "other"}, {raw, ""}, {[]byte("{"), ""}, {nil, "x"}, {[]byte(`{"schema":"x","instance":"x"}`), "x"}} {
		if Holds(tc.raw, tc.instance) {
			t.Errorf("Holds(%q, %q) = true", tc.raw, tc.instance)
		}
	}
}

func TestPathAndProfiles(t *testing.T) {
	for profile, want := range map[string]string{
		"":        testtemp.Rooted("/r/.ai/local/state/mcp/server.json"),
		"default": testtemp.Rooted("/r/.ai/local/state/mcp/server.json"),
		"review":  testtemp.Rooted("/r/.ai/local/state/mcp/server.review.json"),
	} {
		if got := Path(testtemp.Rooted("/r"), profile); got != want {
			t.Errorf("Path(/r, %q) = %s, want %s", profile, got, want)
		}
	}
	for _, p := range []string{"", "default", "a-b_c9", "9x", strings.Repeat("x", 64)} {
		if err := ValidateProfile(p); err != nil {
			t.Errorf("ValidateProfile(%q) = %v", p, err)
		}
	}
	for _, p := range []string{"../x", "a/b", ".hidden", "sp ace", strings.Repeat("x", 65), "Review", "a.b", "-x", "_x"} {
		if err := ValidateProfile(p); err == nil {
			t.Errorf("ValidateProfile(%q) = nil", p)
		}
	}
}

// A lease file larger than MaxLeaseSize is corrupt (the package doc's
// classes), whatever its first MaxLeaseSize bytes are: one that begins
// with a megabyte of blanks and then holds a document is not "empty", and
// its reason must not say that the file holds nothing.
func TestAnOversizedLeaseThatBeginsBlankIsCorruptNotEmpty(t *testing.T) {
	path := filepath.Join(testtemp.Dir(t), "server.json")
	raw := append(bytes.Repeat([]byte(" "), MaxLeaseSize+10), []byte(`{"schema":"majordomus-mcp-lease/v1","pid":1}`)...)
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	snap := Read(path)
	v := Judge(Input{Found: snap.Found, Raw: snap.Raw, Now: time.Now()})
	if v.Class != Corrupt || !strings.Contains(v.Reason, "larger than") {
		t.Fatalf("a %d-byte lease judged %s (%q); want corrupt, larger than %d bytes", len(raw), v.Class, v.Reason, MaxLeaseSize)
	}
}

// Two servers of one checkout never judge each other's lease superseded:
// each would take the lease from the other, and every take-over would make
// the other take it back, for as long as both live. A release put back in
// place of a newer one while its servers run (npm install -g of the older
// one) is the case: the file says one is current, the versions the other.
func TestNoTwoServersSupersedeEachOther(t *testing.T) {
	const path = "/opt/bin/majordomus-mcp"
	newer := Executable{Path: path, MTime: 1_700_000_000, Size: 9_000_000} // 1.2.0, replaced since
	older := Executable{Path: path, MTime: 1_700_000_100, Size: 9_000_000} // 1.1.9, on disk now
	procs := []struct {
		exe     Executable
		version string
	}{{newer, "1.2.0"}, {older, "1.1.9"}}
	judged := func(judge, owner int) Class {
		raw := docBytes(t, func(l *Lease) {
			exe := procs[owner].exe
			l.Executable, l.Version = &exe, procs[owner].version
		})
		return Judge(Input{Found: Regular, Raw: raw, Now: started, Executable: procs[judge].exe, Version: procs[judge].version,
			OnDisk: older, Probe: ProbeResult{Status: ProbeOK}}).Class
	}
	if a, b := judged(0, 1), judged(1, 0); a == Superseded && b == Superseded {
		t.Fatalf("each server judges the other's lease superseded: a lease war")
	}
	if got := judged(1, 0); got != Superseded {
		t.Errorf("the server of the file on disk judges the other's lease %s, want superseded", got)
	}
}
