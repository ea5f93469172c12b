// Package registry owns the lease file: the one file on disk that says which
// process runs a checkout's shared server. It reads, judges, writes, takes
// over and watches that file; whether the process it names still runs is
// registry/proc's to say, and the fleet's runtime registry is
// registry/runtimes'. It knows nothing of the per-process state machine: it
// answers with values (a [Verdict], an [Observation], a [Change]) and
// sentinel errors, and internal/node turns them into the machine's facts.
// Of this project it imports registry/proc and internal/secret alone.
//
// # Layout and permissions
//
// For a checkout root and a profile:
//
//	<root>/.ai/local/state/mcp/               directory, created 0700
//	<root>/.ai/local/state/mcp/server.json    the lease of the default profile, 0600
//	<root>/.ai/local/state/mcp/server.<p>.json  the lease of profile p
//	<lease>.lock                              sidecar lock file, 0600, empty, never removed
//	<lease>.peers                             the counter of peer numbers (peers.go), never removed
//	<lease>.state                             the checkout's shared state (state.go), 0600
//	<lease>.state.unreadable-<unix time>      a state that could not be read, set aside
//	<root>/.ai/local/state/mcp/.gitignore     "*": nothing here is for git (ignore.go), 0600
//	.<lease-name>.<random>.tmp                a temporary document, alive for one write
//
// The files beside the lease are opened as the lease is (never following a
// link, never blocking on a special file) and hold no secret. The shared
// state's content is its writer's (package surface says its format); the
// registry reads it within a bound, sets aside what is not a regular file
// of this user's, and replaces it only while the lease is the writer's.
//
// The lease and what leads to it are trusted only as [Trusted] says
// (docs/security.md): no symbolic link from .ai/local down (each directory
// opened from the one above, checked on what was opened, and made the same
// way), the lease directory and the lease this user's and nobody else's to
// write, and on Unix every directory on the way from / this user's or
// root's and writable by nobody else unless sticky. A directory its group
// may write counts as private when that group's only member is its owner (a
// user-private group, as under umask 002: docs/design.md#sharing-heals),
// read from /etc/group and /etc/passwd; never on macOS, whose groups are
// Open Directory's. The lease carries a secret that only its user can read;
// a probe believes a server only on a proof made with it ([FetchIdentity]).
//
// The lease is one JSON object (see [Lease]) with schema
// majordomus-mcp-lease/v1. Unknown keys are ignored when reading. A lease
// path that is a link is never followed: it is read with Lstat and opened
// with O_NOFOLLOW (a reparse point is refused on Windows), and a take-over
// unlinks the link, never its target.
// A special file (pipe, socket, device) is never opened.
//
// # Write protocol
//
// No reader ever sees a half-written lease that a live process is writing.
//
//  1. Acquire ([LeaseFile.Acquire]): write the complete document to a
//     temporary file in the lease directory and link(2) it to the
//     lease name, which fails with EEXIST ([ErrLeaseExists]) when anything is
//     there. The temporary file is removed in every case. Only where the
//     file system has no hard links is the lease created exclusively and
//     written at once, under the lock; a reader then sees it empty for a
//     moment, judges it empty, and its take-over (which waits for the lock)
//     finds it complete and removes nothing.
//  2. Publish the URL ([LeaseFile.Publish]): write the new document to a
//     temporary file and rename(2) it over the lease, only while the file
//     still carries our instance ([ErrLeaseNotOurs] otherwise). Windows
//     refuses such a rename for a moment while another process has the file
//     open: it is retried a bounded number of times.
//  3. Release ([LeaseFile.Release]): unlink the lease only while it still
//     carries our instance.
//  4. Take over ([LeaseFile.TakeOver]): re-read the lease and unlink it only
//     if it still holds exactly the bytes (and the file) that were judged.
//
// Each of these runs under an exclusive lock on the sidecar lock file
// (flock(2) on Unix, LockFileEx on Windows, where locks are mandatory and so
// never taken on the lease itself), taken with a bounded wait
// ([DefaultLockWait]). The system releases it when its holder dies, so a killed process never leaves the lock held. The
// lock makes "read, compare, then link/rename/unlink" one critical section
// across processes: of several processes taking over one judged lease at
// most one removes it, a lease written after it was judged is never removed,
// and a publish or release never acts on a lease another process has just
// written.
//
// On Linux an owner also holds its lease for its term: an open file
// description lock on one byte past its end (leasehold_linux.go), taken on
// the temporary file before it is linked or renamed into place, released
// when the lease is released, lost or forgotten. A judge in another pid
// namespace than the owner's ([Lease.Namespaces]: a container's beside its
// host) cannot see that pid: it asks the lock instead ([Snapshot.Holder]).
// In another network namespace it cannot reach that loopback either, and
// leaves a held lease alone (unusable: served alone) where it would take a
// live server's lease for a dead one's, and the two sides would take it in
// turn. A lease created in place (no hard links) is held only from its
// publication, and on a file system that lends no locks not at all.
//
// Nothing of the lease is synced to disk: every reader reads the same
// page cache, so a complete file is complete to all of them at once, and
// a lease found after the machine crashed is stale by its boot id (or
// empty, or corrupt, if its bytes were lost) and taken over either way.
// The shared state beside it is synced ([WriteState]): it is the
// checkout's history, kept across a crash.
//
// # Who may delete what
//
// A process removes the lease only when it carries its own instance
// (release), or when it judged it unusable and it is still byte for byte
// what it judged (take-over). Nobody removes the lock file. A temporary
// file is removed by its writer; one left by a writer killed mid-write is
// harmless (hidden, never read).
//
// # Classes
//
// [Judge] is a pure function of what was read ([Input]); [Observer] does the
// reading. Its classes ([Class]) are the log vocabulary, and the state
// machine's: internal/node hands a verdict to the machine as it is, so a
// class is one word everywhere (machine.Class(Live) is machine.ClassLive;
// internal/node's TestEveryLeaseClassIsHandled holds the two lists equal):
//
//   - absent: no file; acquire.
//   - live: the server at the URL proves it holds this lease's secret (so
//     it is this lease's instance, of this checkout) and says leaseholder:
//     true; attach.
//   - stale: the URL does not answer and the owner is gone; take over. (A
//     lease whose root is another directory here than this checkout's came
//     with a copy of its checkout: its URL is not asked, and counts as not
//     answering; [Observer.Root].)
//   - busy: the URL does not answer but the owner is alive (or cannot be
//     told); the caller waits, up to its busy grace, then takes it over
//     ([LeaseFile.TakeOver] accepts a busy lease still as judged).
//   - corrupt: not JSON, not an object, another schema, a type error, larger
//     than [MaxLeaseSize], a symbolic link or a special file; take over.
//   - empty: empty or whitespace, however old (no owner writes one: a lease
//     is linked into place complete); take over at once.
//   - binding: no URL yet, the owner not known to be gone, and its
//     started_at less than the bind grace ago; wait.
//   - abandoned: no URL, and its started_at at least the bind grace ago,
//     unreadable or further ahead of the clock than a second, or its owner
//     gone (a dead owner is never waited for); take over.
//   - superseded: started from our executable path whose file has changed
//     since (mtime or size), or an older x.y.z version than ours; take over
//     without probing. Another path, a missing field or a version that is
//     not plain x.y.z makes no claim; nor does a version, when our own file
//     at the lease's executable path has changed since we started (an older
//     release put back in its place: its servers would take the lease back).
//   - unusable: a directory, or a path that cannot be examined or read
//     (including ENOTDIR when a parent is a regular file); the caller serves
//     its client alone, with the OS reason.
//
// An owner is alive only if its pid exists (kill(pid, 0) succeeds or fails
// with EPERM; OpenProcess on Windows), its start time equals the recorded
// one and the recorded boot id is this boot's (proc.Env.Alive, proc.SameBoot).
// Another boot, a recycled pid, no such pid or an exited process not yet
// reaped mean gone.
//
// The lease's operating-system facts sit in leasefs_{unix,windows,other}.go
// (the lock, no-follow opens, unlink, replace); winfile.go holds what is
// judged of Windows' answers, in a file whose tests run on every system.
//
// # Clocks
//
// Two durations decide between waiting and taking over.
//
// The busy grace is not the registry's: the judge says busy however long a
// lease has been, and the caller (the machine) measures the grace on its
// own clock from its first busy observation. No foreign timestamp is
// involved.
//
// The bind grace is measured from the owner's started_at: now on the local
// clock minus the time the owner wrote in its lease as it wrote it. This
// is the one place the registry compares a time it did not take itself. It
// is acceptable because the owner is on the same host (its clock is ours),
// and because age is only ever a grace: it decides how long to wait for an
// owner that may still be publishing, never whether an owner is alive. The
// file's mtime is never used: anyone may touch the file, and touching it
// must not re-arm a wait. A started_at up to a second ahead (a clock
// stepped back) counts as just now; further ahead, or unreadable, it ages
// nothing, and the lease is abandoned rather than waited for without end.
// A clock stepped forward may take a binding lease over early: the take-over
// is still one critical section, and the early owner finds its lease gone
// when it publishes.
//
// # Watching
//
// [Watch] lets a leaseholder notice within a second that its lease is gone,
// replaced, empty or corrupt: it watches the parent directory with fsnotify
// (a rename-over would drop a watch on the file itself), filters by name,
// debounces, and reads the file again every second as a fallback for lost
// events. [Holds] decides, purely, whether what it read is still ours.
//
// Hard links are used where the file system has them (every local Linux
// and macOS one, NTFS).
package registry
