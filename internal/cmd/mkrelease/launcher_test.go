//go:build npm && unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// A binary that dies of a signal ends its launcher by the same signal (a
// host reads how its server ended), or, for the two node keeps for itself
// (SIGPIPE, which it ignores, and SIGUSR1, which starts its inspector),
// with the code a shell reports for that death, 128 + its number. (Both
// ended the launcher 0.)
func TestTheLauncherEndsAsItsBinaryDied(t *testing.T) {
	host, err := parseTarget(runtime.GOOS + "/" + runtime.GOARCH)
	if err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(t.TempDir(), "node_modules")
	js := filepath.Join(mod, "majordomus-mcp", "bin", "majordomus-mcp.js")
	stub := filepath.Join(mod, npmScope, npmDir(host), "bin", host.binaryName())
	for path, data := range map[string]string{js: string(launcher), stub: "#!/bin/sh\nkill -$DIE $$\n"} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, 0o755); err != nil { // whatever the umask
			t.Fatal(err)
		}
	}
	for name, sig := range map[string]syscall.Signal{"PIPE": syscall.SIGPIPE, "USR1": syscall.SIGUSR1, "TERM": syscall.SIGTERM, "INT": syscall.SIGINT, "HUP": syscall.SIGHUP} {
		cmd := exec.Command("node", js)
		cmd.Env = append(os.Environ(), "DIE="+name)
		_ = cmd.Run()
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		kept := sig == syscall.SIGPIPE || sig == syscall.SIGUSR1 // by node
		if kept && ws.ExitStatus() != 128+int(sig) || !kept && !(ws.Signaled() && ws.Signal() == sig) {
			t.Errorf("the binary died of SIG%s; the launcher ended %v", name, cmd.ProcessState)
		}
	}
}
