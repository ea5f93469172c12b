//go:build unix

package logging

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// The log file is its user's alone, as the lease and the shared state
// are: it names the checkout, its server's URL and its peers. A new one
// is made 0600 whatever the umask; one at a path another user could have
// prepared (a link, or another user's file, in a shared directory such as
// /tmp) is not written: the log goes on, and stderr says why.
func TestANewLogFileIsPrivate(t *testing.T) {
	path := filepath.Join(testtemp.Dir(t), "majordomus.log")
	if stderr := runLoggingTo(t, path); strings.Contains(stderr, "cannot open the log file") {
		t.Fatalf("stderr %q", stderr)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Size() == 0 {
		t.Fatalf("no log in the file: %v, %v", fi, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		t.Fatalf("the log file was made %v: other users may read it", fi.Mode().Perm())
	}
}

// A link at the log file's path (another user's, in /tmp, pointing at a
// file of this user's) is not followed: the file it names is not written.
func TestALogFileThatIsALinkIsNotFollowed(t *testing.T) {
	dir := testtemp.Dir(t)
	target := filepath.Join(dir, "bashrc")
	if err := os.WriteFile(target, []byte("# mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "majordomus.log")
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	if stderr := runLoggingTo(t, path); !strings.Contains(stderr, "cannot open the log file") || !strings.Contains(stderr, "symbolic link") {
		t.Fatalf("stderr does not say why: %q", stderr)
	}
	if b, _ := os.ReadFile(target); string(b) != "# mine\n" {
		t.Fatalf("the link's target was written: %q", b)
	}
}

// Another user's file at the log file's path (made in /tmp, writable by
// all) is not appended to: it would hand that user this user's log.
// Only root can give a file to another user: anyone else checks the rule
// on a file that is root's.
func TestAnotherUsersLogFileIsNotWritten(t *testing.T) {
	if os.Geteuid() != 0 {
		fi, err := os.Stat("/")
		if err != nil {
			t.Fatal(err)
		}
		if ownFile(fi) {
			t.Fatal("/, which is root's, is taken for this user's own")
		}
		return
	}
	path := filepath.Join(testtemp.Dir(t), "majordomus.log")
	if err := os.WriteFile(path, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, 65534, 65534); err != nil { // nobody's
		t.Fatal(err)
	}
	if stderr := runLoggingTo(t, path); !strings.Contains(stderr, "cannot open the log file") || !strings.Contains(stderr, "another user's") {
		t.Fatalf("stderr does not say why: %q", stderr)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
		t.Fatalf("another user's file was written: %v, %v", fi.Size(), err)
	}
}

// runLoggingTo logs a line with --log-file path, and returns what stderr
// got.
func runLoggingTo(t *testing.T, path string) string {
	t.Helper()
	var stderr bytes.Buffer
	logger, sinks, err := New(Options{Level: "info", Format: "json", File: path}, &stderr, NewState("alone"))
	if err != nil {
		t.Fatal(err)
	}
	logger.Info("no checkout found")
	_ = logger.Sync()
	sinks.Close()
	return stderr.String()
}

// A hard link at the log file's path is a link too: another user may make
// one in a shared directory such as /tmp to a file of this user's (where
// the system lets anyone link a file they do not own: macOS, the BSDs,
// Linux without fs.protected_hardlinks), which is this user's and a
// regular file, and the log would be appended to it (a shell's startup
// file, say). It is not written.
func TestALogFileThatIsAHardLinkIsNotWritten(t *testing.T) {
	dir := testtemp.Dir(t)
	target := filepath.Join(dir, "bashrc")
	if err := os.WriteFile(target, []byte("# mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "majordomus.log")
	if err := os.Link(target, path); err != nil {
		t.Fatal(err)
	}
	if stderr := runLoggingTo(t, path); !strings.Contains(stderr, "cannot open the log file") || !strings.Contains(stderr, "link") {
		t.Fatalf("stderr does not say why: %q", stderr)
	}
	if b, _ := os.ReadFile(target); string(b) != "# mine\n" {
		t.Fatalf("the file the link names was written: %q", b)
	}
}
