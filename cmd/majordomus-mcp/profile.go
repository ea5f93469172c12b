package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
)

// ProfileEnv names a directory where the process writes a CPU profile of
// its whole life (cpu-<pid>.pprof) for `go tool pprof`: how the benchmarks'
// misses are explained. Unset, nothing is profiled.
const ProfileEnv = "MAJORDOMUS_MCP_CPUPROFILE"

// startProfile starts the CPU profile ProfileEnv asks for and returns what
// stops it. A profile that cannot be written is reported on stderr and
// never stops the process from serving.
func startProfile(stderr io.Writer) (stop func()) {
	dir := os.Getenv(ProfileEnv)
	if dir == "" {
		return func() {}
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("cpu-%d.pprof", os.Getpid())))
	if err == nil {
		err = pprof.StartCPUProfile(f)
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "majordomus-mcp: no CPU profile:", err)
		return func() {}
	}
	return sync.OnceFunc(func() {
		pprof.StopCPUProfile()
		f.Close()
	})
}
