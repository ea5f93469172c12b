package proc

// What macOS's kinfo_proc says, judged without touching the system so that
// the logic's tests run on every operating system (process_darwin.go and
// listening_darwin.go read it).

// darwinZombie is SZOMB, kinfo_proc's p_stat of a process that has exited
// and waits to be reaped (sys/proc.h: SIDL 1, SRUN 2, SSLEEP 3, SSTOP 4,
// SZOMB 5).
const darwinZombie = 5

// kinfoStart turns kinfo_proc's p_stat and p_starttime into a start token:
// microseconds since the Unix epoch, or [ErrProcessEnded] for a zombie.
func kinfoStart(stat int8, sec, usec int64) (uint64, error) {
	if stat == darwinZombie {
		return 0, ErrProcessEnded
	}
	return uint64(sec)*1_000_000 + uint64(usec), nil
}
