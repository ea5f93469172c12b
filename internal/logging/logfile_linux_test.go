package logging

import (
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// A log file another process holds a lease on (as Samba and NFS servers
// do) is opened once the lease is given up, as any open of it is: the
// open that does not wait for a FIFO does not give up on it.
func TestALeasedLogFileIsOpened(t *testing.T) {
	broken := make(chan os.Signal, 1)
	signal.Notify(broken, syscall.SIGIO) // the kernel asks the holder to give the lease up
	defer signal.Stop(broken)
	path, holder := leasedFile(t)
	fd, released, opened := holder.Fd(), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(released)
		select {
		case <-broken:
			_, _ = unix.FcntlInt(fd, unix.F_SETLEASE, unix.F_UNLCK)
		case <-opened:
		}
	}()
	defer func() { close(opened); <-released }() // before the holder is closed
	f, err := openLogFile(path)
	if err != nil {
		t.Fatalf("a leased log file: %v", err)
	}
	f.Close()
}

// A log file whose lease its holder never gives up (an unanswering Samba
// or NFS client) holds the start back no longer than the open's own
// bound: it is refused, as any log file that cannot be opened is.
func TestALeasedLogFileNeverGivenUpIsRefused(t *testing.T) {
	signal.Ignore(syscall.SIGIO) // asked to give the lease up, the holder does not
	defer signal.Reset(syscall.SIGIO)
	path, _ := leasedFile(t)
	done := make(chan error, 1)
	go func() {
		f, err := openLogFile(path)
		if err == nil {
			f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a file leased to another was opened before its lease was given up")
		}
	case <-time.After(10 * time.Second): // the kernel would break the lease only after 45 s
		t.Fatal("the open waits for a lease its holder never gives up")
	}
}

// leasedFile is a log file this process holds a read lease on, as another
// process's server would (the kernel tells the holder by SIGIO), through
// holder, closed when the test ends.
func leasedFile(t *testing.T) (path string, holder *os.File) {
	t.Helper()
	path = filepath.Join(testtemp.Dir(t), "server.log")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	holder, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Close() })
	if _, err := unix.FcntlInt(holder.Fd(), unix.F_SETLEASE, unix.F_RDLCK); err != nil {
		t.Fatal(err)
	}
	return path, holder
}
