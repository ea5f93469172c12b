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
	"syscall"
	"testing"
	"time"
)

// newLease returns a fresh document for this process.
func newLease(t testing.TB) Lease {
	t.Helper()
	self, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	return NewLease(self, "/checkout", "fedcba9876543210fedcba9876543210", "", "1.0.0", time.Now())
}

// leasePath returns the default lease path of a fresh checkout root.
func leasePath(t *testing.T) string {
	t.Helper()
	return Path(checkoutRoot(t), "")
}

// checkoutRoot returns a fresh checkout root: a directory holding .ai, as
// every checkout served does (its manifest is there).
func checkoutRoot(t *testing.T) string {
	t.Helper()
	root := testtemp.Dir(t)
	if err := os.Mkdir(filepath.Join(root, ".ai"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func observe(t *testing.T, path string) Observation {
	t.Helper()
	obs, err := (&Observer{Path: path}).Observe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return obs
}

// noTemporaries fails if a temporary lease file was left in dir.
func noTemporaries(t *testing.T, dir string) {
	t.Helper()
	left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp"))
	if len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

func TestLeaseFile_Acquire_WritesTheWholeDocumentPrivately(t *testing.T) {
	path := leasePath(t)
	doc := newLease(t)
	lf := &LeaseFile{Path: path}
	if err := lf.Acquire(doc); err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(raw)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if got.Instance != doc.Instance || got.HasURL() || got.PID != os.Getpid() {
		t.Errorf("lease on disk = %+v", got)
	}
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700 | os.ModeDir} {
		if fi, err := os.Stat(p); err != nil || !testtemp.PrivateMode(fi.Mode(), want) {
			t.Errorf("mode of %s = %v (%v), want %v", p, fi.Mode(), err, want)
		}
	}
	if err := lf.Acquire(doc); !errors.Is(err, ErrLeaseHeld) {
		t.Errorf("second Acquire on one handle = %v, want ErrLeaseHeld", err)
	}
	noTemporaries(t, filepath.Dir(path))
}

func TestLeaseFile_Acquire_SecondGetsErrLeaseExists(t *testing.T) {
	path := leasePath(t)
	first := newLease(t)
	if err := (&LeaseFile{Path: path}).Acquire(first); err != nil {
		t.Fatal(err)
	}
	err := (&LeaseFile{Path: path}).Acquire(newLease(t))
	if !errors.Is(err, ErrLeaseExists) || !strings.Contains(err.Error(), path) {
		t.Fatalf("second Acquire = %v, want ErrLeaseExists naming %s", err, path)
	}
	if raw, _ := os.ReadFile(path); !Holds(raw, first.Instance) {
		t.Error("the first lease was replaced")
	}
	noTemporaries(t, filepath.Dir(path))
}

func TestLeaseFile_Acquire_FileWhereTheStateDirShouldBe(t *testing.T) {
	root := testtemp.Dir(t)
	state := filepath.Join(root, ".ai", "local", "state")
	writeFile(t, state, []byte("not a directory"))
	path := Path(root, "")

	err := (&LeaseFile{Path: path}).Acquire(newLease(t))
	if err == nil || !strings.Contains(err.Error(), state) {
		t.Fatalf("Acquire = %v, want an error naming %s", err, state)
	}
	if !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("Acquire = %v, want ENOTDIR", err)
	}
	obs := observe(t, path)
	if obs.Verdict.Class != Unusable || !strings.Contains(obs.Verdict.Reason, "not a directory") {
		t.Errorf("verdict = %+v, want unusable with the OS reason", obs.Verdict)
	}
}

func TestLeaseFile_Publish(t *testing.T) {
	path := leasePath(t)
	lf := &LeaseFile{Path: path}
	if err := lf.Publish("http://127.0.0.1:1"); !errors.Is(err, ErrLeaseNotOurs) {
		t.Errorf("Publish before Acquire = %v, want ErrLeaseNotOurs", err)
	}
	doc := newLease(t)
	if err := lf.Acquire(doc); err != nil {
		t.Fatal(err)
	}
	if err := lf.Publish("http://127.0.0.1:8741"); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	raw, _ := os.ReadFile(path)
	got, err := Decode(raw)
	if err != nil || got.URLString() != "http://127.0.0.1:8741" || got.Instance != doc.Instance {
		t.Fatalf("lease after Publish = %+v (%v)", got, err)
	}
	if fi, _ := os.Stat(path); !testtemp.PrivateMode(fi.Mode(), 0o600) {
		t.Errorf("mode after Publish = %v", fi.Mode())
	}
	noTemporaries(t, filepath.Dir(path))
}

func TestLeaseFile_Publish_RefusesWhenTheInstanceChanged(t *testing.T) {
	path := leasePath(t)
	lf := &LeaseFile{Path: path}
	if err := lf.Acquire(newLease(t)); err != nil {
		t.Fatal(err)
	}
	theirs := docBytes(t, nil)
	writeFile(t, path, theirs)

	if err := lf.Publish("http://127.0.0.1:1"); !errors.Is(err, ErrLeaseNotOurs) {
		t.Fatalf("Publish = %v, want ErrLeaseNotOurs", err)
	}
	if raw, _ := os.ReadFile(path); !bytes.Equal(raw, theirs) {
		t.Errorf("Publish changed another process's lease: %s", raw)
	}
	if _, held := lf.Held(); held {
		t.Error("the handle still holds a lease it lost")
	}
	noTemporaries(t, filepath.Dir(path))
}

func TestLeaseFile_Release(t *testing.T) {
	path := leasePath(t)
	lf := &LeaseFile{Path: path}
	if err := lf.Release(); err != nil {
		t.Errorf("Release before Acquire = %v", err)
	}
	if err := lf.Acquire(newLease(t)); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := lf.Release(); err != nil {
			t.Fatalf("Release #%d: %v", i+1, err)
		}
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lease still there after Release: %v", err)
	}
	if err := lf.Acquire(newLease(t)); err != nil {
		t.Errorf("Acquire after Release: %v", err)
	}
}

func TestLeaseFile_Release_LeavesAnotherProcesssLease(t *testing.T) {
	path := leasePath(t)
	lf := &LeaseFile{Path: path}
	if err := lf.Acquire(newLease(t)); err != nil {
		t.Fatal(err)
	}
	theirs := docBytes(t, nil)
	writeFile(t, path, theirs)

	if err := lf.Release(); !errors.Is(err, ErrLeaseNotOurs) {
		t.Errorf("Release = %v, want ErrLeaseNotOurs", err)
	}
	if raw, _ := os.ReadFile(path); !bytes.Equal(raw, theirs) {
		t.Errorf("Release touched another process's lease: %s", raw)
	}
	if err := lf.Release(); err != nil {
		t.Errorf("Release after losing the lease = %v, want nil", err)
	}
}

// A lease that cannot be read when it is released (made unreadable, say)
// may still be this process's: it is left in place, and Release says so
// rather than take it for another process's.
func TestLeaseFile_Release_SaysItLeavesALeaseItCannotRead(t *testing.T) {
	path := leasePath(t)
	lf := &LeaseFile{Path: path}
	if err := lf.Acquire(newLease(t)); err != nil {
		t.Fatal(err)
	}
	lf.FS = unreadable{path: path}
	if err := lf.Release(); err == nil || errors.Is(err, ErrLeaseNotOurs) || !strings.Contains(err.Error(), "cannot be read, so it is left in place") {
		t.Errorf("Release = %v", err)
	}
	if _, err := os.Lstat(path); err != nil {
		t.Errorf("the lease was removed: %v", err)
	}
}

// unreadable is the real file system, where the lease at path cannot be
// read.
type unreadable struct {
	osFS
	path string
}

func (u unreadable) Read(path string) Snapshot {
	if path == u.path {
		return Snapshot{Found: Unreadable, Err: fs.ErrPermission}
	}
	return Read(path)
}

func TestLeaseFile_TakeOver(t *testing.T) {
	path := leasePath(t)
	writeFile(t, path, []byte("{not a lease"))
	obs := observe(t, path)
	if obs.Verdict.Class != Corrupt {
		t.Fatalf("verdict = %+v", obs.Verdict)
	}
	lf := &LeaseFile{Path: path}
	removed, err := lf.TakeOver(obs)
	if err != nil || !removed {
		t.Fatalf("TakeOver = %t, %v; want true", removed, err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lease still there: %v", err)
	}
	if removed, err := lf.TakeOver(obs); removed || err != nil {
		t.Errorf("second TakeOver = %t, %v; want false, nil", removed, err)
	}
	if err := lf.Acquire(newLease(t)); err != nil {
		t.Errorf("Acquire after TakeOver: %v", err)
	}
}

// A take-over its caller dropped while it waited for the lock (its
// election ended) removes nothing once it holds the lock.
func TestLeaseFile_ADroppedTakeOverRemovesNothing(t *testing.T) {
	path := leasePath(t)
	writeFile(t, path, []byte("{not a lease"))
	obs := observe(t, path)
	asked := false
	removed, err := (&LeaseFile{Path: path}).TakeOverUnless(obs, func() bool { asked = true; return true })
	if removed || err != nil || !asked {
		t.Fatalf("TakeOverUnless, dropped = %t, %v (asked: %t); want false, nil", removed, err, asked)
	}
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("the lease is gone: %v", err)
	}
}

func TestLeaseFile_TakeOver_RefusesWhatChangedAfterJudging(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, path string)
	}{
		{"other bytes", func(t *testing.T, path string) { writeFile(t, path, []byte("{still not a lease")) }},
		{"a fresh lease", func(t *testing.T, path string) {
			os.Remove(path)
			if err := (&LeaseFile{Path: path}).Acquire(newLease(t)); err != nil {
				t.Fatal(err)
			}
		}},
		{"the same bytes in another file", func(t *testing.T, path string) {
			tmp := path + ".new"
			writeFile(t, tmp, []byte("{not a lease"))
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := leasePath(t)
			writeFile(t, path, []byte("{not a lease"))
			obs := observe(t, path)
			tt.change(t, path)
			before := Read(path)

			removed, err := (&LeaseFile{Path: path}).TakeOver(obs)
			if removed || err != nil {
				t.Fatalf("TakeOver = %t, %v; want false, nil", removed, err)
			}
			if after := Read(path); !after.Same(before) {
				t.Error("TakeOver changed a lease it had not judged")
			}
		})
	}
}

