package registry

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
)

// Schema is the value of the lease document's "schema" key.
const Schema = "majordomus-mcp-lease/v1"

// MaxLeaseSize is the largest lease file the registry reads. A bigger file is
// judged corrupt from its first MaxLeaseSize+1 bytes.
const MaxLeaseSize = 1 << 20

// DefaultProfile is the profile whose lease is server.json.
const DefaultProfile = "default"

// Executable identifies the file a server was started from.
type Executable struct {
	// Path is the executable's absolute path with symbolic links resolved.
	Path string `json:"path"`
	// MTime is the file's modification time in Unix seconds.
	MTime int64 `json:"mtime"`
	// Size is the file's size in bytes.
	Size int64 `json:"size"`
}

// Lease is the lease document (docs/design.md#the-lease). Reading is
// tolerant: unknown keys are ignored and missing keys read as zero values.
type Lease struct {
	Schema string `json:"schema"`
	// PID is the owner's process id.
	PID int `json:"pid"`
	// Instance is random and unique per server (128 bits, hex). A file
	// carries a process's lease exactly when it carries its instance.
	Instance string `json:"instance"`
	// Root is the checkout root the server serves.
	Root string `json:"root"`
	// RepositoryID is the first 32 hex characters of SHA-256(Root).
	RepositoryID string `json:"repository_id"`
	Profile      string `json:"profile"`
	// URL is nil until the server is bound, then its base URL.
	URL *string `json:"url"`
	// StartedAt is RFC 3339 UTC, to the millisecond: when the owner wrote
	// the lease. A lease without a URL is aged from it (the bind grace);
	// nothing else compares it with a clock.
	StartedAt string `json:"started_at"`
	Host      string `json:"host"`
	// BootID identifies the owner's boot ([BootID]).
	BootID string `json:"boot_id"`
	// ProcessStart is the owner's start token ([ProcessStart]: clock ticks
	// since boot on Linux, microseconds since 1970 on macOS, a FILETIME on
	// Windows).
	ProcessStart uint64 `json:"process_start"`
	// Namespaces are the owner's pid and network namespaces
	// ([proc.Namespaces]; Linux only). A judge in another pid namespace (a
	// container's, or the host's beside it) cannot see the owner's pid: it
	// asks the lock the owner holds on the lease for its term
	// ([Snapshot.Holder]).
	Namespaces string      `json:"namespaces"`
	Executable *Executable `json:"executable"`
	Version    string      `json:"version"`
	// Secret authenticates the server's clients and its answers to probes
	// (docs/security.md; package internal/secret). Only the owner's user
	// can read the lease, so only that user can use the server.
	Secret string `json:"secret"`
	// RootDir is the root directory's id as its owner found its checkout
	// ([DirectoryID]; "" unknown, or a release that wrote none): a lease
	// that came with its checkout, moved, is told from a copy by it.
	RootDir string `json:"root_dir,omitempty"`
}

// HasURL reports whether the lease names a bound server.
func (l Lease) HasURL() bool { return l.URL != nil && *l.URL != "" }

// URLString returns the lease's URL, or "" when it has none.
func (l Lease) URLString() string {
	if l.URL == nil {
		return ""
	}
	return *l.URL
}

// NewInstance returns a fresh random instance: 128 bits from crypto/rand, in
// lowercase hex.
func NewInstance() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24).
	return hex.EncodeToString(b[:])
}

// NewLease returns the document a process with identity self writes when it
// acquires the lease of root: a fresh instance and secret, no URL, started
// now.
// repositoryID is taken as given; profile "" means [DefaultProfile].
func NewLease(self Identity, root, repositoryID, profile, version string, now time.Time) Lease {
	return Lease{
		Schema:       Schema,
		PID:          self.PID,
		Instance:     NewInstance(),
		Root:         root,
		RepositoryID: repositoryID,
		Profile:      cmp.Or(profile, DefaultProfile),
		StartedAt:    now.UTC().Format(startedAtLayout),
		Host:         self.Host,
		BootID:       self.BootID,
		ProcessStart: self.Start,
		Namespaces:   self.Namespaces,
		Executable:   &self.Executable,
		Version:      version,
		Secret:       secret.New(),
	}
}

