package proc

import (
	"os"
	"sync"
)

// Namespaces returns the pid and network namespaces this process runs in,
// as "pid:[…] net:[…]" (the links in /proc/self/ns), read once; "" when
// they cannot be read. Two processes of one kernel in other namespaces (a
// container's and the host's) can neither see each other's pids nor reach
// each other's loopback.
func Namespaces() string { return namespaces() }

// PIDNamespace returns the pid namespace this process runs in, as
// "pid:[…]", read once; "" when it cannot be read. A pid names the same
// process only for processes of one pid namespace.
func PIDNamespace() string { return pidNamespace() }

var pidNamespace = sync.OnceValue(func() string {
	pid, _ := os.Readlink("/proc/self/ns/pid")
	return pid
})

var namespaces = sync.OnceValue(func() string {
	pid := pidNamespace()
	net, err := os.Readlink("/proc/self/ns/net")
	if pid == "" || err != nil {
		return ""
	}
	return pid + " " + net
})
