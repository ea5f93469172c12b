package registry

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The checkout's shared state (docs/design.md#nothing-is-lost: the
// execution history and the board's announcements) is kept beside the
// lease, under the lease's rules: in the trusted lease directory, this
// user's, 0600, opened without following a link and never blocking on a
// special file, and never holding the secret. The registry keeps the file;
// what is in it is the caller's (one record a line, the first naming its
// schema).
//
// A state is replaced whole (a temporary file renamed over it) only while
// the lease carries the writer's instance, under the sidecar lock, and
// grows by appends of one record each (one write on a descriptor opened
// O_APPEND), so that a kill -9 at any instant leaves a file that is whole
// but for, at most, a final partial line. A new leaseholder always
// replaces the state first: a former leaseholder still appending (frozen,
// say, before it learnt it lost its lease) appends to a file nobody reads
// any more.

// StatePath is the checkout's shared state of the servers of a lease path.
func StatePath(leasePath string) string { return leasePath + stateSuffix }

// stateSuffix is what a state path adds to its lease path.
const stateSuffix = ".state"

// MaxStateSize bounds what is read of a state: its writer replaces it long
// before (a few hundred KiB is usual), so a larger file is not one.
const MaxStateSize = 8 << 20

// StateFile is what the state path held when it was read.
type StateFile struct {
	// Found is what is there: Missing, Regular, or what is never read (a
	// link, a directory, a special file), or Unreadable with Err.
	Found Found
	// Raw is a regular file's bytes, at most MaxStateSize.
	Raw []byte
	// Oversized says the file holds more than MaxStateSize bytes.
	Oversized bool
	// Foreign says why a regular file is not this user's alone; "" when it
	// is.
	Foreign string
	Err     error
}

// ReadState reads the state beside the lease at leasePath, as [Read]
// reads a lease: never following a link, never opening a special file,
// and never reading more than MaxStateSize+1 bytes. It never fails:
// problems are reported as Unreadable.
func ReadState(leasePath string) StateFile {
	path := StatePath(leasePath)
	var foreign string
	snap := readFile(path, MaxStateSize, func(f *os.File, fi fs.FileInfo) { foreign = notMine(f, fi, path) })
	s := StateFile{Found: snap.Found, Foreign: foreign, Err: snap.Err}
	if snap.Found == Regular {
		s.Raw = snap.Raw
	}
	if len(s.Raw) > MaxStateSize {
		s.Raw, s.Oversized = s.Raw[:MaxStateSize], true
	}
	return s
}

// SetStateAside renames whatever is at the state path (a file, a link
// itself, a directory, a pipe) to a name of its own beside it,
// <state>.unreadable-<unix time>, so that nothing is lost and a fresh state
// can take its place, and returns the new name. As a state is replaced, it
// does so only while the lease carries instance ([ErrLeaseNotOurs]
// otherwise), under the sidecar lock: a leaseholder that judged the state
// and lost its lease meanwhile never moves its successor's.
func SetStateAside(leasePath, instance string, now time.Time) (string, error) {
	fsys, path := fsOr(nil), StatePath(leasePath)
	var aside string
	err := underLock(context.Background(), fsys, leasePath, path, nil, DefaultLockWait, func(string) error {
		if cur := fsys.Read(leasePath); !cur.Holds(instance) {
			return fmt.Errorf("%w: %s holds %s", ErrLeaseNotOurs, leasePath, describe(cur))
		}
		base := path + ".unreadable-" + strconv.FormatInt(now.Unix(), 10)
		aside = base
		for i := 2; ; i++ {
			if _, err := os.Lstat(aside); errors.Is(err, fs.ErrNotExist) {
				break
			}
			if i > 100 {
				return errors.New("every name beside it is taken")
			}
			aside = base + "-" + strconv.Itoa(i)
		}
		return synced(path, os.Rename(path, aside))
	})
	if err != nil {
		return "", fmt.Errorf("setting %s aside: %w", path, err)
	}
	return aside, nil
}

// Journal is a state this process writes, as the leaseholder of Instance.
// It is safe for concurrent use, and writes nothing until its first
// Replace.
type Journal struct {
	// Lease is the lease path; Instance the leaseholder's.
	Lease, Instance string
	// FS is the file system; nil is the real one.
	FS FS

	mu    sync.Mutex
	f     io.WriteCloser // open for appending; nil once closed
	swept bool           // the first Replace sweeps what died writing
	moved string         // the lease beside its file, last found moved (leaseNow)
}