// startedAtLayout is RFC 3339 with milliseconds, so that the bind grace is
// counted from the moment the lease was written, not up to a second before.
const startedAtLayout = "2006-01-02T15:04:05.000Z07:00"

// Dir returns the directory that holds the leases of root.
func Dir(root string) string {
	return filepath.Join(root, ".ai", "local", "state", "mcp")
}

// Path returns the lease path of root for profile: server.json for "" and
// "default", server.<profile>.json otherwise. It assumes a profile accepted
// by [ValidateProfile].
func Path(root, profile string) string {
	name := "server.json"
	if profile != "" && profile != DefaultProfile {
		name = "server." + profile + ".json"
	}
	return filepath.Join(Dir(root), name)
}

// ValidateProfile accepts the profile names a manifest's roster
// (mcp.profiles) can hold: a lowercase ASCII letter or digit, then those,
// '-' and '_', at most 64 bytes; "" is the default. A server of a profile
// no roster can name would be unexpected to every fleet inventory, and
// names that differ only in case would share one lease file where file
// names ignore case.
func ValidateProfile(profile string) error {
	for i, c := range []byte(profile) {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || i > 0 && (c == '-' || c == '_')
		if !ok || i == 64 {
			return fmt.Errorf("%w %q: one of at most 64 lowercase letters, digits, '-' and '_', first a letter or digit", ErrBadProfile, profile)
		}
	}
	return nil
}

// Encode returns the document as one line of compact JSON.
func Encode(doc Lease) ([]byte, error) {
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encoding lease: %w", err)
	}
	return append(b, '\n'), nil
}

// Decode reads a lease file's bytes. It fails with [ErrLeaseEmpty] for an
// empty or whitespace-only file and with [ErrLeaseCorrupt] for anything that
// is not a majordomus-mcp-lease/v1 object; the error text gives the reason.
func Decode(raw []byte) (Lease, error) {
	doc, problem := decode(raw)
	switch problem {
	case "":
		return doc, nil
	case problemEmpty:
		return Lease{}, ErrLeaseEmpty
	default:
		return Lease{}, fmt.Errorf("%w: %s", ErrLeaseCorrupt, problem)
	}
}

// problemEmpty is decode's answer for a file with nothing but whitespace.
const problemEmpty = "empty"

// decode returns the document, or a problem in the judge's vocabulary (the
// text after "corrupt lease: "), or problemEmpty.
func decode(raw []byte) (Lease, string) {
	if len(raw) > MaxLeaseSize { // what lies past the bytes read is unknown: not "nothing"
		return Lease{}, fmt.Sprintf("larger than %d bytes", MaxLeaseSize)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return Lease{}, problemEmpty
	}
	var probe any
	if err := json.Unmarshal(raw, &probe); err != nil {
		return Lease{}, fmt.Sprintf("not JSON (%v)", err)
	}
	if obj, ok := probe.(map[string]any); !ok || obj["schema"] != Schema {
		return Lease{}, "not a " + Schema + " document"
	}
	var doc Lease
	if err := json.Unmarshal(raw, &doc); err != nil {
		return Lease{}, fmt.Sprintf("not a %s document (%v)", Schema, err)
	}
	if u := doc.URLString(); doc.HasURL() && (len(u) <= len("http://") || !strings.EqualFold(u[:len("http://")], "http://")) {
		return Lease{}, fmt.Sprintf("its url %q is not an http URL, which no server publishes", u)
	}
	return doc, ""
}

// Holds reports whether raw is a valid lease document carrying instance. An
// empty instance is never held.
func Holds(raw []byte, instance string) bool {
	if instance == "" {
		return false
	}
	doc, problem := decode(raw)
	return problem == "" && doc.Instance == instance
}
