package registry

// What Windows's file calls say, and the bounded retry around a refusal
// that passes, kept apart from the calls themselves so that their tests run
// on every operating system (leasefs_windows.go calls Windows).

import "time"

// Windows error codes that a rename may fail with for a moment: another
// process (a reader of the lease, a virus scanner, an indexer) has the file
// open without sharing deletion.
const (
	winErrorFileNotFound     = 2
	winErrorAccessDenied     = 5
	winErrorSharingViolation = 32
	winErrorLockViolation    = 33
)

// windowsEphemeral reports whether code is a refusal of a rename that
// passes: the file is busy, or (a scanner holding it) not found for a
// moment.
func windowsEphemeral(code uintptr) bool {
	return code == winErrorFileNotFound || windowsBusy(code)
}

// windowsBusy reports whether code says that another process has the file
// open without sharing it (or it is being replaced): an open of the lease
// fails so for a moment while a rename replaces it.
func windowsBusy(code uintptr) bool {
	switch code {
	case winErrorAccessDenied, winErrorSharingViolation, winErrorLockViolation:
		return true
	}
	return false
}

// renameAttempts bounds the retries of a replacing rename: with the pauses
// of retryEphemeral, about a second and a half in all.
const renameAttempts = 12

// retryEphemeral runs op up to attempts times while it fails with an error
// ephemeral says passes, pausing 1, 2, 4 … ms (at most 250 ms) between
// tries. It returns op's last error.
func retryEphemeral(op func() error, ephemeral func(error) bool, attempts int, sleep func(time.Duration)) error {
	pause := time.Millisecond
	var err error
	for i := range attempts {
		if err = op(); err == nil || !ephemeral(err) {
			return err
		}
		if i < attempts-1 {
			sleep(pause)
			pause = min(2*pause, 250*time.Millisecond)
		}
	}
	return err
}