// Replace writes content as the whole state beside the lease, only while
// the lease carries Instance ([ErrLeaseNotOurs] otherwise), and the
// journal appends to the new file from then on; both beside the lease at
// Lease, or where the state it appends to is now while its checkout is
// gone from there (leaseNow); never where a link from .ai/local down, or
// another user, could lead it ([Trusted]). content is written to a
// temporary file (0600, synced) that is renamed over the state under the
// sidecar lock, so a reader sees the old state or the new one. When the file cannot be replaced
// it goes on appending where it did. Appends wait meanwhile, so that none
// is made to the file being replaced.
func (j *Journal) Replace(content []byte) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	fsys, lease := fsOr(j.FS), j.leaseNow()
	path := StatePath(lease)
	if err := Trusted(lease); err != nil {
		return fmt.Errorf("writing the shared state: %w", err) // nothing is written through a link, or for another user
	}
	err := underLock(context.Background(), fsys, lease, path, content, DefaultLockWait, func(tmp string) error {
		if cur := fsys.Read(lease); !cur.Holds(j.Instance) {
			return fmt.Errorf("%w: %s holds %s", ErrLeaseNotOurs, lease, describe(cur))
		}
		if !j.swept {
			j.swept = true
			sweepTemps(fsys, lease, time.Now())
		}
		if j.f != nil {
			// Closed first: where a rename cannot replace a file that is open
			// (Windows without POSIX semantics), it is at least not this
			// journal's own handle that stops it.
			j.f.Close()
			j.f = nil
		}
		err := fsys.Rename(tmp, path)
		next, oerr := fsys.OpenAppend(path) // the new file, or the one it failed to replace
		if oerr != nil {
			return fmt.Errorf("opening the shared state to append: %w", oerr)
		}
		j.f = next
		return err
	})
	if err != nil {
		return fmt.Errorf("writing the shared state: %w", err)
	}
	return nil
}

// leaseNow is the lease the journal is replaced by: Lease, unless its
// checkout is gone from there (CheckoutGone), moved with its lease and
// state while its server serves on: then the lease beside the file this
// journal appends to, where that file is now, which a move leaves this
// writer's. The place is checked as the election checks a lease's
// (Trusted), and that its state is this journal's very file; it is kept
// for when the file cannot tell (its reopening failed, say).
func (j *Journal) leaseNow() string {
	if !CheckoutGone(j.Lease) {
		return j.Lease
	}
	if there, ok := j.movedLease(); ok {
		j.moved = there
	}
	return cmp.Or(j.moved, j.Lease)
}

// movedLease is the lease beside the file this journal appends to, where
// that is now.
func (j *Journal) movedLease() (string, bool) {
	f, ok := j.f.(*os.File)
	if !ok {
		return "", false
	}
	now, ok := pathNow(f)
	if !ok || !filepath.IsAbs(now) {
		return "", false
	}
	lease := filepath.Join(filepath.Dir(now), filepath.Base(j.Lease))
	mine, err := f.Stat()
	if err != nil {
		return "", false
	}
	there, err := os.Lstat(StatePath(lease))
	if err != nil || !os.SameFile(mine, there) || Trusted(lease) != nil {
		return "", false
	}
	return lease, true
}

// Append adds one record, a whole line, in one write.
func (j *Journal) Append(line []byte) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return errors.New("the shared state is closed")
	}
	_, err := j.f.Write(line)
	return err
}

// Close stops appending.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	return err
}

// staleTemp is how old a temporary file beside the lease must be to have
// been left by a writer that died before renaming it: a write takes
// milliseconds.
const staleTemp = time.Minute

// sweepTemps removes the temporary files of the lease and its state that a
// writer killed between writing and renaming one left behind, older than
// staleTemp: otherwise each such kill keeps a copy of the state forever.
// Run by the leaseholder, under the sidecar lock.
func sweepTemps(fsys FS, leasePath string, now time.Time) {
	dir, prefix := filepath.Dir(leasePath), "."+filepath.Base(leasePath)+"."
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, ".tmp") {
			continue
		}
		if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) > staleTemp {
			_ = fsys.Remove(filepath.Join(dir, name))
		}
	}
}