func TestLeaseFile_TakeOver_RefusesWhatWasNotJudgedForIt(t *testing.T) {
	path := leasePath(t)
	if err := os.MkdirAll(path, 0o700); err != nil {
		t.Fatal(err)
	}
	obs := observe(t, path)
	if obs.Verdict.Class != Unusable {
		t.Fatalf("a directory at the lease path is %s", obs.Verdict.Class)
	}
	if _, err := (&LeaseFile{Path: path}).TakeOver(obs); !errors.Is(err, ErrNotTakeable) {
		t.Errorf("TakeOver(unusable) = %v, want ErrNotTakeable", err)
	}
	if err := (&LeaseFile{Path: path}).Acquire(newLease(t)); !errors.Is(err, ErrLeaseExists) {
		t.Errorf("Acquire over a directory = %v, want ErrLeaseExists", err)
	}
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		t.Error("the directory was touched")
	}
}

func TestLeaseFile_TakeOver_UnlinksASymlinkNotItsTarget(t *testing.T) {
	path := leasePath(t)
	target := filepath.Join(testtemp.Dir(t), "precious")
	writeFile(t, target, docBytes(t, nil))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	obs := observe(t, path)
	if obs.Verdict.Class != Corrupt || obs.Lease != nil {
		t.Fatalf("a symlink was judged %+v (document %v)", obs.Verdict, obs.Lease)
	}
	if err := (&LeaseFile{Path: path}).Acquire(newLease(t)); !errors.Is(err, ErrLeaseExists) {
		t.Errorf("Acquire over a symlink = %v, want ErrLeaseExists", err)
	}
	removed, err := (&LeaseFile{Path: path}).TakeOver(obs)
	if err != nil || !removed {
		t.Fatalf("TakeOver = %t, %v", removed, err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the link is still there: %v", err)
	}
	if raw, err := os.ReadFile(target); err != nil || !Holds(raw, "0123456789abcdef0123456789abcdef") {
		t.Errorf("the link's target was touched: %v", err)
	}
}
