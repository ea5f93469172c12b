package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/majordomus-mcp/majordomus-mcp/example"
	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// Ctrl-Break (as Ctrl-C, or the console closing) ends a leaseholder as a
// signal does on Unix: it removes its lease, then exits with the status a
// console control event gives.
func TestCtrlBreakRemovesTheLease(t *testing.T) {
	// Control events go to the processes of one console: the test needs one
	// of its own when it was started without (as under CI), and the
	// process it starts shares it.
	if r, _, err := windows.NewLazySystemDLL("kernel32.dll").NewProc("AllocConsole").Call(); r == 0 && err != windows.ERROR_ACCESS_DENIED {
		t.Logf("AllocConsole: %v", err)
	}
	dir := filepath.Join(testtemp.Dir(t), "checkout")
	if err := example.WriteCheckout(dir); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), mainArgsEnv+"="+strings.Join([]string{"--repo", dir, "--http-port", "0"}, "\x1f"))
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
	stdin, err := cmd.StdinPipe() // held open: the client stays
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		said := false
		for sc.Scan() {
			if !said && strings.Contains(sc.Text(), "shared server listening") {
				said = true
				close(listening)
			}
		}
	}()
	select {
	case <-listening:
	case <-time.After(30 * time.Second):
		t.Fatal("the process never served")
	}
	lease := filepath.Join(dir, ".ai", "local", "state", "mcp", "server.json")
	if _, err := os.Stat(lease); err != nil {
		t.Fatalf("no lease while serving: %v", err)
	}
	if err := windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(cmd.Process.Pid)); err != nil {
		t.Fatalf("GenerateConsoleCtrlEvent: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the process did not end after Ctrl-Break")
	}
	if code := cmd.ProcessState.ExitCode(); uint32(code) != statusControlCExit {
		t.Errorf("exit status %#x, want %#x", uint32(code), uint32(statusControlCExit))
	}
	if _, err := os.Lstat(lease); !os.IsNotExist(err) {
		t.Errorf("the lease is still there: %v", err)
	}
}
