package tables

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestSQLCatalogOpensConcurrentlyOnANewDatabase: exporters started at
// once against a PostgreSQL database that has no catalog tables yet each
// create them (CREATE TABLE IF NOT EXISTS), and PostgreSQL lets all but
// one of two racing creations fail on its own catalog's unique index
// (SQLSTATE 23505). An instance must not fail to start for that: it opens
// again and finds the tables made.
func TestSQLCatalogOpensConcurrentlyOnANewDatabase(t *testing.T) {
	dsn := os.Getenv("EXPORTER_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("EXPORTER_TEST_POSTGRES_DSN is not set (source scripts/postgres.sh and run postgres_start)")
	}
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	ctx := context.Background()
	for round := range 5 {
		name := "open" + strconv.FormatInt(time.Now().UnixNano(), 36)
		if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { admin.ExecContext(ctx, fmt.Sprintf("DROP DATABASE %s WITH (FORCE)", name)) })
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		u.Path = "/" + name
		warehouse := "file://" + filepath.Join(t.TempDir(), "warehouse")
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Go(func() {
				p, err := Open(ctx, Config{Kind: SQL, Name: "c", URI: u.String(), Warehouse: warehouse}, nil)
				if err != nil {
					errs[i] = err
					return
				}
				errs[i] = p.Close()
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: instance %d of 8 opening the catalog of a new database at once: %v", round, i, err)
			}
		}
	}
}
