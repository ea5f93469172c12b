package proc

// What macOS's kinfo_proc says, judged without touching the system so that
// the logic's tests run on every operating system (process_darwin.go and
// listening_darwin.go read it).

// darwinZombie is SZOMB, kinfo_proc's p_stat of a process that has exited
// and waits to be reaped (sys/proc.h: SIDL 1, SRUN 2, SSLEEP 3, SSTOP 4,
// SZOMB 5); darwinExiting is P_WEXIT, the p_flag of a process working on
// exiting, which sysctl lists before its descriptors are closed and it is
// a zombie (as on Linux, its server may already refuse connections).
const (
	darwinStopped = 4
	darwinZombie  = 5
	darwinExiting = 0x2000
)

// kinfoStart turns kinfo_proc's p_stat, p_flag and p_starttime into a
// start token: microseconds since the Unix epoch, with [ErrProcessEnded]
// for a process that is exiting or a zombie.
func kinfoStart(stat int8, flag int32, sec, usec int64) (uint64, error) {
	start := uint64(sec)*1_000_000 + uint64(usec)
	if stat == darwinZombie || flag&darwinExiting != 0 {
		return start, ErrProcessEnded
	}
	return start, nil
}
