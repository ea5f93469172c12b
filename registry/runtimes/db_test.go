package runtimes

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/majordomus-mcp/majordomus-mcp/fleet"
	"github.com/majordomus-mcp/majordomus-mcp/internal/testchild"
	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
	"github.com/majordomus-mcp/majordomus-mcp/registry/proc"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func testRow(id, profile string, pid int) fleet.Row {
	return fleet.Row{
		RuntimeID: id, Profile: profile, Role: "shared", State: StateLeaseholder,
		RepositoryRoot: "/checkout", RepositoryID: "0123456789abcdef0123456789abcdef",
		Cohort: "env:c1", CohortSource: CohortFromEnvironment,
		StartupRevision: "0.1.0+build.abc", ModuleVersion: "(devel)",
		Transport: "streamable-http", URL: "http://127.0.0.1:8741",
		PID: pid, ProcessStart: 4242, BootID: "boot-1", Executable: "/bin/majordomus-mcp",
		RegisteredAt: time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC), RegisteredTicks: 5000,
	}
}

func register(t *testing.T, path string, env proc.Env, rows ...fleet.Row) {
	t.Helper()
	ctx := context.Background()
	rt, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	rt.Env = env
	for _, r := range rows {
		if err := rt.Register(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
}

func readRows(t *testing.T, path string) []fleet.Row {
	t.Helper()
	rows, err := Read(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// allAlive is a host on which every pid runs as recorded, in boot-1.
var allAlive = proc.Env{
	Signal0:      func(int) error { return nil },
	ProcessStart: func(int) (uint64, error) { return 4242, nil },
	BootID:       func() (string, error) { return "boot-1", nil },
}

func TestRegisterReadSetStateRemove(t *testing.T) {
	path := filepath.Join(testtemp.Dir(t), "state", "registry.db")
	a, b := testRow("a", "default", 10), testRow("b", "review", 11)
	register(t, path, allAlive, a, b)

	if fi, err := os.Stat(path); err != nil || !testtemp.PrivateMode(fi.Mode().Perm(), 0o600) {
		t.Fatalf("registry file: %v %v, want mode 0600", fi, err)
	}
	if fi, err := os.Stat(filepath.Dir(path)); err != nil || !testtemp.PrivateMode(fi.Mode().Perm(), 0o700) {
		t.Fatalf("registry directory: %v %v, want mode 0700", fi, err)
	}
	if got := readRows(t, path); !reflect.DeepEqual(got, []fleet.Row{a, b}) {
		t.Fatalf("rows:\n got %+v\nwant %+v", got, []fleet.Row{a, b})
	}

	ctx := context.Background()
	rt, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if err := rt.SetState(ctx, "a", StateLeaseLost, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := rt.SetState(ctx, "nobody", StateLeaseLost, time.Now()); err != nil {
		t.Fatalf("SetState of a missing row: %v", err)
	}
	if removed, err := rt.Remove(ctx, "b"); err != nil || !removed {
		t.Fatalf("Remove of b: %v, %v", removed, err)
	}
	if removed, err := rt.Remove(ctx, "b"); err != nil || removed {
		t.Fatalf("Remove of b again: %v, %v; want nothing removed", removed, err)
	}
	got := readRows(t, path)
	if len(got) != 1 || got[0].RuntimeID != "a" || got[0].State != StateLeaseLost {
		t.Fatalf("after SetState and Remove: %+v", got)
	}
}

func TestRegisterPrunesOnlyProvablyGoneRowsOfItsSlotAndOtherBoots(t *testing.T) {
	path := filepath.Join(testtemp.Dir(t), "registry.db")
	dead := map[int]bool{20: true, 21: true, 22: true, 23: true, 24: true}
	env := proc.Env{
		Signal0: func(pid int) error {
			if dead[pid] {
				return syscall.ESRCH
			}
			return nil
		},
		ProcessStart: func(int) (uint64, error) { return 4242, nil },
		BootID:       func() (string, error) { return "boot-1", nil },
	}
	sameSlotDead := testRow("same-slot-dead", "default", 20)
	sameSlotAlive := testRow("same-slot-alive", "default", 30) // a duplicate: kept
	otherSlotDead := testRow("other-slot-dead", "review", 21)  // evidence for its own slot: kept
	otherBoot := testRow("other-boot", "review", 31)
	otherBoot.BootID = "boot-0"
	otherCheckoutDead := testRow("other-checkout-dead", "default", 22)
	otherCheckoutDead.RepositoryID = "ffffffffffffffffffffffffffffffff"
	const host, container = "pid:[4026531836]", "pid:[4026532201]"
	containerDead := testRow("container", "default", 23) // its pid is another process here: kept
	containerDead.PIDNamespace = container
	hostDead := testRow("host-dead", "default", 24)
	hostDead.PIDNamespace = host
	register(t, path, allAlive, sameSlotDead, sameSlotAlive, otherSlotDead, otherBoot, otherCheckoutDead, containerDead, hostDead)

	newRow := testRow("new", "default", 40)
	newRow.PIDNamespace = host
	register(t, path, env, newRow)
	var ids []string
	for _, r := range readRows(t, path) {
		ids = append(ids, r.RuntimeID)
	}
	want := []string{"container", "new", "other-checkout-dead", "other-slot-dead", "same-slot-alive"}
	if !reflect.DeepEqual(ids, want) {
		t.Fatalf("rows after a registration: %v, want %v", ids, want)
	}
}

func TestSchemaVersionIsPinnedAndMigrationIsIdempotent(t *testing.T) {
	if got := migrations[len(migrations)-1].version; got != SchemaVersion {
		t.Fatalf("the last migration is version %d, SchemaVersion is %d", got, SchemaVersion)
	}
	for i, m := range migrations {
		if m.version != i+1 {
			t.Fatalf("migration %d has version %d: versions are 1, 2, 3…", i, m.version)
		}
	}
	path := filepath.Join(testtemp.Dir(t), "registry.db")
	register(t, path, allAlive, testRow("a", "default", 10))
	before := schemaOf(t, path)
	if before.version != SchemaVersion {
		t.Fatalf("user_version %d, want SchemaVersion %d", before.version, SchemaVersion)
	}
	bytesBefore := fileBytes(t, path)

	rt, err := Open(context.Background(), path) // migrates again
	if err != nil {
		t.Fatal(err)
	}
	rt.Close()
	if after := schemaOf(t, path); !reflect.DeepEqual(after, before) {
		t.Fatalf("a second migration changed the schema:\n%+v\n%+v", before, after)
	}
	if !bytes.Equal(fileBytes(t, path), bytesBefore) {
		t.Fatal("a second migration changed the database file")
	}
}

func TestMigrationsAreAdditive(t *testing.T) {
	for _, m := range migrations {
		for _, stmt := range m.statements {
			upper := strings.ToUpper(stmt)
			ok := strings.HasPrefix(upper, "CREATE TABLE IF NOT EXISTS") ||
				strings.HasPrefix(upper, "CREATE INDEX IF NOT EXISTS") ||
				strings.HasPrefix(upper, "ALTER TABLE") && strings.Contains(upper, " ADD COLUMN ")
			if !ok {
				t.Errorf("migration %d is not additive: %.60s…", m.version, stmt)
			}
		}
	}
}

func TestAnOldDatabaseIsUpgradedAndANewerOneIsUsable(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(testtemp.Dir(t), "registry.db")
	register(t, path, allAlive, testRow("a", "default", 10))

	// A later release adds a column; opening with it upgrades the file, keeps
	// the row, and doing it twice changes nothing.
	next := append(append([]migration(nil), migrations...), migration{SchemaVersion + 1, []string{
		`ALTER TABLE server_runtimes ADD COLUMN note TEXT NOT NULL DEFAULT ''`,
	}})
	db := openTest(t, path)
	for range 2 {
		if err := migrate(ctx, db, next); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if got := schemaOf(t, path).version; got != SchemaVersion+1 {
		t.Fatalf("user_version after the upgrade: %d", got)
	}
	// This release still reads and writes the newer database.
	register(t, path, allAlive, testRow("b", "review", 11))
	if rows := readRows(t, path); len(rows) != 2 {
		t.Fatalf("rows in the newer database: %+v", rows)
	}
	if got := schemaOf(t, path).version; got != SchemaVersion+1 {
		t.Fatalf("an older release changed the newer schema version to %d", got)
	}
}

func TestReadingChangesNothing(t *testing.T) {
	dir := testtemp.Dir(t)
	missing := filepath.Join(dir, "none", "registry.db")
	if rows, err := Read(context.Background(), missing); err != nil || rows != nil {
		t.Fatalf("a missing registry: %v %v, want no rows and no error", rows, err)
	}
	if _, err := os.Stat(filepath.Dir(missing)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("reading a missing registry created its directory (%v)", err)
	}

	path := filepath.Join(dir, "registry.db")
	register(t, path, allAlive, testRow("a", "default", 10))
	// A writer keeps the database open, as a running server's would be.
	writer := openTest(t, path)
	defer writer.Close()
	if _, err := writer.Exec(`UPDATE server_runtimes SET url = url`); err != nil {
		t.Fatal(err)
	}
	before := fileBytes(t, path)
	for range 3 {
		readRows(t, path)
	}
	if !bytes.Equal(fileBytes(t, path), before) {
		t.Fatal("reading the registry changed its bytes")
	}
}

func TestUnusableRegistries(t *testing.T) {
	dir := testtemp.Dir(t)
	blocker := filepath.Join(dir, "blocker")
	if err := os.WriteFile(blocker, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	aDirectory := filepath.Join(dir, "dir.db")
	if err := os.Mkdir(aDirectory, 0o700); err != nil {
		t.Fatal(err)
	}
	notADatabase := filepath.Join(dir, "text.db")
	if err := os.WriteFile(notADatabase, []byte(strings.Repeat("not a database\n", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	// Another program's database, at any schema version, in WAL mode with
	// a WAL not yet checkpointed (it crashed) or not, is neither written
	// into, nor made private, nor read as an empty registry. (The
	// registry's table joined its tables, or no servers were read from it.)
	foreign := func(version int, wal bool) string {
		path := filepath.Join(dir, fmt.Sprintf("foreign-%d-%t.db", version, wal))
		db := openTest(t, path)
		defer db.Close()
		if _, err := db.Exec(fmt.Sprintf("PRAGMA journal_mode=%s; CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('x'); PRAGMA user_version = %d",
			map[bool]string{true: "WAL", false: "DELETE"}[wal], version)); err != nil {
			t.Fatal(err)
		}
		if !wal {
			return path
		}
		crashed := filepath.Join(dir, fmt.Sprintf("crashed-%d.db", version))
		for _, suffix := range []string{"", "-wal"} { // as they are while it runs
			if err := os.WriteFile(crashed+suffix, fileBytes(t, path+suffix), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return crashed
	}
	for name, path := range map[string]string{
		"a file where its directory should be": filepath.Join(blocker, "registry.db"),
		"a directory where the file should be": aDirectory,
		"not a database":                       notADatabase,
		"another program's database":           foreign(0, false),
		"another program's versioned database": foreign(SchemaVersion+1, false),
		"another program's crashed database":   foreign(0, true),
	} {
		t.Run(name, func(t *testing.T) {
			os.Chmod(path, 0o644)
			before, beforeWAL := fileOrNot(path), fileOrNot(path+"-wal")
			mode := modeOf(path)
			if _, err := Open(context.Background(), path); err == nil {
				t.Error("Open succeeded")
			}
			if _, err := Read(context.Background(), path); err == nil {
				t.Error("Read succeeded")
			}
			if !bytes.Equal(fileOrNot(path), before) || !bytes.Equal(fileOrNot(path+"-wal"), beforeWAL) {
				t.Error("the file, or its WAL, was written")
			}
			if now := modeOf(path); now != mode {
				t.Errorf("its mode was changed from %v to %v", mode, now)
			}
		})
	}
}

func TestPath(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		name string
		flag string
		env  map[string]string
		want string
	}{
		{"the flag first", testtemp.Rooted("/f/r.db"), map[string]string{RegistryEnv: testtemp.Rooted("/e/r.db"), "XDG_STATE_HOME": testtemp.Rooted("/x")}, testtemp.Rooted("/f/r.db")},
		{"then the environment variable", "", map[string]string{RegistryEnv: testtemp.Rooted("/e/r.db"), "XDG_STATE_HOME": testtemp.Rooted("/x")}, testtemp.Rooted("/e/r.db")},
		{"then XDG_STATE_HOME", "", map[string]string{"XDG_STATE_HOME": testtemp.Rooted("/x"), "LOCALAPPDATA": testtemp.Rooted("/l"), "HOME": testtemp.Rooted("/h")}, testtemp.Rooted("/x/majordomus-mcp/registry.db")},
		{"then LOCALAPPDATA (Windows)", "", map[string]string{"LOCALAPPDATA": testtemp.Rooted("/l"), "HOME": testtemp.Rooted("/h")}, testtemp.Rooted("/l/majordomus-mcp/registry.db")},
		{"a relative XDG_STATE_HOME is ignored", "", map[string]string{"XDG_STATE_HOME": "x", "HOME": testtemp.Rooted("/h")}, testtemp.Rooted("/h/.local/state/majordomus-mcp/registry.db")},
	}
	for _, tt := range tests {
		got, err := Path(tt.flag, env(tt.env))
		if err != nil || got != tt.want {
			t.Errorf("%s: %q %v, want %q", tt.name, got, err, tt.want)
		}
	}
	if _, err := Path("", env(nil)); !errors.Is(err, ErrNoRegistryPath) {
		t.Errorf("no path at all: %v, want ErrNoRegistryPath", err)
	}
	if got, err := Path("", env(map[string]string{RegistryEnv: "registry.db", "HOME": testtemp.Rooted("/h")})); !errors.Is(err, ErrNoRegistryPath) {
		t.Errorf("a relative %s: %q %v, want ErrNoRegistryPath", RegistryEnv, got, err)
	}
}

type schema struct {
	version int
	sql     []string
}

func schemaOf(t *testing.T, path string) schema {
	t.Helper()
	db := openTest(t, path)
	defer db.Close()
	var s schema
	if err := db.QueryRow("PRAGMA user_version").Scan(&s.version); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query("SELECT sql FROM sqlite_master ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var q sql.NullString
		if err := rows.Scan(&q); err != nil {
			t.Fatal(err)
		}
		s.sql = append(s.sql, q.String)
	}
	return s
}

func openTest(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", dsn(path, writerParams))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	return db
}

// modeOf is the mode of the file at path, or 0.
func modeOf(path string) os.FileMode {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Mode()
}

// fileOrNot is the file at path, or nil.
func fileOrNot(path string) []byte {
	b, _ := os.ReadFile(path)
	return b
}

func fileBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestConcurrentRegistrationsOnANewFileAllSucceed(t *testing.T) {
	path := filepath.Join(testtemp.Dir(t), "new", "registry.db")
	const writers = 8
	errs := make(chan error, writers)
	for i := range writers {
		go func() {
			ctx := context.Background()
			rt, err := Open(ctx, path)
			if err != nil {
				errs <- err
				return
			}
			defer rt.Close()
			rt.Env = allAlive
			errs <- rt.Register(ctx, testRow("w"+strconv.Itoa(i), "p"+strconv.Itoa(i), 100+i))
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Errorf("a concurrent registration failed: %v", err)
		}
	}
	if rows := readRows(t, path); len(rows) != writers {
		t.Fatalf("%d rows, want %d", len(rows), writers)
	}
}

// A registry's WAL, kept when its writer closes (persistWAL), is emptied
// then: each server writes a few times in its life, and a WAL that grew
// with every one would slow every write and read after it.
func TestTheRegistrysWALIsEmptiedAsItsWriterCloses(t *testing.T) {
	path := filepath.Join(testtemp.Dir(t), "registry.db")
	for i := range 20 {
		register(t, path, allAlive, testRow("rt-"+strconv.Itoa(i), "default", 100+i))
	}
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatalf("after 20 writers, the WAL was not kept: %v", err)
	}
	if fi.Size() != 0 {
		t.Fatalf("after 20 writers, the WAL holds %d bytes; want it emptied", fi.Size())
	}
	if rows := readRows(t, path); len(rows) != 20 {
		t.Fatalf("%d rows read, want 20", len(rows))
	}
}

// A registry another program left in rollback-journal mode, locked by a
// write under way whose pages already reached the file, is unreadable
// until that write ends: never read as it is then, with rows that may
// never be committed.
func TestALockedRegistryIsNotReadHalfWritten(t *testing.T) {
	path := filepath.Join(testtemp.Dir(t), "registry.db")
	register(t, path, allAlive, testRow("a", "default", 10))
	writer, err := sql.Open("sqlite", dsn(path, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	writer.SetMaxOpenConns(1)
	for _, stmt := range []string{
		"PRAGMA journal_mode=DELETE", "PRAGMA cache_size=1", "BEGIN IMMEDIATE",
		"UPDATE server_runtimes SET runtime_id = 'phantom'", "CREATE TABLE pad(x)",
	} {
		if _, err := writer.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	for range 2000 { // past the cache: the write's pages spill into the file
		if _, err := writer.Exec("INSERT INTO pad VALUES (?)", strings.Repeat("x", 500)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(path + "-journal"); err != nil {
		t.Fatalf("the write keeps no journal: %v", err)
	}
	if rows, err := Read(context.Background(), path); err == nil {
		t.Fatalf("read while locked: %+v", rows)
	}
	if _, err := writer.Exec("ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if rows := readRows(t, path); len(rows) != 1 || rows[0].RuntimeID != "a" {
		t.Fatalf("after the rollback: %+v", rows)
	}
}

// A registry another program left in rollback-journal mode, its writer
// killed in the middle of a write, is written again by the next server:
// the write is rolled back, as any SQLite client that may write does,
// and the row registered beside the rows as they were. (Every server was
// refused for good: "attempt to write a readonly database".)
func TestARegistryWhoseWriterWasKilledMidWriteIsWrittenAgain(t *testing.T) {
	path := filepath.Join(testtemp.Dir(t), "registry.db")
	register(t, path, allAlive, testRow("a", "default", 10))
	killWriteInJournal(t, path)
	err := Write(context.Background(), path, WriteTimeout, func(ctx context.Context, rt *DB) error {
		rt.Env = allAlive
		return rt.Register(ctx, testRow("b", "default", 11))
	})
	if err != nil {
		t.Fatalf("registering after the killed write: %v", err)
	}
	rows := readRows(t, path)
	if len(rows) != 2 || rows[0].RuntimeID != "a" || rows[1].RuntimeID != "b" {
		t.Fatalf("after the killed write and a registration: %+v", rows)
	}
}

// A registry whose writer was killed in the middle of a write (see above)
// is read by the next inventory, with no server to roll the write back
// first: the reader rolls it back itself, as any SQLite client that may
// write does, and reads the rows as they were. (Every inventory said
// "attempt to write a readonly database" until some server registered.)
func TestARegistryWhoseWriterWasKilledMidWriteIsRead(t *testing.T) {
	path := filepath.Join(testtemp.Dir(t), "registry.db")
	register(t, path, allAlive, testRow("a", "default", 10))
	killWriteInJournal(t, path)
	if got := testchild.Start(t, "read", "REGISTRY="+path).Line(t); got != "rows: 1" {
		t.Fatalf("the reader of a registry whose writer was killed mid-write: %s", got)
	}
	if rows := readRows(t, path); len(rows) != 1 || rows[0].RuntimeID != "a" {
		t.Fatalf("after the killed write: %+v", rows)
	}
}

// killWriteInJournal leaves the registry at path as another program in
// rollback-journal mode does when it is killed in the middle of a write:
// with a hot journal beside it.
func killWriteInJournal(t *testing.T, path string) {
	t.Helper()
	writer := testchild.Start(t, "write-in-journal", "REGISTRY="+path)
	writer.Expect(t, "writing")
	if err := writer.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	writer.Cmd.Wait()
	if _, err := os.Stat(path + "-journal"); err != nil {
		t.Fatalf("the killed write left no journal: %v", err)
	}
}
