package registry

import (
	"bytes"
	"context"
	"errors"
	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLeaseFile_TheWholeDirectoryRemoved(t *testing.T) {
	root := checkoutRoot(t)
	publisher := &LeaseFile{Path: Path(root, "")}
	releaser := &LeaseFile{Path: Path(root, "review")}
	for _, lf := range []*LeaseFile{publisher, releaser} {
		if err := lf.Acquire(newLease(t)); err != nil {
			t.Fatal(err)
		}
	}
	other := Path(root, "other")
	writeFile(t, other, []byte("{not a lease"))
	obs := observe(t, other)
	if err := testtemp.RemoveAll(filepath.Join(root, ".ai")); err != nil {
		t.Fatal(err)
	}
	if err := publisher.Publish("http://127.0.0.1:1"); !errors.Is(err, ErrLeaseNotOurs) {
		t.Errorf("Publish = %v, want ErrLeaseNotOurs", err)
	}
	if err := releaser.Release(); err != nil {
		t.Errorf("Release = %v, want nil", err)
	}
	if _, held := releaser.Held(); held {
		t.Error("the handle still holds a lease that is gone")
	}
	if removed, err := (&LeaseFile{Path: other}).TakeOver(obs); removed || err != nil {
		t.Errorf("TakeOver = %t, %v; want false, nil", removed, err)
	}
}

// Where the file system has no hard links (FAT, some network shares), the
// lease is created exclusively and written whole; an existing file is
// never replaced.
func TestCreateCompleteWithoutHardLinks(t *testing.T) {
	dir := testtemp.Dir(t)
	path := filepath.Join(dir, "server.json")
	raw := docBytes(t, nil)
	noLinks := func(string, string) error { return &os.LinkError{Op: "link", Err: errors.ErrUnsupported} }
	if err := createComplete(noLinks, filepath.Join(dir, "absent.tmp"), path, raw); err != nil {
		t.Fatalf("createComplete without hard links: %v", err)
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, raw) {
		t.Fatalf("the lease holds %q (%v), want the whole document", got, err)
	}
	if err := createComplete(noLinks, filepath.Join(dir, "absent.tmp"), path, []byte("other")); !errors.Is(err, fs.ErrExist) {
		t.Errorf("over an existing lease: %v, want ErrExist", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, raw) {
		t.Errorf("the existing lease was changed to %q", got)
	}
	blocked := filepath.Join(dir, "missing-dir", "server.json")
	if err := createComplete(noLinks, filepath.Join(dir, "absent.tmp"), blocked, raw); err == nil || !strings.Contains(err.Error(), "linking") {
		t.Errorf("where neither works: %v, want both reasons", err)
	}
}

// A handle that lost its lease forgets it without touching the file, and
// may then acquire again.
func TestAForgottenLeaseCanBeAcquiredAgain(t *testing.T) {
	lf := &LeaseFile{Path: leasePath(t)}
	if err := lf.Acquire(newLease(t)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(lf.Path); err != nil { // lost: removed under it
		t.Fatal(err)
	}
	lf.Forget()
	if _, ok := lf.Held(); ok {
		t.Fatal("a forgotten lease is still held")
	}
	if err := lf.Acquire(newLease(t)); err != nil {
		t.Fatalf("acquiring again after Forget: %v", err)
	}
}

// A release that cannot take the lock still forgets the lease: a handle
// that kept it would refuse every later Acquire (ErrLeaseHeld), and its
// process, served alone, would never share again. (Found by the model
// check, internal/leasecheck: acquire, the directory turns unusable,
// publish and release fail, and the process stays alone for good.)
func TestReleaseThatFailsForgetsTheLease(t *testing.T) {
	path := leasePath(t)
	lf := &LeaseFile{Path: path, LockWait: 10 * time.Millisecond}
	if err := lf.Acquire(newLease(t)); err != nil {
		t.Fatal(err)
	}
	other, err := lockFile(context.Background(), LockPath(path), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := lf.Release(); !errors.Is(err, ErrLockTimeout) {
		t.Fatalf("Release while another holds the lock = %v, want ErrLockTimeout", err)
	}
	other.Close()
	if _, held := lf.Held(); held {
		t.Fatal("the handle still holds the lease it tried to release")
	}
	if err := lf.Acquire(newLease(t)); !errors.Is(err, ErrLeaseExists) {
		t.Fatalf("Acquire after a failed release = %v, want ErrLeaseExists (the old lease is still there)", err)
	}
}

// The shared state is synced to disk, the lease never: a lease found after
// a crash is taken over whatever it holds, so no flush holds a take-over
// back.
func TestOnlyTheSharedStateIsSynced(t *testing.T) {
	lease := testtemp.Rooted("/repo/.ai/local/state/mcp/server.json")
	if durable(lease) || !durable(StatePath(lease)) {
		t.Fatalf("durable(lease) = %v, durable(state) = %v; want only the state", durable(lease), durable(StatePath(lease)))
	}
}
