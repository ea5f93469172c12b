package registry

import "errors"

// Sentinel errors. Callers branch on them with [errors.Is]; the registry adds
// the lease path and the OS reason once, with %w, where it returns them.
var (
	// ErrLeaseExists is returned by [LeaseFile.Acquire] when a lease file is
	// already in place: someone else holds it, or left it behind. Observe and
	// judge it.
	ErrLeaseExists = errors.New("registry: lease exists")

	// ErrLeaseNotOurs is returned by [LeaseFile.Publish] and
	// [LeaseFile.Release] when the file on disk no longer carries this
	// handle's instance (it was taken over, removed or replaced), or when the
	// handle never acquired a lease.
	ErrLeaseNotOurs = errors.New("registry: lease is not ours")

	// ErrLeaseHeld is returned by [LeaseFile.Acquire] when the handle already
	// holds a lease; release it first.
	ErrLeaseHeld = errors.New("registry: this handle already holds the lease")

	// ErrLockTimeout is returned when the sidecar lock stayed held by another
	// process for longer than [LeaseFile.LockWait].
	ErrLockTimeout = errors.New("registry: lease lock is held by another process")

	// ErrNotTakeable is returned by [LeaseFile.TakeOver] when the observation
	// it is given was not judged for a take-over.
	ErrNotTakeable = errors.New("registry: lease was not judged for a take-over")

	// ErrLeaseEmpty is returned by [Decode] for an empty or whitespace-only
	// file.
	ErrLeaseEmpty = errors.New("registry: empty lease")

	// ErrLeaseCorrupt is returned by [Decode] for anything that is not a
	// majordomus-mcp-lease/v1 document.
	ErrLeaseCorrupt = errors.New("registry: corrupt lease")

	// ErrBadProfile is returned by [ValidateProfile] for a profile name that
	// cannot be part of a file name.
	ErrBadProfile = errors.New("registry: invalid profile name")

	// ErrNotProven is returned by [AskProven] when the server did not prove
	// that it holds the lease's secret: it was sent nothing.
	ErrNotProven = errors.New("registry: the server did not prove it holds the lease's secret")
)
