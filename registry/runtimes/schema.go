package runtimes

import (
	"context"
	"database/sql"
	"fmt"
)

// SchemaVersion is the runtime registry's schema version, kept in the
// database's user_version. It is the version of the last entry of
// [migrations]; tests pin the schema through this constant, never through a
// literal, so that adding a migration is one change in one place.
const SchemaVersion = 3

// versionWithDirectory is the first schema version whose rows know their
// root directory's id (repository_dir).
const versionWithDirectory = 2

// versionWithNamespaces is the first schema version whose rows know their
// process's pid namespace (namespaces, proc.PIDNamespace): a pid of
// another pid namespace names another process here.
const versionWithNamespaces = 3

// migration brings a database from version-1 to version. Its statements are
// additive only (a new table, index or column, never a drop, rename or
// rewrite), so a binary that knows an older version still reads and writes
// a newer database: it names the columns it uses and new columns have
// defaults.
type migration struct {
	version    int
	statements []string
}

// migrations are every schema step, oldest first.
var migrations = []migration{
	{1, []string{
		`CREATE TABLE IF NOT EXISTS server_runtimes (
			runtime_id       TEXT PRIMARY KEY,
			profile          TEXT NOT NULL,
			role             TEXT NOT NULL DEFAULT '',
			state            TEXT NOT NULL,
			repository_root  TEXT NOT NULL,
			repository_id    TEXT NOT NULL,
			cohort           TEXT NOT NULL DEFAULT '',
			cohort_source    TEXT NOT NULL DEFAULT 'unknown',
			parent_pid       INTEGER NOT NULL DEFAULT 0,
			parent_start     INTEGER NOT NULL DEFAULT 0,
			startup_revision TEXT NOT NULL DEFAULT '',
			module_version   TEXT NOT NULL DEFAULT '',
			vcs_revision     TEXT NOT NULL DEFAULT '',
			transport        TEXT NOT NULL,
			url              TEXT NOT NULL,
			pid              INTEGER NOT NULL,
			process_start    INTEGER NOT NULL,
			boot_id          TEXT NOT NULL,
			executable       TEXT NOT NULL DEFAULT '',
			registered_at    TEXT NOT NULL,
			registered_ticks INTEGER NOT NULL,
			state_changed_at TEXT NOT NULL DEFAULT ''
		)`,
		`CREATE INDEX IF NOT EXISTS server_runtimes_slot ON server_runtimes (repository_id, profile)`,
	}},
	{versionWithDirectory, []string{ // the root directory's id (registry.DirectoryID): a checkout moved or made again is told apart
		`ALTER TABLE server_runtimes ADD COLUMN repository_dir TEXT NOT NULL DEFAULT ''`,
	}},
	{versionWithNamespaces, []string{ // proc.PIDNamespace(): a container's server is not judged by the host's pids
		`ALTER TABLE server_runtimes ADD COLUMN namespaces TEXT NOT NULL DEFAULT ''`,
	}},
}

// migrate applies the steps the database has not had yet, in one immediate
// transaction: of several processes opening a new or old registry at once,
// one migrates and the others, waiting on the write lock, then find nothing
// left to do. Running it again changes nothing. A database newer than steps
// is left as it is.
func migrate(ctx context.Context, db *sql.DB, steps []migration) error {
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE, through _txlock
	if err != nil {
		return fmt.Errorf("migrating the registry: %w", err)
	}
	defer tx.Rollback()
	var have int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&have); err != nil {
		return fmt.Errorf("reading the registry's schema version: %w", err)
	}
	changed := false
	for _, m := range steps {
		if m.version <= have {
			continue
		}
		for _, stmt := range m.statements {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("migrating the registry to version %d: %w", m.version, err)
			}
		}
		// PRAGMA takes no parameters; m.version is an int of ours.
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.version)); err != nil {
			return fmt.Errorf("recording the registry's schema version %d: %w", m.version, err)
		}
		changed = true
	}
	if !changed {
		return nil // nothing written: the rollback ends the transaction
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrating the registry: %w", err)
	}
	return nil
}
