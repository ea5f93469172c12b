package runtimes

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/fleet"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
	"github.com/majordomus-mcp/majordomus-mcp/registry/proc"
)

// Register writes row, replacing a row with its runtime id. In the same
// transaction it removes the rows whose processes are provably gone (no
// such pid, another start time, another boot; signal 0 only) among those of
// its own checkout and profile — the slot it now occupies —, those of
// checkouts gone from their roots (goneRoots) and those of any other boot,
// so that a server killed with -9 leaves a stale row only until its
// successor registers, or, its checkout removed or moved away, where none
// will, until any server registers. Rows of live processes are never
// touched.
func (r *DB) Register(ctx context.Context, row fleet.Row) error {
	goneRoots := r.goneRoots(ctx, row)
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("registering: %w", err)
	}
	defer tx.Rollback()
	gone, err := r.goneRows(ctx, tx, row, goneRoots)
	if err != nil {
		return err
	}
	for _, id := range gone {
		if _, err := tx.ExecContext(ctx, `DELETE FROM server_runtimes WHERE runtime_id = ?`, id); err != nil {
			return fmt.Errorf("removing a stale row: %w", err)
		}
	}
	_, err = tx.ExecContext(ctx, `INSERT OR REPLACE INTO server_runtimes (`+columns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, rowArgs(row)...)
	if err == nil {
		err = tx.Commit()
	}
	if err != nil {
		return fmt.Errorf("registering: %w", err)
	}
	return nil
}

// rootsWait bounds how long a registration waits to learn which roots
// are gone: a mount that stopped answering (NFS) keeps its rows.
const rootsWait = time.Second

// goneRoots returns the roots of the registry's other checkouts that no
// longer exist (removed, or moved away): no server registers at them
// again, so the rows of their servers killed with -9 would stay until the
// machine reboots, and a moved checkout's inventory would list its dead
// server's row for as long. It runs before Register's transaction, so that
// a stat never holds the registry's lock; one that cannot be read tells
// nothing, and keeps its rows.
func (r *DB) goneRoots(ctx context.Context, row fleet.Row) []string {
	// At most so many a registration, each one a parameter of goneRows's
	// query (SQLite takes 32766): more, piled up by an earlier release, go
	// over the next registrations.
	rows, err := r.db.QueryContext(ctx, `SELECT DISTINCT repository_root FROM server_runtimes WHERE repository_root <> ? LIMIT 1000`, row.RepositoryRoot)
	if err != nil {
		return nil // the registration reads the registry again, and says why it cannot
	}
	var roots []string
	for rows.Next() {
		var root sql.NullString
		if rows.Scan(&root) == nil && filepath.IsAbs(root.String) {
			roots = append(roots, root.String)
		}
	}
	rows.Close()
	answers := make(chan string, len(roots)) // "" for a root that is there, or cannot be told
	for _, root := range roots {
		go func() {
			if _, err := os.Stat(root); errors.Is(err, fs.ErrNotExist) {
				answers <- root
				return
			}
			answers <- ""
		}()
	}
	var gone []string
	wait := time.NewTimer(rootsWait)
	defer wait.Stop()
	for range roots {
		select {
		case root := <-answers:
			if root != "" {
				gone = append(gone, root)
			}
		case <-wait.C:
			return gone
		case <-ctx.Done():
			return gone
		}
	}
	return gone
}

// goneRows returns the runtime ids Register may remove: of row's slot, of
// goneRoots, and of other boots.
func (r *DB) goneRows(ctx context.Context, tx *sql.Tx, row fleet.Row, goneRoots []string) ([]string, error) {
	args := []any{row.RuntimeID, row.RepositoryID, row.Profile, row.BootID}
	for _, root := range goneRoots {
		args = append(args, root)
	}
	rows, err := tx.QueryContext(ctx, `SELECT runtime_id, pid, process_start, boot_id, namespaces FROM server_runtimes
		WHERE runtime_id <> ? AND ((repository_id = ? AND profile = ?) OR boot_id <> ?
		OR repository_root IN (`+strings.TrimSuffix(strings.Repeat("?, ", len(goneRoots)), ", ")+`))`, args...)
	if err != nil {
		return nil, fmt.Errorf("reading the rows to prune: %w", err)
	}
	defer rows.Close()
	var gone []string
	for rows.Next() {
		var id string
		var pid, start, boot, ns any // as stored: a row written by hand may hold anything
		if err := rows.Scan(&id, &pid, &start, &boot, &ns); err != nil {
			continue // no runtime id: nothing to remove it by
		}
		// read each as a scan into its type reads it (text, a blob of
		// digits), each on its own
		var p, s sql.NullInt64
		var b, n sql.NullString
		_, _ = b.Scan(boot), n.Scan(ns)
		readable := p.Scan(pid) == nil && s.Scan(start) == nil && p.Valid && s.Valid
		switch {
		case r.Env.OfAnotherBoot(b.String): // nothing of it runs, whatever else it holds
			gone = append(gone, id)
		case !readable: // a row that cannot be read is not provably gone: it stays
		case !fleet.SamePIDNamespace(n.String, row.PIDNamespace): // its pid names another process here
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
// and -shm companions beside an existing file when they are missing; a
// write cut off, its writer killed, is rolled back, as any SQLite client
// that may write does before it reads; the database file itself is never
// written otherwise.) A path that cannot be read is an error: the
// inventory is then incomplete, never empty. Rows that cannot be read (a column of another
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
	}
	if err := anothersFile(path, fi); err != nil {
		return nil, err
	}
	if fi.Size() == 0 {
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
	switch { // not migrated yet: a reader cannot, and no row knows what it was made without
	case version < versionWithDirectory:
		selected = columnsOfVersion1 + `, '' AS repository_dir, '' AS namespaces`
	case version < versionWithNamespaces:
		selected = columnsOfVersion1 + `, repository_dir, '' AS namespaces`
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
		r.RegisteredAt.UTC().Format(time.RFC3339Nano), int64(r.RegisteredTicks), r.RepositoryDir, r.PIDNamespace}
}

func scanRow(rows *sql.Rows) (fleet.Row, error) {
	var r fleet.Row
	var parentPID, parentStart, pid, start, ticks int64
	var at string
	err := rows.Scan(&r.RuntimeID, &r.Profile, &r.Role, &r.State, &r.RepositoryRoot, &r.RepositoryID,
		&r.Cohort, &r.CohortSource, &parentPID, &parentStart,
		&r.StartupRevision, &r.ModuleVersion, &r.VCSRevision, &r.Transport, &r.URL,
		&pid, &start, &r.BootID, &r.Executable, &at, &ticks, &r.RepositoryDir, &r.PIDNamespace)
	if err != nil {
		return fleet.Row{}, err
	}
	r.ParentPID, r.ParentStart = int(parentPID), uint64(parentStart)
	r.PID, r.ProcessStart, r.RegisteredTicks = int(pid), uint64(start), uint64(ticks)
	r.RegisteredAt, _ = time.Parse(time.RFC3339Nano, at) // informational; zero when unparsable
	return r, nil
}
