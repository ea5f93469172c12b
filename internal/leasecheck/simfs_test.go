package leasecheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"syscall"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/registry"
)

// The simulated lease directory: names pointing at inodes, one sidecar
// lock, and a switch that makes the whole directory unusable (its
// permission taken away, its contents kept). Every operation a process
// makes through it first pauses the process (procFS.enter): that pause is
// where the checker interleaves the other processes and the faults.

const (
	leasePath = "/checkout/.ai/local/state/mcp/server.json"
	statePath = leasePath + ".state"
)

// inode is one file. A lease file is its bytes; the state file is the
// instance whose Replace put it in place and the records appended to it,
// each naming its writer.
//
// A lease written by someone else between a process's read under the lock
// and its rename or removal is outside any protocol's reach (that writer
// takes no lock): S2 and S3 judge what the protocol's processes do.
type inode struct {
	raw     string
	foreign bool // written by someone else, not by a process of the protocol
	writer  string
	records []string
}

// errUnusable is what every operation meets while the directory is
// unusable.
var errUnusable = &fs.PathError{Op: "open", Path: leasePath, Err: syscall.EACCES}

// errGone is what a process that was killed meets if its code runs on
// (deferred calls while it unwinds): nothing it does any longer counts.
var errGone = errors.New("the process is gone")

// procFS is the simulated directory as one process sees it: the
// registry.FS of that process's LeaseFile, Journal and Observer.
type procFS struct{ p *proc }

var _ registry.FS = procFS{}

func (f procFS) w() *world { return f.p.w }

func (f procFS) Read(path string) registry.Snapshot {
	if f.p.enter("read "+base(path)) != nil {
		return registry.Snapshot{Found: registry.Unreadable, Err: errGone}
	}
	w := f.w()
	id, ok := w.names[path]
	switch {
	case w.blocked:
		f.p.note("unusable")
		return registry.Snapshot{Found: registry.Unreadable, Err: errUnusable}
	case !ok:
		return registry.Snapshot{Found: registry.Missing}
	}
	f.p.note(w.inodes[id].raw)
	return registry.Snapshot{Found: registry.Regular, Raw: []byte(w.inodes[id].raw)}
}

// MakeDir, WriteTemp and the removal of a temporary file touch nothing
// another process sees: they are not steps of their own.
func (f procFS) MakeDir(string) error {
	if f.p.gone() {
		return errGone
	}
	if f.w().blocked {
		return errUnusable
	}
	return nil
}

func (f procFS) WriteTemp(path string, raw []byte) (string, error) {
	if err := f.MakeDir(""); err != nil {
		return "", err
	}
	tmp := fmt.Sprintf("%s.%s.tmp", path, f.p.name)
	f.w().names[tmp] = f.w().newInode(inode{raw: string(raw)})
	return tmp, nil
}

func (f procFS) Link(tmp, path string, _ []byte) error {
	if err := f.p.enter("link " + base(path)); err != nil {
		return err
	}
	w := f.w()
	switch _, taken := w.names[path]; {
	case w.blocked:
		f.p.note("unusable")
		return errUnusable
	case taken:
		f.p.note("exists")
		return &fs.PathError{Op: "link", Path: path, Err: fs.ErrExist}
	}
	w.names[path] = w.names[tmp]
	return nil
}

func (f procFS) Rename(tmp, path string) error {
	if err := f.p.enter("rename over " + base(path)); err != nil {
		return err
	}
	w := f.w()
	id, ok := w.names[tmp]
	switch {
	case w.blocked:
		f.p.note("unusable")
		return errUnusable
	case !ok:
		return &fs.PathError{Op: "rename", Path: tmp, Err: fs.ErrNotExist}
	}
	w.judgeReplacement(f.p, path, id)
	w.names[path] = id
	delete(w.names, tmp)
	return nil
}

// Hold holds nothing: every simulated process runs in one namespace, where
// an owner is judged by its pid, never by a lock on its lease.
func (procFS) Hold(string) (func(), error) { return func() {}, nil }

func (f procFS) Remove(path string) error {
	if strings.HasSuffix(path, ".tmp") { // a temporary file: this process's own
		if !f.p.gone() {
			delete(f.w().names, path)
		}
		return nil
	}
	if err := f.p.enter("remove " + base(path)); err != nil {
		return err
	}
	w := f.w()
	switch _, ok := w.names[path]; {
	case w.blocked:
		f.p.note("unusable")
		return errUnusable
	case !ok:
		return &fs.PathError{Op: "unlink", Path: path, Err: fs.ErrNotExist}
	}
	w.judgeRemoval(f.p, path)
	delete(w.names, path)
	return nil
}

