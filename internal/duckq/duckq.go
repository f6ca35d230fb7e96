// Package duckq runs SQL on an in-memory DuckDB. Tests use it to read back
// every file the exporter writes, and tools/duckq gives the README a query
// command that needs nothing installed.
package duckq

import (
	"database/sql"
	"fmt"
	"strings"

	_ "github.com/duckdb/duckdb-go/v2" // registers the "duckdb" driver
)

// Open returns an in-memory DuckDB.
func Open() (*sql.DB, error) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, fmt.Errorf("open duckdb: %w", err)
	}
	return db, nil
}

// TB is the part of testing.TB that OpenTB needs (so that the query tool
// does not link the testing package).
type TB interface {
	Helper()
	Fatal(args ...any)
	Cleanup(func())
}

// OpenTB opens an in-memory DuckDB for a test or benchmark, fails it if
// that is impossible, and closes the database when it ends.
func OpenTB(tb TB) *sql.DB {
	tb.Helper()
	db, err := Open()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// ConvertSQL is DuckDB's one-pass conversion of a GoldenGate JSON Lines
// file to zstd Parquet, a file set per table: the yardstick the exporter's
// benchmarks measure against.
func ConvertSQL(in, dir string) string {
	return fmt.Sprintf(`COPY (SELECT * FROM read_json('%s', format='newline_delimited', maximum_object_size=16777216)
		WHERE op_type IN ('INSERT','UPDATE','DELETE','UPSERT'))
		TO '%s' (FORMAT parquet, COMPRESSION zstd, PARTITION_BY (qual_table))`, in, dir)
}

// ConvertQlikSQL is ConvertSQL for bare Qlik Replicate messages: the data
// messages, their columns as DuckDB reads them, a file set per table.
func ConvertQlikSQL(in, dir string) string {
	return fmt.Sprintf(`COPY (SELECT "schema" || '.' || "table" AS qual_table, * EXCLUDE ("schema", "table")
		FROM read_json('%s', format='newline_delimited', maximum_object_size=16777216)
		WHERE headers IS NOT NULL)
		TO '%s' (FORMAT parquet, COMPRESSION zstd, PARTITION_BY (qual_table))`, in, dir)
}

// Rows runs query and returns the column names and every row.
func Rows(db *sql.DB, query string, args ...any) ([]string, [][]any, error) {
	rows, err := db.Query(query, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, nil, err
	}
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		out = append(out, vals)
	}
	return cols, out, rows.Err()
}

// Lines renders rows as "a|b|c" strings, NULL for nil, for comparing query
// results with expected text in tests.
func Lines(rows [][]any) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		cells := make([]string, len(r))
		for j, v := range r {
			if v == nil {
				cells[j] = "NULL"
			} else {
				cells[j] = fmt.Sprint(v)
			}
		}
		out[i] = strings.Join(cells, "|")
	}
	return out
}
