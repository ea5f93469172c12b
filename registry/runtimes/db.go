package runtimes

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/majordomus-mcp/majordomus-mcp/fleet"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
	"github.com/majordomus-mcp/majordomus-mcp/registry/proc"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, pure Go
)

// The DSN parameters. Writers use a busy timeout (a writer waits for
// another's lock instead of failing) and BEGIN IMMEDIATE transactions: a
// deferred transaction that reads and then writes cannot be helped by the
// busy timeout when its lock upgrade collides with another process's, and
// fails at once with SQLITE_BUSY (measured with four processes racing; see
// the package doc). The database is in WAL mode (readers never block a
// writer, nor a writer readers), set by [useWAL]. Readers open the file
// read-only and query-only, so an inventory cannot change a byte of it.
const (
	writerParams = "_pragma=busy_timeout(5000)&_pragma=synchronous(NORMAL)&_pragma=journal_size_limit(0)&_txlock=immediate"
	readerParams = "mode=ro&_pragma=busy_timeout(5000)&_pragma=query_only(1)"
)

// columns are the row's columns in the order rowArgs and scanRow use;
// columnsOfVersion1 those a registry of schema version 1 has, which Read
// reads with an unknown directory.
const (
	columnsOfVersion1 = `runtime_id, profile, role, state, repository_root, repository_id,
	cohort, cohort_source, parent_pid, parent_start,
	startup_revision, module_version, vcs_revision, transport, url,
	pid, process_start, boot_id, executable, registered_at, registered_ticks`
	columns = columnsOfVersion1 + `, repository_dir`
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
// nil when err is not. A WAL database without its -wal (an ordinary
// SQLite client that closed it last removed it) holds all it has in the
// file: where the reader cannot make the -wal and -shm again (a directory
// not its to write), it is read as a file that does not change. Only
// such a one: a database in another journal mode that cannot be read is
// locked by a write under way, whose pages may be in the file already.
func openReader(ctx context.Context, path string) (db *sql.DB, ours bool, err error) {
	db, ours, err = openAs(ctx, path, readerParams)
	if _, noWAL := os.Stat(path + "-wal"); err != nil && noWAL != nil && walMode(path) {
		if db, ours, again := openAs(ctx, path, readerParams+"&immutable=1"); again == nil {
			return db, ours, nil
		}
	}
	return db, ours, err
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

// Register writes row, replacing a row with its runtime id. In the same
// transaction it removes the rows whose processes are provably gone (no
// such pid, another start time, another boot; signal 0 only) among those of
// its own checkout and profile — the slot it now occupies — and those of
// any other boot, so that a server killed with -9 leaves a stale row only
// until its successor registers. Rows of live processes are never touched.
func (r *DB) Register(ctx context.Context, row fleet.Row) error {
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("registering: %w", err)
	}
	defer tx.Rollback()
	gone, err := r.goneRows(ctx, tx, row)
	if err != nil {
		return err
	}
	for _, id := range gone {
		if _, err := tx.ExecContext(ctx, `DELETE FROM server_runtimes WHERE runtime_id = ?`, id); err != nil {
			return fmt.Errorf("removing a stale row: %w", err)
		}
	}
	_, err = tx.ExecContext(ctx, `INSERT OR REPLACE INTO server_runtimes (`+columns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, rowArgs(row)...)
	if err == nil {
		err = tx.Commit()
	}
	if err != nil {
		return fmt.Errorf("registering: %w", err)
	}
	return nil
}

// goneRows returns the runtime ids Register may remove.
func (r *DB) goneRows(ctx context.Context, tx *sql.Tx, row fleet.Row) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT runtime_id, pid, process_start, boot_id FROM server_runtimes
		WHERE runtime_id <> ? AND ((repository_id = ? AND profile = ?) OR boot_id <> ?)`,
		row.RuntimeID, row.RepositoryID, row.Profile, row.BootID)
	if err != nil {
		return nil, fmt.Errorf("reading the rows to prune: %w", err)
	}
	defer rows.Close()
	var gone []string
	for rows.Next() {
		var id string
		var pid, start, boot any // as stored: a row written by hand may hold anything
		if err := rows.Scan(&id, &pid, &start, &boot); err != nil {
			continue // no runtime id: nothing to remove it by
		}
		// read each as a scan into its type reads it (text, a blob of
		// digits), each on its own
		var p, s sql.NullInt64
		var b sql.NullString
		_ = b.Scan(boot)
		readable := p.Scan(pid) == nil && s.Scan(start) == nil && p.Valid && s.Valid
		switch {
		case r.Env.OfAnotherBoot(b.String): // nothing of it runs, whatever else it holds
			gone = append(gone, id)
		case !readable: // a row that cannot be read is not provably gone: it stays
		case r.Env.Alive(int(p.Int64), uint64(s.Int64), b.String) == proc.OwnerGone:
			gone = append(gone, id)
		}
	}
	return gone, rows.Err()
}

// SetState records a server's new state (StateLeaseLost). A row that is no
// longer there is not an error: there is nothing left to describe.
func (r *DB) SetState(ctx context.Context, runtimeID, state string, now time.Time) error {
	_, err := r.db.ExecContext(ctx, `UPDATE server_runtimes SET state = ?, state_changed_at = ? WHERE runtime_id = ?`,
		state, now.UTC().Format(time.RFC3339Nano), runtimeID)
	if err != nil {
		return fmt.Errorf("recording the state %s: %w", state, err)
	}
	return nil
}

// Remove deletes a server's row, on its clean exit, and reports whether
// there was one.
func (r *DB) Remove(ctx context.Context, runtimeID string) (bool, error) {
	res, err := r.db.ExecContext(ctx, `DELETE FROM server_runtimes WHERE runtime_id = ?`, runtimeID)
	if err != nil {
		return false, fmt.Errorf("removing the row: %w", err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// Read returns every row of the registry at path, without changing
// a byte of it: the file is opened read-only and query-only, and a missing
// file is not created — it means no server ever registered, and the answer
// is no rows. (Like any reader of a WAL database, SQLite creates the -wal
// and -shm companions beside an existing file when they are missing; the
// database file itself is never written.) A path that cannot be read is an error: the inventory is then
// incomplete, never empty. Rows that cannot be read (a column of another
// type: changed by other hands) are an error too, which names them, given
// with every other row.
func Read(ctx context.Context, path string) ([]fleet.Row, error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := registry.BlockedPath(path); err != nil { // a file where a directory should be
			return nil, fmt.Errorf("reading the registry: %w", err)
		}
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading the registry: %w", err)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%w: %s is a %s", ErrRegistryUnusable, path, kindOf(fi.Mode()))
	case fi.Size() == 0:
		return nil, nil // created by a writer that has not written yet
	}
	db, ours, err := openReader(ctx, path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if !ours {
		return nil, nil // made, not yet migrated
	}
	var version int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return nil, fmt.Errorf("reading the registry's schema version: %w", err)
	}
	selected := columns
	if version < versionWithDirectory { // not migrated yet: a reader cannot, and no row knows its directory
		selected = columnsOfVersion1 + `, '' AS repository_dir`
	}
	rows, err := db.QueryContext(ctx, `SELECT `+selected+` FROM server_runtimes ORDER BY runtime_id`)
	if err != nil {
		return nil, fmt.Errorf("reading the registry: %w", err)
	}
	defer rows.Close()
	var out []fleet.Row
	var unread []string
	var why error
	for rows.Next() {
		row, err := scanRow(rows)
		if err != nil { // one row's: the others are read, and the answer is incomplete
			unread, why = append(unread, strconv.Quote(rowID(rows))), cmp.Or(why, err)
			continue
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the registry: %w", err)
	}
	if why != nil {
		if len(unread) > 5 {
			unread = append(unread[:5], fmt.Sprintf("and %d more", len(unread)-5))
		}
		return out, fmt.Errorf("reading the registry: cannot read the row %s (a database changed by other hands?): %w", strings.Join(unread, ", "), why)
	}
	return out, nil
}

// rowID is the runtime id of the row rows is at, whatever its columns hold.
func rowID(rows *sql.Rows) string {
	cols, err := rows.Columns()
	if err != nil {
		return "?"
	}
	vals := make([]any, len(cols))
	for i := range vals {
		vals[i] = new(any)
	}
	if rows.Scan(vals...) != nil {
		return "?"
	}
	switch id := (*vals[0].(*any)).(type) {
	case string:
		return id
	case []byte:
		return string(id)
	case nil:
		return "(none)"
	default:
		return fmt.Sprint(id)
	}
}

func rowArgs(r fleet.Row) []any {
	return []any{r.RuntimeID, r.Profile, r.Role, r.State, r.RepositoryRoot, r.RepositoryID,
		r.Cohort, r.CohortSource, int64(r.ParentPID), int64(r.ParentStart),
		r.StartupRevision, r.ModuleVersion, r.VCSRevision, r.Transport, r.URL,
		int64(r.PID), int64(r.ProcessStart), r.BootID, r.Executable,
		r.RegisteredAt.UTC().Format(time.RFC3339Nano), int64(r.RegisteredTicks), r.RepositoryDir}
}

func scanRow(rows *sql.Rows) (fleet.Row, error) {
	var r fleet.Row
	var parentPID, parentStart, pid, start, ticks int64
	var at string
	err := rows.Scan(&r.RuntimeID, &r.Profile, &r.Role, &r.State, &r.RepositoryRoot, &r.RepositoryID,
		&r.Cohort, &r.CohortSource, &parentPID, &parentStart,
		&r.StartupRevision, &r.ModuleVersion, &r.VCSRevision, &r.Transport, &r.URL,
		&pid, &start, &r.BootID, &r.Executable, &at, &ticks, &r.RepositoryDir)
	if err != nil {
		return fleet.Row{}, err
	}
	r.ParentPID, r.ParentStart = int(parentPID), uint64(parentStart)
	r.PID, r.ProcessStart, r.RegisteredTicks = int(pid), uint64(start), uint64(ticks)
	r.RegisteredAt, _ = time.Parse(time.RFC3339Nano, at) // informational; zero when unparsable
	return r, nil
}

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
