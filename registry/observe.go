package registry

import (
	"cmp"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/majordomus-mcp/majordomus-mcp/registry/proc"
)

// ProbeTarget is what a probe asks: does the server at URL prove it holds
// the lease's Secret, and say it holds the lease? The secret is fresh with
// every lease, so the proof names this lease of this checkout, and its
// server, once a lease copied from another checkout is never asked
// ([Observer.Root]).
type ProbeTarget struct {
	URL string
	// Secret is the lease's: the server must prove it holds it.
	Secret string
}

// ProbeFunc probes a lease's server. It must return within its own timeout
// or when ctx ends. [HTTPProbe] is the real one.
type ProbeFunc func(ctx context.Context, target ProbeTarget) ProbeResult

// Observation is one judged reading of a lease path: what was there, its
// decoded document, the owner's liveness and the verdict. Pass it to
// [LeaseFile.TakeOver] to remove exactly what was judged.
type Observation struct {
	// Path is the lease path that was read.
	Path string
	// Snapshot holds the exact bytes that were judged.
	Snapshot
	// Lease is the decoded document, nil unless it is a valid one.
	Lease   *Lease
	Owner   proc.Liveness
	Verdict Verdict
	// Proven is the connection a live server proved itself on: a bridge's
	// first request may go on it instead of a new one proved again. Its
	// holder closes it.
	Proven net.Conn
	// Identity is what the live server whose connection is Proven said of
	// itself: how a greeting answers for it (internal/node).
	Identity json.RawMessage
	// Silent is true when the server the lease names said nothing to the
	// probe within its timeout: asked again, it would keep the asker as
	// long once more.
	Silent bool
	// Elsewhere is the root the lease was written for, when that is
	// another directory here than this checkout's: its server serves that
	// one, and nothing is asked of it.
	Elsewhere string
}

// Observer reads and judges one lease path, again on every call. It keeps
// no state: how long a busy lease has been waited for is the caller's to
// measure (the machine's busy grace), and a busy lease the caller has
// waited out is taken over with [LeaseFile.TakeOver].
//
// An Observer is safe for concurrent use.
type Observer struct {
	// Path is the lease path, and Profile the profile it is for: a lease
	// of another profile came there by hand, and is not that profile's
	// server. Empty: every lease is taken to be the path's.
	Path    string
	Profile string
	// Root is this checkout's root. A lease whose root is another
	// directory here came with a copy of its checkout: its server serves
	// that one, though it would prove the copied secret. Empty: every
	// lease is taken to be this checkout's.
	Root string
	// Executable and Version describe this process, for the superseded rule.
	Executable Executable
	Version    string
	Timings    Timings
	// Probe probes a lease's URL; nil counts every probe as failed.
	Probe ProbeFunc
	// KeepProven keeps a live server's proven connection open in the
	// Observation (an election's, which may attach); else it is closed.
	KeepProven bool
	// Namespaces are those this process judges from; empty means its own
	// ([proc.Namespaces]). An owner that runs in others is told alive by
	// the lock it holds on its lease ([Snapshot.Holder]), not by its pid.
	Namespaces string
	// Env is the host; the zero Env is the real one.
	Env proc.Env
	// FS is the file system; nil is the real one.
	FS FS
}

// Observe reads the lease path (never following a symbolic link), decodes
// it, tells whether its owner is alive, probes its URL when the judge needs
// that, and judges it. It fails only when ctx ends. Its verdict is never
// Unprobed: a probe that gave no answer failed.
func (o *Observer) Observe(ctx context.Context) (Observation, error) {
	snap := fsOr(o.FS).Read(o.Path)
	obs := Observation{Path: o.Path, Snapshot: snap}
	in := Input{
		Found:      snap.Found,
		Raw:        snap.Raw,
		Now:        o.Env.Time(),
		Executable: o.Executable,
		Version:    o.Version,
		Profile:    o.Profile,
		Timings:    o.Timings,
	}
	if snap.Err != nil {
		in.ReadErr = snap.Err.Error()
	}
	if snap.Found == Regular {
		if doc, problem := decode(snap.Raw); problem == "" {
			obs.Lease = &doc
			switch {
			case elsewhere(doc.Root, o.Root) && !o.movedHere(doc, snap):
				in.Elsewhere, obs.Elsewhere = doc.Root, doc.Root
				// the lease's directory, which no hard link can make one
				// with another's (as cp -al makes the files)
				in.Shared, _ = sameFile(Dir(doc.Root), filepath.Dir(o.Path))
			case o.copiedHere(doc, snap):
				in.Elsewhere, obs.Elsewhere = doc.Root, doc.Root
			}
			in.Foreign, in.OutOfReach = o.foreign(doc)
			obs.Owner = o.owner(doc, in.Foreign != "", in.Elsewhere != "", func() proc.Liveness { return snap.Holder })
			in.Owner = obs.Owner
			if e := doc.Executable; e != nil && e.Path != "" && e.Path == o.Executable.Path {
				in.OnDisk, _ = StatExecutable(e.Path) // which of the two is current, the file says
			}
		}
	}

	v := Judge(in)
	if v.NeedsProbe {
		in.Probe = ProbeResult{Status: ProbeFailed, Reason: "no probe configured"}
		switch {
		case in.Owner == proc.OwnerGone && o.OwnerEnding(obs):
			// Its listener may still take the probe's connection, and
			// hold it until the system closes it.
			in.Probe.Reason = "not probed: its owner has begun to exit"
		case o.Probe != nil:
			in.Probe = o.Probe(ctx, ProbeTarget{URL: obs.Lease.URLString(), Secret: obs.Lease.Secret})
		}
		if in.Probe.Status == ProbeNone { // so that Unprobed never leaves Observe
			in.Probe = ProbeResult{Status: ProbeFailed, Reason: "the probe gave no answer"}
		}
		v = Judge(in)
		if v.Class == Busy || in.OutOfReach && v.Class == Unusable {
			// A server killed just now refuses the probe: its owner, asked
			// before, is asked again, or the lease would be waited for as a
			// busy one's (or its server left for one out of reach).
			in.Owner = o.owner(*obs.Lease, in.Foreign != "", in.Elsewhere != "", func() proc.Liveness { return fsOr(o.FS).Read(o.Path).Holder })
			obs.Owner = in.Owner
			v = Judge(in)
		}
		obs.Silent = in.Probe.Silent
		if c := in.Probe.Conn; c != nil && (!o.KeepProven || v.Class != Live || ctx.Err() != nil) {
			c.Close()
		} else {
			obs.Proven, obs.Identity = c, in.Probe.Identity
		}
		if err := ctx.Err(); err != nil {
			return Observation{}, err
		}
	}
	obs.Verdict = v
	return obs, nil
}

