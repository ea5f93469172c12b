package runtimes

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/registry/proc"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, pure Go
)

// The DSN parameters. Writers use a busy timeout (a writer waits for
// another's lock instead of failing) and BEGIN IMMEDIATE transactions: a
// deferred transaction that reads and then writes cannot be helped by the
// busy timeout when its lock upgrade collides with another process's, and
// fails at once with SQLITE_BUSY (measured with four processes racing; see
// the package doc). The database is in WAL mode (readers never block a
// writer, nor a writer readers), set by [useWAL]. Readers open the file
// read-only and query-only, so an inventory cannot change a byte of it
// (but to roll back a write cut off: rollBack).
const (
	writerParams = "_pragma=busy_timeout(5000)&_pragma=synchronous(NORMAL)&_pragma=journal_size_limit(0)&_txlock=immediate"
	readerParams = "mode=ro&_pragma=busy_timeout(5000)&_pragma=query_only(1)"
)

// columns are the row's columns in the order rowArgs and scanRow use;
// columnsOfVersion1 those a registry of schema version 1 has, which Read
// reads with an unknown directory and namespaces.
const (
	columnsOfVersion1 = `runtime_id, profile, role, state, repository_root, repository_id,
	cohort, cohort_source, parent_pid, parent_start,
	startup_revision, module_version, vcs_revision, transport, url,
	pid, process_start, boot_id, executable, registered_at, registered_ticks`
	columns = columnsOfVersion1 + `, repository_dir, namespaces`
)

// DB is the runtime registry opened for writing by the server a row
// is about. Open it for one operation and close it: a server writes three
// times in its life (register, lease lost, exit), and a handle held longer
// would keep writing to a file someone may have replaced.
type DB struct {
	// Env tells which rows' processes are gone, for pruning; the zero Env is
	// the real host.
	Env  proc.Env
	db   *sql.DB
	path string
}

// Open opens the registry at path for writing, creating its
// directory (0700) and file (0600) when missing, and brings its schema to
// [SchemaVersion]. A path that is a directory, or under a regular file,
// cannot be opened (root included), nor one in another user's tree.
func Open(ctx context.Context, path string) (*DB, error) {
	if err := anothersTree(path); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating the registry directory: %w", err)
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is a %s", ErrRegistryUnusable, path, kindOf(fi.Mode()))
	} else if err == nil && fi.Size() > 0 {
		// Another program's database is told before anything touches it:
		// a writer's connection would change its mode, or checkpoint its
		// WAL into it as it closed.
		db, _, err := openReader(ctx, path)
		if err != nil {
			return nil, err
		}
		db.Close()
	}
	// Created here, not by SQLite, so that it is 0600 (SQLite gives its
	// -wal and -shm files the database's mode).
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating the registry: %w", err)
	}
	f.Close()
	keepPrivate(path)
	db, err := sql.Open("sqlite", dsn(path, writerParams))
	if err != nil {
		return nil, fmt.Errorf("opening the registry: %w", err)
	}
	db.SetMaxOpenConns(1)
	err = useWAL(ctx, db)
	if err == nil {
		err = migrate(ctx, db, migrations)
	}
	if err == nil {
		err = persistWAL(ctx, db)
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	return &DB{db: db, path: path}, nil
}

// keepPrivate makes the registry and its companions readable by their
// owner only where something else made them (a shell, a backup restored)
// readable by others: a file SQLite finds already there keeps its mode,
// and it gives its -wal and -shm the database's.
func keepPrivate(path string) {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o077 != 0 {
			_ = os.Chmod(p, fi.Mode().Perm()&0o700)
		}
	}
}

// openReader opens the registry at path read-only and query-only, and
// reports whether it holds the registry's table (registryTable); db is
// nil when err is not. A write cut off in another journal mode (its
// writer killed) is rolled back first (rollBack). A WAL database without
// its -wal (an ordinary SQLite client that closed it last removed it)
// holds all it has in the file: where the reader cannot make the -wal and
// -shm again (a directory not its to write), it is read as a file that
// does not change. Only such a one: a database in another journal mode
// that cannot be read is locked by a write under way, whose pages may be
// in the file already.
// SQLite keeps the -wal beside the file a link leads to (on Unix), or
// beside the link (on Windows): it is missing only where it is at neither.
func openReader(ctx context.Context, path string) (db *sql.DB, ours bool, err error) {
	db, ours, err = openAs(ctx, path, readerParams)
	if isHotJournal(err) {
		if err = rollBack(ctx, path); err != nil {
			return nil, false, err
		}
		db, ours, err = openAs(ctx, path, readerParams)
	}
	if err != nil && !walAt(path) && walMode(path) {
		if db, ours, again := openAs(ctx, path, readerParams+"&immutable=1"); again == nil {
			return db, ours, nil
		}
	}
	return db, ours, err
}

// walAt reports whether the database at path has a -wal beside it, or
// beside the file it leads to when path is a link.
func walAt(path string) bool {
	for _, db := range withTarget(path) {
		if _, err := os.Stat(db + "-wal"); err == nil {
			return true
		}
	}
	return false
}

// withTarget is path, and the file it leads to when it is a link: where
// SQLite may keep the database's -wal and -shm.
func withTarget(path string) []string {
	if resolved, err := filepath.EvalSymlinks(path); err == nil && resolved != path {
		return []string{path, resolved}
	}
	return []string{path}
}