// Lock takes the sidecar lock, which a process that dies releases (see
// world.crash). The checker lets a process wait for it as long as it
// likes, or gives up for it (ErrLockTimeout) while another holds it.
// Unlocking is part of the step that ends the critical section.
func (f procFS) Lock(context.Context, string, time.Duration) (func(), error) {
	if err := f.p.enter("lock"); err != nil {
		return nil, err
	}
	w, p := f.w(), f.p
	switch {
	case w.blocked:
		f.p.note("unusable")
		return nil, errUnusable
	case p.lockGivesUp:
		p.lockGivesUp = false
		p.note("gave up")
		return nil, fmt.Errorf("%w: the sidecar lock", registry.ErrLockTimeout)
	}
	w.lockedBy, p.locked = p.idx, true
	return func() {
		if !p.gone() && w.lockedBy == p.idx {
			w.lockedBy = -1
		}
	}, nil
}

func (f procFS) OpenAppend(path string) (io.WriteCloser, error) {
	if err := f.MakeDir(""); err != nil {
		return nil, err
	}
	id, ok := f.w().names[path]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	f.p.appendTo = id
	return &appender{p: f.p, id: id}, nil
}

// appender is a descriptor open for appending: it keeps writing to its
// inode, whatever name that inode has (or none) now.
type appender struct {
	p  *proc
	id int
}

func (a *appender) Write(b []byte) (int, error) {
	if err := a.p.enter("append to the state"); err != nil {
		return 0, err
	}
	in := a.p.w.inodes[a.id]
	in.records = append(in.records, string(b))
	return len(b), nil
}

func (a *appender) Close() error {
	if a.p.appendTo == a.id {
		a.p.appendTo = 0
	}
	return nil
}

func (w *world) newInode(in inode) int {
	w.nextInode++
	w.inodes[w.nextInode] = &in
	return w.nextInode
}

// judgeReplacement records, for S2 and S3, a rename over the lease or the
// state that the process had no right to make.
func (w *world) judgeReplacement(p *proc, path string, id int) {
	if path == statePath {
		w.inodes[id].writer = p.instance
	}
	if w.foreignLease() {
		return
	}
	switch path {
	case leasePath:
		if !w.leaseCarries(p.instance) {
			w.broken = append(w.broken, fmt.Sprintf("S2: %s replaced the lease while it named %s", p.name, w.describe(leasePath)))
		}
	case statePath:
		if !w.leaseCarries(p.instance) {
			w.broken = append(w.broken, fmt.Sprintf("S3: %s replaced the shared state while the lease named %s", p.name, w.describe(leasePath)))
		}
	}
}

// judgeRemoval records, for S2, the removal of a lease that names another
// owner than the one the remover judged: its own lease for a release, the
// lease it judged unusable for a take-over.
func (w *world) judgeRemoval(p *proc, path string) {
	if path != leasePath || w.foreignLease() {
		return
	}
	now := w.owner(w.inodes[w.names[leasePath]].raw)
	judged := "instance " + p.instance
	if p.op.name == opTakeOver {
		judged = w.owner(p.op.judged)
	}
	if now != judged {
		w.broken = append(w.broken, fmt.Sprintf("S2: %s removed the lease of %s, having judged %s", p.name, now, judged))
	}
}

// owner names who a lease file's bytes belong to: the instance of a valid
// document, or the bytes themselves.
func (w *world) owner(raw string) string {
	if doc, err := registry.Decode([]byte(raw)); err == nil {
		return "instance " + doc.Instance
	}
	return fmt.Sprintf("the bytes %q", abbreviate(raw))
}

func (w *world) foreignLease() bool {
	id, ok := w.names[leasePath]
	return ok && w.inodes[id].foreign
}

func (w *world) leaseCarries(instance string) bool {
	id, ok := w.names[leasePath]
	return ok && registry.Holds([]byte(w.inodes[id].raw), instance)
}

// describe says what is at path, for traces.
func (w *world) describe(path string) string {
	id, ok := w.names[path]
	if !ok {
		return "nothing"
	}
	raw := w.inodes[id].raw
	doc, err := registry.Decode([]byte(raw))
	switch {
	case err != nil:
		return fmt.Sprintf("%q", abbreviate(raw))
	case doc.HasURL():
		return fmt.Sprintf("the lease of %s at %s", doc.Instance, doc.URLString())
	}
	return fmt.Sprintf("the lease of %s, no URL", doc.Instance)
}

func abbreviate(s string) string {
	if len(s) > 24 {
		return s[:24] + "…"
	}
	return s
}

func base(path string) string { return path[strings.LastIndex(path, "/")+1:] }
