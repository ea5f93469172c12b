//go:build unix

package runtimes

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testchild"
	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// A registry under a link that leads nowhere, or that is one (into no
// directory, or through another link), can hold no row: reading it is an
// error (the inventory is incomplete), never an empty inventory.
func TestARegistryUnderADanglingLinkIsUnusable(t *testing.T) {
	dir := testtemp.Dir(t)
	for link, target := range map[string]string{
		"state":       filepath.Join(dir, "gone"),
		"registry.db": filepath.Join(dir, "gone", "registry.db"), // into no directory
		"chained.db":  filepath.Join(dir, "hop.db"),
		"hop.db":      filepath.Join(dir, "gone", "registry.db"),
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, path := range []string{filepath.Join(dir, "state", "majordomus-mcp", "registry.db"), filepath.Join(dir, "registry.db"), filepath.Join(dir, "chained.db")} {
		if rows, err := Read(context.Background(), path); err == nil {
			t.Errorf("%s: Read answered %d rows and no error", path, len(rows))
		}
	}
	if _, err := Open(context.Background(), filepath.Join(dir, "state", "majordomus-mcp", "registry.db")); err == nil {
		t.Error("Open succeeded under the link")
	}
}

// A registry that is a link to a file not made yet is read as what it
// is, a link that leads nowhere, until a server makes the file through it:
// what cannot be read is never read as an empty inventory.
func TestARegistryThatIsALinkToAFileNotYetMadeIsReadOnceMade(t *testing.T) {
	dir := testtemp.Dir(t)
	path := filepath.Join(dir, "registry.db")
	if err := os.Symlink(filepath.Join(dir, "elsewhere.db"), path); err != nil {
		t.Fatal(err)
	}
	if rows, err := Read(context.Background(), path); err == nil || !strings.Contains(err.Error(), "leads nowhere") {
		t.Fatalf("before any server: %d rows, %v", len(rows), err)
	}
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open through the link: %v", err)
	}
	db.Close()
	if _, err := Read(context.Background(), path); err != nil {
		t.Fatalf("once made: %v", err)
	}
}

// A registry is read where its reader may not write its directory (a
// read-only home in a sandbox): once a writer closed, the files a reader
// of a WAL database reads through are still there, and where they are
// not, the file holds all. As root, whom no mode stops, the reader is
// nobody.
func TestARegistryIsReadWhereItsDirectoryCannotBeWritten(t *testing.T) {
	for _, companions := range []bool{true, false} {
		t.Run(fmt.Sprintf("with -wal and -shm %t", companions), func(t *testing.T) {
			readWhereItsDirectoryCannotBeWritten(t, companions)
		})
	}
}

// readWhereItsDirectoryCannotBeWritten is that test, the -wal and -shm
// there or removed, as an ordinary SQLite client that closed the registry
// last does. (A reader then failed: "attempt to write a readonly
// database".)
func readWhereItsDirectoryCannotBeWritten(t *testing.T, companions bool) {
	dir := testtemp.Dir(t)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	regDir := filepath.Join(dir, "registry")
	path := filepath.Join(regDir, "runtimes.db")
	register(t, path, allAlive, testRow("rt-1", "default", 100))
	if !companions {
		for _, p := range []string{path + "-wal", path + "-shm"} {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := testchild.StartCmd(t, readerOutside(t, dir, regDir), "read", "REGISTRY="+path).Line(t); got != "rows: 1" {
		t.Fatalf("the reader of a registry it cannot write beside: %s", got)
	}
}

// readerOutside is a reader (a copy of the test binary in dir) of the
// registry in regDir, which it owns but may no longer write in: regDir
// is made read-only (as a read-only home in a sandbox), and a root test
// gives regDir and what is in it to an unprivileged user, who reads.
func readerOutside(t *testing.T, dir, regDir string) *exec.Cmd {
	t.Helper()
	reader := exec.Command(testchild.Copy(t, filepath.Join(dir, "reader"), 0o755), "-test.run=^$")
	if os.Geteuid() == 0 {
		entries, _ := os.ReadDir(regDir)
		for _, name := range append([]string{regDir}, namesIn(regDir, entries)...) {
			if err := os.Chown(name, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}
		reader.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	if err := os.Chmod(regDir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(regDir, 0o755) })
	return reader
}

// A registry whose writer was killed in the middle of a write, read where
// the reader may not write the registry's directory (a read-only home in
// a sandbox), cannot be rolled back, nor read: the reader says why, never
// that no row is there. (It said "attempt to write a readonly database".)
func TestARegistryWhoseWriterWasKilledMidWriteSaysWhyItCannotBeRead(t *testing.T) {
	dir := testtemp.Dir(t)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	regDir := filepath.Join(dir, "registry")
	path := filepath.Join(regDir, "runtimes.db")
	register(t, path, allAlive, testRow("rt-1", "default", 100))
	killWriteInJournal(t, path)
	got := testchild.StartCmd(t, readerOutside(t, dir, regDir), "read", "REGISTRY="+path).Line(t)
	if !strings.Contains(got, "runtimes.db-journal, which only a process that may write the registry and its directory can roll back") {
		t.Fatalf("the reader of a registry whose write was cut off, which it cannot roll back: %s", got)
	}
}

// namesIn is the paths of entries, in dir.
func namesIn(dir string, entries []os.DirEntry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, filepath.Join(dir, e.Name()))
	}
	return out
}

// A registry that something else made readable by others (a shell, a
// backup restored) is made private again by the next write, and so are
// the -wal and -shm SQLite gives its mode. (Every row, with its URL and
// repository, was readable by every user.)
func TestARegistryReadableByOthersIsMadePrivate(t *testing.T) {
	path := filepath.Join(testtemp.Dir(t), "registry.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil { // whatever the umask
		t.Fatal(err)
	}
	register(t, path, allAlive, testRow("a", "default", 10))
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if fi, err := os.Stat(p); err != nil {
			t.Error(err)
		} else if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is %v, want readable by its owner only", filepath.Base(p), fi.Mode())
		}
	}
}

