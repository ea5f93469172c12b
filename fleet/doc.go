// Package fleet decides the fleet inventory of a checkout (docs/fleet.md): is
// exactly one server running for each configured profile, and do they all
// belong to one client cohort? [Classify] is a pure function of a
// [Snapshot] — the roster, the registry rows, the observed processes, what
// signal 0 said about the rows' pids, the time and the answering
// namespace — so two servers asked about one snapshot answer the
// same, and every verdict is table-tested without a process or a file.
// Gathering the snapshot is the caller's (internal/node wires
// registry/runtimes' reading and observation into it); this package
// imports nothing that touches the host.
//
// # Evidence
//
// A row is what a server said about itself when it registered: identity,
// never existence. An observed process (a majordomus-mcp executable of this
// user holding a listening TCP socket) is existence, never identity. A
// member runs only when the two agree: one pid, one process start time,
// this boot, and a process that started before the row was registered, so
// that configuration alone never counts and a recycled pid never passes for
// a server that exited. Nothing the inventory's caller says is evidence.
//
// # Scope
//
// The registry is per user and holds the rows of every checkout. A row is
// this checkout's when it names its repository id or its root (naming one
// and not the other is a binding mismatch); where the row and the snapshot
// both know the root directory's id, the id alone decides, since a path
// does not follow a checkout that moved: a server of this directory
// registered under another path is this checkout's, bound wrong, and one
// of another directory that names this path is another checkout's (ids of
// two devices compare as unknown). A root is named by its path, or by a
// path that names its directory now ([Snapshot].Dirs): one directory
// reached by two paths that are not links (a bind mount) is one checkout,
// bound right from either. An observed process that no row
// accounts for is unregistered unless it was provably started for another
// checkout: the checkout its start directory (its --repo, else its working
// directory) belongs to is another one, or that directory is not under this
// checkout's root. A process whose start cannot be told counts as this
// checkout's: unknown is never healthy.
//
// # Decisions the contract left open
//
//   - A lease-lost server is draining, not running: it is neither a
//     duplicate nor healthy, and it closes the gate. Its own record decides
//     (a server writes lease-lost into its row the moment it notices), not
//     the lease file: a server whose row still says leaseholder still takes
//     new clients, so it counts as running, and two of them for one profile
//     are a duplicate. A process that lost its lease and won it again has
//     two rows: the newer is its running server, the older, lease-lost,
//     its draining one.
//   - A profile's role is checked against the roster only when the roster
//     gives roles (the manifest does; --roster gives names only).
//   - A cohort taken from the launching parent holds only while that parent
//     is still the process's parent (the kernel reparents an orphan, and a
//     pid cannot be recycled while it is someone's parent); otherwise it is
//     unknown. single_cohort and mixed_cohort are judged over every live
//     member, draining ones included, and are null when an unknown cohort
//     could change the answer.
//   - A stale row whose process is provably gone (dead, recycled, another
//     boot, or a newer row of the same process) is reported and does not
//     close the gate; one whose process still runs but is not seen serving
//     (unobserved, unverifiable) makes the inventory incomplete.
//   - Reasons come in a fixed order: what makes the inventory incomplete
//     first (roster, registry, listing, unregistered, unobserved, cohort,
//     revision), then what breaks the invariant (missing,
//     duplicate, unexpected, binding, role, draining, mixed cohort, mixed
//     revision). blocked_reason is the first code.
package fleet
