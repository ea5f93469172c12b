package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Machine is what the figures were measured on.
type Machine struct {
	Cores      int    `json:"cores"`
	CPU        string `json:"cpu"`
	MemoryKB   int64  `json:"memory_kb"`
	Go         string `json:"go"`
	OS         string `json:"os"`
	Kernel     string `json:"kernel"`
	Node       string `json:"node,omitempty"`
	LoadBefore string `json:"loadavg_before"`
	LoadAfter  string `json:"loadavg_after"`
}

func machine() Machine {
	m := Machine{Cores: runtime.NumCPU(), CPU: "unknown", Go: runtime.Version(),
		OS: runtime.GOOS + "/" + runtime.GOARCH, LoadBefore: loadavg()}
	if model, err := procField("/proc/cpuinfo", "model name"); err == nil { // the first one
		m.CPU = model
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if kb, err := procFile("/proc/meminfo", "MemTotal"); err == nil {
		m.MemoryKB = int64(kb)
	}
	if out, err := exec.Command("node", "--version").Output(); err == nil {
		m.Node = strings.TrimSpace(string(out))
	}
	return m
}

// loadavg is /proc/loadavg's first three fields: others may share the machine.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

// packageVersion is the version in an installed npm package's package.json.
func packageVersion(prefix, name string) string {
	var pkg struct {
		Version string `json:"version"`
	}
	b, err := os.ReadFile(filepath.Join(prefix, "node_modules", name, "package.json"))
	if err != nil || json.Unmarshal(b, &pkg) != nil {
		return "unknown"
	}
	return pkg.Version
}

// procField is the first value of field in a /proc file of "name: value"
// lines.
func procField(path, field string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if name, value, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(name) == field {
			return strings.TrimSpace(value), nil
		}
	}
	return "", fmt.Errorf("%s has no %s", path, field)
}

// procFile is the number of a /proc field of "name: value unit" lines.
func procFile(path, field string) (float64, error) {
	value, err := procField(path, field)
	if err != nil {
		return 0, err
	}
	number, _, _ := strings.Cut(value, " ")
	return strconv.ParseFloat(number, 64)
}

// cpuTime is a process's user+system CPU time so far (/proc/<pid>/stat).
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	_, rest, ok := strings.Cut(string(b), ") ") // the command may hold spaces
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	const ticks = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticks, nil
}

// timeWaits counts the TCP sockets in TIME_WAIT whose local port is port
// (/proc/net/tcp and tcp6): the connections a server closed first.
func timeWaits(port string) int {
	n := 0
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) < 4 || f[3] != "06" {
				continue
			}
			if _, hexPort, ok := strings.Cut(f[1], ":"); ok {
				if p, err := strconv.ParseUint(hexPort, 16, 16); err == nil && strconv.FormatUint(p, 10) == port {
					n++
				}
			}
		}
	}
	return n
}

// memOf records the peak resident set (VmHWM) of a running process into
// rss and its proportional set (Pss of /proc/<pid>/smaps_rollup: shared
// pages divided among their sharers) into pss unless nil, in MiB.
func memOf(pid int, rss, pss *series) error {
	kb, err := procFile(fmt.Sprintf("/proc/%d/status", pid), "VmHWM")
	if err != nil {
		return err
	}
	rss.add(kb / 1024)
	if kb, err := procFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid), "Pss"); err == nil && pss != nil {
		pss.add(kb / 1024)
	}
	return nil
}

// sampleProcess records pid's resident set (VmRSS) and open descriptors.
func sampleProcess(pid int, rss, fds *series) error {
	kb, err := procFile(fmt.Sprintf("/proc/%d/status", pid), "VmRSS")
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return err
	}
	rss.add(kb / 1024)
	fds.add(float64(len(entries)))
	return nil
}