// OwnerEnding reports whether the owner of the lease obs judged has begun
// to exit ([proc.Env.Ending]): its server will answer nothing. An owner in
// other namespaces makes no claim: its pid is another process's here.
func (o *Observer) OwnerEnding(obs Observation) bool {
	if obs.Lease == nil {
		return false
	}
	foreign, _ := o.foreign(*obs.Lease)
	return foreign == "" && o.Env.Ending(obs.Lease.PID, obs.Lease.ProcessStart)
}

// foreign returns the namespaces doc's owner runs in, when they are not
// this process's, and whether its network namespace is another too.
func (o *Observer) foreign(doc Lease) (namespaces string, outOfReach bool) {
	ours := cmp.Or(o.Namespaces, proc.Namespaces())
	if doc.Namespaces == "" || ours == "" || doc.Namespaces == ours {
		return "", false
	}
	return doc.Namespaces, network(doc.Namespaces) != network(ours)
}

// network is the network namespace ("net:[…]") among namespaces.
func network(namespaces string) string {
	for _, ns := range strings.Fields(namespaces) {
		if strings.HasPrefix(ns, "net:") {
			return ns
		}
	}
	return ""
}

// owner tells whether doc's owner runs: by its pid, start and boot; or,
// when it runs in other namespaces (foreign), where that pid is another
// process or none, by the lock it holds on its lease for its term, as
// holder finds it. A lease written for another checkout (elsewhere) that
// no process holds has no owner here, whoever runs under its pid.
func (o *Observer) owner(doc Lease, foreign, elsewhere bool, holder func() proc.Liveness) proc.Liveness {
	if foreign {
		return holder()
	}
	alive := o.Env.Alive(doc.PID, doc.ProcessStart, doc.BootID)
	if elsewhere && alive != proc.OwnerGone && holder() == proc.OwnerGone {
		// A copy of another checkout's lease: its owner holds the file it
		// wrote there, and nobody this one, so nobody is waited for.
		return proc.OwnerGone
	}
	return alive
}

// movedHere reports whether a lease whose root names another directory
// was written in this very one, by its id, which mv keeps: it came here
// with its checkout, moved, while something was made at the old path, and
// is this checkout's, probed. A copy's (cp -a, cp -al), or another
// checkout's reached through a link or a mount, names another directory;
// a lease that names none (an older release's) is a copy's, as before; so
// is one nobody holds, where the lock tells (a moved lease's owner holds
// it still): an id may be given again (a directory removed, another made).
func (o *Observer) movedHere(doc Lease, snap Snapshot) bool {
	return snap.Holder != proc.OwnerGone && doc.RootDir != "" && doc.RootDir == DirectoryID(o.Root)
}

// copiedHere reports whether a lease whose root is not another directory
// here (this one's path, or none here) was written in another directory
// than this checkout's, by its id, and nobody holds it, where the lock
// tells: a copy's, come with a checkout copied from one moved while it was
// served (mv x y; cp -a y x), whose server serves the moved one. Only a
// bound lease: a binding one may be its owner's still unlocked, where the
// file system has no hard links (its lock is on the file it renames later).
func (o *Observer) copiedHere(doc Lease, snap Snapshot) bool {
	if snap.Holder != proc.OwnerGone || doc.RootDir == "" || o.Root == "" || !doc.HasURL() {
		return false
	}
	ours := DirectoryID(o.Root)
	return ours != "" && doc.RootDir != ours
}

// sameFile reports whether the paths a and b name one file; known is
// false when either cannot be read.
func sameFile(a, b string) (same, known bool) {
	x, err := os.Stat(a)
	if err != nil {
		return false, false
	}
	y, err := os.Stat(b)
	return err == nil && os.SameFile(x, y), err == nil
}

// elsewhere reports whether root, a lease's, is another directory here
// than ours, told by the file, not the name (a link, a mount, or a name's
// case where the file system ignores it name this one too). A root that
// is not here makes no claim: it may be this checkout seen from another
// mount (a container's), and the probe tells.
func elsewhere(root, ours string) bool {
	if root == "" || ours == "" || root == ours {
		return false
	}
	same, known := sameFile(root, ours)
	return known && !same
}
