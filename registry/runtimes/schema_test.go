package runtimes

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
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
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, args[:len(args)-1]...); err != nil {
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
	moved.RepositoryDir = "2049:11"
	register(t, path, allAlive, moved)
	if got := schemaOf(t, path).version; got != SchemaVersion {
		t.Fatalf("a registration left the schema at version %d, want %d", got, SchemaVersion)
	}
	rows := readRows(t, path)
	if len(rows) != 2 || !reflect.DeepEqual(rows[0], old) || !reflect.DeepEqual(rows[1], moved) {
		t.Fatalf("rows after the upgrade: %+v", rows)
	}
}