// walMode reports whether the database file at path says, in its header,
// that it is in WAL mode (its read and write versions are 2).
func walMode(path string) bool {
	f, err := os.Open(path) // a regular file: its callers made sure
	if err != nil {
		return false
	}
	defer f.Close()
	var header [20]byte
	_, err = io.ReadFull(f, header[:])
	return err == nil && header[18] == 2 && header[19] == 2
}

func openAs(ctx context.Context, path, params string) (db *sql.DB, ours bool, err error) {
	db, err = sql.Open("sqlite", dsn(path, params))
	if err != nil {
		return nil, false, fmt.Errorf("opening the registry: %w", err)
	}
	db.SetMaxOpenConns(1)
	if ours, err = registryTable(ctx, db, path); err != nil {
		db.Close()
		return nil, false, err
	}
	return db, ours, nil
}

// registryTable reports whether the database holds the registry's table;
// one that holds tables but not the registry's is another program's file,
// neither written to nor read as an empty registry: ErrRegistryUnusable.
func registryTable(ctx context.Context, db *sql.DB, path string) (bool, error) {
	var all, ours int
	err := db.QueryRowContext(ctx, `SELECT count(*), count(CASE WHEN name = 'server_runtimes' THEN 1 END)
		FROM sqlite_master WHERE type = 'table'`).Scan(&all, &ours)
	switch {
	case err != nil:
		return false, fmt.Errorf("reading the registry: %w", err)
	case all > 0 && ours == 0:
		return false, fmt.Errorf("%w: %s is another program's database", ErrRegistryUnusable, path)
	}
	return ours > 0, nil
}

// persistWAL keeps the -wal and -shm files when the writer closes: a
// reader that may not write the registry's directory (a read-only home
// in a sandbox) cannot make them, and reads a WAL database only through
// them. The one connection keeps the setting until it closes; the WAL is
// emptied as it closes (journal_size_limit(0)), or each writer would add
// to it and none would start it again.
func persistWAL(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("opening the registry: %w", err)
	}
	defer conn.Close()
	return conn.Raw(func(driverConn any) error {
		fc, ok := driverConn.(interface {
			FileControlPersistWAL(db string, mode int) (int, error)
		})
		if !ok {
			return nil
		}
		if _, err := fc.FileControlPersistWAL("main", 1); err != nil {
			return fmt.Errorf("opening the registry: keeping its WAL files: %w", err)
		}
		return nil
	})
}

// useWAL puts the database in WAL mode, which the file then keeps. Turning
// a new file to WAL upgrades a read lock to an exclusive one, which is the
// one wait SQLite's busy timeout cannot cover (it answers SQLITE_BUSY at
// once rather than risk a deadlock), so while several processes create the
// registry at the same moment it is tried again, with a growing pause,
// until ctx ends. On an existing registry it succeeds at once.
func useWAL(ctx context.Context, db *sql.DB) error {
	pause := 2 * time.Millisecond
	for {
		var mode string
		err := db.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode)
		switch {
		case err == nil && strings.EqualFold(mode, "wal"):
			return nil
		case err == nil:
			return fmt.Errorf("%w: journal mode %q instead of WAL", ErrRegistryUnusable, mode)
		case !isBusy(err):
			return fmt.Errorf("opening the registry: %w", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("opening the registry: %w (%v)", err, ctx.Err())
		case <-time.After(pause):
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
}

// isHotJournal reports whether err is SQLite's SQLITE_READONLY_ROLLBACK: a
// read-only connection found the journal of a write cut off (its writer
// killed), which only a connection that may write rolls back.
func isHotJournal(err error) bool {
	var coded interface{ Code() int }
	return errors.As(err, &coded) && coded.Code() == 776
}

// rollBack rolls back the write cut off in the registry at path, as any
// SQLite client that may write does before it reads: else no reader (an
// inventory, a server's check in Open) would ever read it again. It
// changes nothing else: the connection is query-only, and never creates
// the file (mode=rw). On Unix the journal is this user's
// (anothersCompanions).
func rollBack(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", dsn(path, "mode=rw&_pragma=busy_timeout(5000)&_pragma=query_only(1)"))
	if err != nil {
		return fmt.Errorf("opening the registry: %w", err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&n); err != nil {
		return fmt.Errorf("reading the registry: a write cut off (its writer killed) left %s, which only a process that may write the registry and its directory can roll back: %w", path+"-journal", err)
	}
	return nil
}

// isBusy reports whether err is SQLite's SQLITE_BUSY (any extended code).
func isBusy(err error) bool {
	var coded interface{ Code() int }
	return errors.As(err, &coded) && coded.Code()&0xff == 5
}

// Write opens the registry at path, runs do on it within timeout, and
// closes it: a server writes in a few short operations over its life, and
// never holds the file open between them.
func Write(ctx context.Context, path string, timeout time.Duration, do func(context.Context, *DB) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	rt, err := Open(ctx, path)
	if err != nil {
		return err
	}
	defer rt.Close()
	return do(ctx, rt)
}

// Close closes the registry.
func (r *DB) Close() error { return r.db.Close() }

// dsn is the SQLite URI of path with params. In a URI, '%', '?' and '#'
// of the path must be escaped.
func dsn(path, params string) string {
	escaped := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	return "file:" + escaped + "?" + params
}

func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	default:
		return "special file"
	}
}
