package runtimes

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testchild"
)

// TestMain runs the test binary in a child's role when it is one: "read"
// reads the registry at $REGISTRY and says how many rows, or why not;
// "write-in-journal" writes into it as another program in rollback-journal
// mode does, says "writing" with the write under way and its pages in the
// file, and waits to be killed.
func TestMain(m *testing.M) {
	switch testchild.Role() {
	case "read":
		rows, err := Read(context.Background(), os.Getenv("REGISTRY"))
		if err != nil {
			fmt.Println("error:", err)
		} else {
			fmt.Println("rows:", len(rows))
		}
		os.Exit(0)
	case "write-in-journal":
		if err := writeInJournal(os.Getenv("REGISTRY")); err != nil {
			fmt.Println("error:", err)
			os.Exit(0)
		}
		fmt.Println("writing")
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// writeInJournal begins a write into the registry at path in
// rollback-journal mode that spills past its cache into the file, and
// leaves it under way.
func writeInJournal(path string) error {
	db, err := sql.Open("sqlite", dsn(path, ""))
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(1)
	for _, stmt := range []string{
		"PRAGMA journal_mode=DELETE", "PRAGMA cache_size=1", "BEGIN IMMEDIATE",
		"UPDATE server_runtimes SET runtime_id = 'phantom'", "CREATE TABLE pad(x)",
	} {
		if _, err := db.Exec(stmt); err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	for range 2000 {
		if _, err := db.Exec("INSERT INTO pad VALUES (?)", strings.Repeat("x", 500)); err != nil {
			return err
		}
	}
	return nil
}
