package runtimes

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
	"github.com/majordomus-mcp/majordomus-mcp/registry/proc"
)

// A registry an earlier release made (schema version 1, no directory ids)
// is read as it is, each row's directory unknown, until a server of this
// release registers: that upgrades it, and keeps the rows it had.
func TestARegistryOfTheFirstSchemaIsReadThenUpgraded(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(testtemp.Dir(t), "registry.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	db := openTest(t, path)
	if err := migrate(ctx, db, migrations[:1]); err != nil {
		t.Fatal(err)
	}
	old := testRow("a", "default", 10)
	args := rowArgs(old)
	if _, err := db.ExecContext(ctx, `INSERT INTO server_runtimes (`+columnsOfVersion1+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, args[:len(args)-2]...); err != nil {
		t.Fatal(err)
	}
	db.Close()

	if rows := readRows(t, path); len(rows) != 1 || !reflect.DeepEqual(rows[0], old) {
		t.Fatalf("the first schema's rows read as %+v, want %+v", rows, old)
	}
	if got := schemaOf(t, path).version; got != 1 {
		t.Fatalf("reading upgraded the registry to version %d", got)
	}

	moved := testRow("b", "review", 11)
	moved.RepositoryDir, moved.PIDNamespace = "2049:11", "pid:[4026531836]"
	register(t, path, allAlive, moved)
	if got := schemaOf(t, path).version; got != SchemaVersion {
		t.Fatalf("a registration left the schema at version %d, want %d", got, SchemaVersion)
	}
	rows := readRows(t, path)
	if len(rows) != 2 || !reflect.DeepEqual(rows[0], old) || !reflect.DeepEqual(rows[1], moved) {
		t.Fatalf("rows after the upgrade: %+v", rows)
	}
}

// A row whose pid is text (the database edited by hand) cannot be read as
// a row: every other row still is, the reading says which one it could
// not read, and a server still registers beside it, which leaves it be
// unless it is of another boot (until 2026-12-06 one of another boot
// stayed for ever, named by every inventory).
func TestARowThatCannotBeReadHidesNoOther(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(testtemp.Dir(t), "registry.db")
	good := testRow("a", "default", 10)
	old := testRow("old", "other", 13)
	old.BootID = "boot-0"
	blob := testRow("blob", "default", 14)
	register(t, path, allAlive, good, testRow("garbled", "default", 11), blob, old)
	db := openTest(t, path)
	for _, edit := range []string{
		`UPDATE server_runtimes SET pid = 'eleven' WHERE runtime_id IN ('garbled', 'old')`,
		`UPDATE server_runtimes SET boot_id = CAST('boot-0' AS BLOB) WHERE runtime_id = 'old'`,
		`UPDATE server_runtimes SET pid = CAST('14' AS BLOB) WHERE runtime_id = 'blob'`, // digits: read as a number
	} {
		if _, err := db.ExecContext(ctx, edit); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	rows, err := Read(ctx, path)
	if err == nil || !strings.Contains(err.Error(), `"garbled"`) || !strings.Contains(err.Error(), `"old"`) {
		t.Errorf("reading: %v; want an error naming the rows garbled and old", err)
	}
	if len(rows) != 2 || !reflect.DeepEqual(rows[0], good) || rows[1].RuntimeID != "blob" {
		t.Fatalf("rows read beside it: %+v", rows)
	}

	// A registration prunes what it can tell is gone: a's and blob's
	// processes, and old's row, of another boot, unreadable as it is; not
	// garbled's, of this boot, whose process cannot be told.
	next := testRow("b", "default", 12)
	register(t, path, proc.Env{Signal0: func(int) error { return syscall.ESRCH }, BootID: func() (string, error) { return "boot-1", nil }}, next)
	rows, err = Read(ctx, path)
	if len(rows) != 1 || rows[0].RuntimeID != "b" {
		t.Fatalf("after a registration, rows %+v; want b's (a's process gone), and garbled's still unread", rows)
	}
	if err == nil || !strings.Contains(err.Error(), `row "garbled"`) || strings.Contains(err.Error(), `"old"`) {
		t.Errorf("after a registration: %v; want garbled's row still there, and old's (another boot's) gone", err)
	}
}