// A registry in another user's tree is neither made nor written, nor the
// directories to it: root with another user's HOME would lock that user
// out of them. Such a tree is one made another user's here when the test
// runs as root, else the root directory, root's.
func TestARegistryInAnotherUsersTreeIsNotMade(t *testing.T) {
	theirs := "/"
	if os.Geteuid() == 0 {
		theirs = testtemp.Dir(t)
		if err := os.Chmod(theirs, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(theirs, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(theirs, "majordomus-test-"+strconv.Itoa(os.Getpid()), "state", "registry.db")
	if _, err := Open(context.Background(), path); err == nil || !strings.Contains(err.Error(), "belongs to another user") {
		t.Fatalf("opened in another user's tree: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(filepath.Dir(path))); !os.IsNotExist(err) {
		t.Fatalf("a directory was made there: %v", err)
	}
	shared := testtemp.Dir(t) // a directory for anyone to write in, as /tmp, is not another user's tree
	if err := os.Chmod(shared, 0o1777); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(shared, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	db, err := Open(context.Background(), filepath.Join(shared, "registry.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
}

// A registry that is a link is read as the file it leads to: SQLite keeps
// that file's -wal and -shm beside it, not beside the link. A WAL holding
// rows not yet in the file (its writer killed -9), without its -shm, where
// the reader cannot make one, cannot be read: read through the link, it is
// the same error, never the file alone read as if it held every row.
func TestARegistryThatIsALinkIsReadWithItsWAL(t *testing.T) {
	dir := testtemp.Dir(t)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(dir, "live", "registry.db")
	register(t, live, allAlive, testRow("rt-1", "default", 100)) // in the file, checkpointed as its writer closed
	holder := openTest(t, live)                                  // open, as another server's: the next writer's close does not checkpoint
	defer holder.Close()
	if _, err := holder.Exec("SELECT count(*) FROM server_runtimes"); err != nil {
		t.Fatal(err)
	}
	register(t, live, allAlive, testRow("rt-2", "review", 101)) // in the WAL only
	regDir := filepath.Join(dir, "registry")
	if err := os.Mkdir(regDir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(regDir, "runtimes.db")
	for _, suffix := range []string{"", "-wal"} { // as its writer left them, without the -shm
		b := fileBytes(t, live+suffix)
		if suffix == "-wal" && len(b) == 0 {
			t.Fatal("the rows were checkpointed into the file: nothing to read in the WAL")
		}
		if err := os.WriteFile(path+suffix, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "registry.db")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	exe := testchild.Copy(t, filepath.Join(dir, "reader"), 0o755)
	read := func(p string) string {
		reader := exec.Command(exe, "-test.run=^$")
		if os.Geteuid() == 0 {
			reader.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		}
		return testchild.StartCmd(t, reader, "read", "REGISTRY="+p).Line(t)
	}
	if os.Geteuid() == 0 {
		for _, name := range []string{regDir, path, path + "-wal"} {
			if err := os.Chown(name, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Chmod(regDir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(regDir, 0o755) })
	direct, linked := read(path), read(link)
	if !strings.HasPrefix(direct, "error:") {
		t.Fatalf("read by its own path: %s, want an error (its WAL cannot be read here)", direct)
	}
	if !strings.HasPrefix(linked, "error:") {
		t.Fatalf("read through a link: %s; by its own path: %s", linked, direct)
	}
}

// A registry file another user owns is neither read nor written, even one
// all may write (made before this user's first server in a directory
// anyone writes in, as /tmp): its owner reads every row written there and
// rewrites any, and so decides what an inventory says. Making a file
// another user's takes root: anyone else checks the rule on a file that
// is root's.
func TestARegistryFileOfAnotherUserIsNeitherReadNorWritten(t *testing.T) {
	if !asRoot(t) {
		return
	}
	shared := testtemp.Dir(t)
	if err := os.Chmod(shared, 0o1777); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(shared, "registry.db")
	register(t, path, allAlive, testRow("rt-1", "default", 100))
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Chown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	if rows, err := Read(context.Background(), path); err == nil || !strings.Contains(err.Error(), "belongs to another user") {
		t.Errorf("read another user's registry: %d rows, %v", len(rows), err)
	}
	if db, err := Open(context.Background(), path); err == nil || !strings.Contains(err.Error(), "belongs to another user") {
		if err == nil {
			db.Close()
		}
		t.Errorf("opened another user's registry to write: %v", err)
	}
}

// A registry's -wal and -shm hold what is written to it until a
// checkpoint, and what a reader reads first: another user's, made beside
// it before this user's first server in a directory anyone writes in (as
// /tmp), would hand that user every row written and let them write any,
// as another user's registry file would. The registry is then neither
// read nor written. Making a file another user's takes root: anyone else
// checks the rule on a file that is root's.
func TestARegistryWhoseWALIsAnotherUsersIsNeitherReadNorWritten(t *testing.T) {
	linked := filepath.Join(testtemp.Dir(t), "registry.db") // a -wal that is a link: anyone can make one
	if err := os.Symlink(filepath.Join(testtemp.Dir(t), "theirs"), linked+"-wal"); err != nil {
		t.Fatal(err)
	}
	if db, err := Open(context.Background(), linked); err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
		if err == nil {
			db.Close()
		}
		t.Errorf("opened a registry whose -wal is a link, to write: %v", err)
	}
	if !asRoot(t) {
		return
	}
	shared := testtemp.Dir(t)
	if err := os.Chmod(shared, 0o1777); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(shared, "registry.db")
	for _, p := range []string{path + "-wal", path + "-shm"} { // planted before the first server
		if err := os.WriteFile(p, nil, 0o666); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	if db, err := Open(context.Background(), path); err == nil || !strings.Contains(err.Error(), "belongs to another user") {
		if err == nil {
			db.Close()
		}
		t.Errorf("opened a registry whose -wal is another user's, to write: %v", err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		os.Remove(p)
	}

	register(t, path, allAlive, testRow("rt-1", "default", 100))
	if err := os.Chown(path+"-wal", 65534, 65534); err != nil { // the -wal another user's
		t.Fatal(err)
	}
	if rows, err := Read(context.Background(), path); err == nil || !strings.Contains(err.Error(), "belongs to another user") {
		t.Errorf("read a registry whose -wal is another user's: %d rows, %v", len(rows), err)
	}
}

// asRoot reports whether the test runs as root, which alone can give a
// file to another user; anyone else checks the ownership rule on "/",
// which is root's.
func asRoot(t *testing.T) bool {
	t.Helper()
	if os.Geteuid() == 0 {
		return true
	}
	fi, err := os.Stat("/")
	if err != nil {
		t.Fatal(err)
	}
	if anothersFile("/", fi) == nil {
		t.Fatal("/, which is root's, is taken for this user's own")
	}
	return false
}

// SQLite opens a registry's -journal, where it finds one, to see whether
// it is a hot journal to roll back, before it reads a row: a named pipe
// there (made beforehand by anyone who may write in the registry's
// directory, as /tmp) held every reader in its open — a fleet inventory,
// a server's registration and so its exit, SIGTERM or not — until
// someone wrote to the pipe; another user's journal, hot, is theirs to
// have rolled back into the registry. Neither is read or written beside.
func TestARegistryWhoseJournalIsAPipeOrAnotherUsersIsRefused(t *testing.T) {
	dir := testtemp.Dir(t)
	path := filepath.Join(dir, "registry.db")
	register(t, path, allAlive, testRow("rt-1", "default", 100))
	if err := syscall.Mkfifo(path+"-journal", 0o600); err != nil {
		t.Fatal(err)
	}
	if got := testchild.Start(t, "read", "REGISTRY="+path).Line(t); !strings.Contains(got, "registry.db-journal is a special file") {
		t.Fatalf("the reader of a registry whose -journal is a pipe: %s", got)
	}
	if db, err := Open(context.Background(), path); err == nil || !strings.Contains(err.Error(), "is a special file") {
		if err == nil {
			db.Close()
		}
		t.Errorf("opened a registry whose -journal is a pipe, to write: %v", err)
	}
	if !asRoot(t) {
		return
	}
	if err := os.Remove(path + "-journal"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+"-journal", nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path+"-journal", 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if rows, err := Read(context.Background(), path); err == nil || !strings.Contains(err.Error(), "belongs to another user") {
		t.Errorf("read a registry whose -journal is another user's: %d rows, %v", len(rows), err)
	}
}
