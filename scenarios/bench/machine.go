package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
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
	m := Machine{Cores: runtime.NumCPU(), CPU: cpuModel(), Go: runtime.Version(),
		OS: runtime.GOOS + "/" + runtime.GOARCH, LoadBefore: loadavg()}
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

// cpuModel is the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if name, value, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(name) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return "unknown"
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
	b, err := os.ReadFile(filepath.Join(prefix, "node_modules", name, "package.json"))
	if err != nil {
		return "unknown"
	}
	var pkg struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(b, &pkg) != nil {
		return "unknown"
	}
	return pkg.Version
}
