package proc

// ListeningProcess is a process observed by [ObserveListening]: a majordomus-mcp
// executable of the observing user that holds a listening TCP socket. It is
// the evidence that a server exists, which no registry row can give.
type ListeningProcess struct {
	PID  int
	PPID int
	// Start is its start token, as [ProcessStart] gives it.
	Start uint64
	// Executable is the file it runs (on Linux the target of
	// /proc/<pid>/exe, " (deleted)" kept when the file was replaced since
	// the process started).
	Executable string
	// Listen holds its listening addresses ("127.0.0.1:8741"), sorted.
	Listen []string
	// Args is its command line; Cwd its working directory. Together they
	// say which checkout it was started for. Either is empty where the
	// system does not tell it.
	Args []string
	Cwd  string
	// Stopped: the system says it is stopped (SIGSTOP, a debugger), so
	// that it answers nothing until continued. Never on Windows.
	Stopped bool
}

// Listening is one observation of the host's majordomus-mcp servers.
type Listening struct {
	// Processes are sorted by pid.
	Processes []ListeningProcess
	// Uninspectable are the pids of processes that run a majordomus-mcp
	// executable but whose sockets could not be read: whether they serve
	// cannot be told.
	Uninspectable []int
}

// ObserveListening returns this user's processes that run an executable
// named one of names (on Windows with or without ".exe", in any case) and
// hold a listening TCP socket. It reads only: it sends no signal. It fails
// with [ErrListingUnavailable] when the host's sockets cannot be listed at
// all, so that no observation passes for complete when it is not; a
// process whose sockets alone could not be read is in Uninspectable.
func ObserveListening(names []string) (Listening, error) { return observeListening(names) }
