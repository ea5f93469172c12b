//go:build unix

package registry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// A lease directory another user could write, or another user's, is not
// trusted; so is not a lease another user wrote. Root can give files away,
// so the test proves the rules whoever runs it: as root it chowns to
// nobody; otherwise it checks the rules it can set up (modes, links).
func TestTrustedLeaseDirectories(t *testing.T) {
	lease := leasePath(t)
	dir := filepath.Dir(lease)
	if err := Trusted(lease); err != nil {
		t.Fatalf("a missing directory: %v", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := Trusted(lease); err != nil {
		t.Fatalf("this user's private directory: %v", err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := Trusted(lease); err == nil || !strings.Contains(err.Error(), "writable by other users") || !strings.Contains(err.Error(), "chmod o-w "+dir+" ") {
		t.Fatalf("a world-writable directory, or its fix not named: %v", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(filepath.Dir(dir), "linked")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	if err := Trusted(filepath.Join(link, "server.json")); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("a linked directory: %v", err)
	}
	// A lease, or a file beside it, that other users may write is not
	// trusted: a mode is checked, not tried, so root is refused too.
	for _, path := range []string{lease, PeerCounterPath(lease), HostsPath(lease), LockPath(lease)} {
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	if err := Trusted(lease); err == nil || !strings.Contains(err.Error(), "writable by other users") {
		t.Fatalf("a world-writable lease: %v", err)
	}
	if err := os.Chmod(lease, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := NextPeer(lease, 0); err == nil || !strings.Contains(err.Error(), "writable by other users") {
		t.Fatalf("a world-writable peer counter: %v", err)
	}
	if _, _, err := PeerOfHost(lease, "host", "self", func(string) bool { return true }, time.Now()); err == nil || !strings.Contains(err.Error(), "writable by other users") {
		t.Fatalf("a world-writable hosts file: %v", err)
	}
	if _, err := lockFile(context.Background(), LockPath(lease), 0); err == nil || !strings.Contains(err.Error(), "writable by other users") {
		t.Fatalf("a world-writable take-over lock: %v", err)
	}
	for _, path := range []string{lease, PeerCounterPath(lease), HostsPath(lease), LockPath(lease)} {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
	if os.Geteuid() != 0 {
		return
	}
	const nobody = 65534
	if err := os.WriteFile(lease, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(lease, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if err := Trusted(lease); err == nil || !strings.Contains(err.Error(), "written by another user") {
		t.Fatalf("another user's lease: %v", err)
	}
	if err := os.Chown(dir, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if err := Trusted(lease); err == nil || !strings.Contains(err.Error(), "belongs to another user") {
		t.Fatalf("another user's directory: %v", err)
	}
}

// No component from .ai/local down to the lease directory is followed
// when it is a symbolic link: Trusted says so, and Acquire makes nothing
// through it, neither the directories below nor the lease or its lock.
func TestALinkBelowAILocalIsNeverFollowed(t *testing.T) {
	for _, linked := range []string{"local", "local/state", "local/state/mcp"} {
		t.Run(linked, func(t *testing.T) {
			root := testtemp.Dir(t)
			outside := testtemp.Dir(t)
			ai := filepath.Join(root, ".ai")
			if err := os.MkdirAll(filepath.Join(ai, filepath.Dir(linked)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(ai, linked)); err != nil {
				t.Fatal(err)
			}
			lease := Path(root, "")
			if err := Trusted(lease); err == nil || !strings.Contains(err.Error(), filepath.Join(ai, linked)+" is a symbolic link") {
				t.Fatalf("Trusted = %v", err)
			}
			lf := &LeaseFile{Path: lease}
			if err := lf.Acquire(newLease(t)); err == nil || !strings.Contains(err.Error(), "symbolic link") {
				t.Fatalf("Acquire through a link = %v", err)
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Fatalf("made through the link: %v", entries)
			}
		})
	}
}

// Acquire makes the missing directories below .ai/local, private.
func TestAcquireMakesThePrivateLeaseDirectory(t *testing.T) {
	root := checkoutRoot(t)
	lease := Path(root, "")
	if err := (&LeaseFile{Path: lease}).Acquire(newLease(t)); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(filepath.Dir(lease))
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the lease directory: %v (%v), want a directory of mode 0700", fi, err)
	}
	if err := Trusted(lease); err != nil {
		t.Fatalf("the directory it made is not trusted: %v", err)
	}
}

// A directory on the way to the lease that another user could write (and
// so swap what comes after it) makes the lease untrusted, from the lease
// directory's parent up to the checkout's own parents; a sticky one (as
// /tmp is) does not, since nobody can rename what another made there. (A
// directory its group may write:
// TestADirectoryItsGroupMayWriteIsTrustedWhenTheGroupIsItsOwners.)
func TestADirectoryOnTheWayOthersCanWriteIsNotTrusted(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rel   string // from the checkout's parent
		mode  os.FileMode
		trust bool
	}{
		{"state writable by all", "repo/.ai/local/state", 0o777, false},
		{"local writable by all", "repo/.ai/local", 0o777, false},
		{".ai writable by all", "repo/.ai", 0o777, false},
		{"the checkout's parent writable by all", ".", 0o777, false},
		{"the checkout's parent sticky and writable by all", ".", 0o777 | os.ModeSticky, true},
		{"all private", "repo/.ai/local/state", 0o755, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := testtemp.Dir(t)
			lease := Path(filepath.Join(parent, "repo"), "")
			if err := os.MkdirAll(filepath.Dir(lease), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(filepath.Join(parent, tc.rel), tc.mode); err != nil {
				t.Fatal(err)
			}
			err := Trusted(lease)
			if tc.trust != (err == nil) || !tc.trust && !strings.Contains(err.Error(), "on the way to the lease") {
				t.Fatalf("Trusted = %v", err)
			}
			// A client served alone for it asks again every few seconds.
			before := openDescriptors(t)
			for range 50 {
				Trusted(lease)
			}
			if after := openDescriptors(t); after >= before+25 {
				t.Fatalf("50 more checks left %d descriptors open", after-before)
			}
		})
	}
}

// openDescriptors counts the descriptors this process has open.
func openDescriptors(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/dev/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(fds)
}

// A refusal names every directory on the way that is not trusted, above
// .ai and below it, so that a user fixes them all before the next start,
// not one a start.
func TestARefusalNamesEveryUntrustedDirectoryAtOnce(t *testing.T) {
	parent := testtemp.Dir(t)
	repo := filepath.Join(parent, "repo")
	lease := Path(repo, "")
	if err := os.MkdirAll(filepath.Dir(lease), 0o700); err != nil {
		t.Fatal(err)
	}
	shared := func(gid, owner int) error { return errors.New("its group has another member") }
	offending := []string{repo, filepath.Join(repo, ".ai"), filepath.Join(repo, ".ai/local"), filepath.Join(repo, ".ai/local/state")}
	for _, dir := range offending {
		if err := os.Chmod(dir, 0o770); err != nil {
			t.Fatal(err)
		}
	}
	err := trustedWith(lease, shared)
	var untrusted *untrustedError
	if !errors.As(err, &untrusted) {
		t.Fatalf("Trusted = %v, want a refusal", err)
	}
	for _, dir := range offending {
		if !strings.Contains(err.Error(), dir+", on the way to the lease, is writable by other users") {
			t.Errorf("the refusal does not name %s:\n%v", dir, err)
		}
	}
}

// .ai may be a symbolic link (links above .ai/local are the user's
// business), but the directory that holds that link is on the way to the
// lease all the same: whoever may write it can put another .ai there
// between the check and the use, and so hand this user's clients a lease of
// theirs. A checkout others may write is not trusted whether its .ai is a
// directory or a link to one.
func TestACheckoutOthersCanWriteIsNotTrustedWhenItsAIIsALink(t *testing.T) {
	parent := testtemp.Dir(t)
	repo := filepath.Join(parent, "repo")
	store := filepath.Join(parent, "store") // where the .ai link leads: private
	if err := os.MkdirAll(filepath.Join(store, "ai", "local", "state", "mcp"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(repo, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(store, "ai"), filepath.Join(repo, ".ai")); err != nil {
		t.Fatal(err)
	}
	lease := Path(repo, "")
	if err := Trusted(lease); err != nil {
		t.Fatalf("a private checkout whose .ai links to a private directory: %v", err)
	}
	if err := os.Chmod(repo, 0o777); err != nil { // as a clone under umask 000 makes it
		t.Fatal(err)
	}
	if err := Trusted(lease); err == nil || !strings.Contains(err.Error(), repo+", on the way to the lease, is writable by other users") {
		t.Fatalf("Trusted = %v, want %s refused: any user may replace the .ai link in it", err, repo)
	}
}

// .ai links to a path that itself goes through a link held in a directory
// anyone may write: whoever may write it may swap that link between the
// check and the use, as the checkout's .ai could be.
func TestALinkOnTheWayOfTheLinkedAIIsInADirectoryOthersMayWrite(t *testing.T) {
	parent := testtemp.Dir(t)
	repo := filepath.Join(parent, "repo")
	store := filepath.Join(parent, "store")
	hop := filepath.Join(parent, "hop") // anyone may write it: holds the link y
	for _, d := range []string{filepath.Join(store, "ai", "local", "state", "mcp"), repo, hop} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(store, filepath.Join(hop, "y")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(hop, "y", "ai"), filepath.Join(repo, ".ai")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(hop, 0o777); err != nil {
		t.Fatal(err)
	}
	err := Trusted(Path(repo, ""))
	if err == nil || !strings.Contains(err.Error(), hop) {
		t.Fatalf("Trusted = %v, want %s refused: any user may replace the link y in it", err, hop)
	}
}
