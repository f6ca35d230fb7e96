package writer

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/duckq"
)

// DuckDB reads the lean encoder's files as it reads pqarrow's: the same
// rows of every shape, and row-group pruning on their statistics finds
// every row a filter asks for.
func TestDuckDBReadsLeanFilesAsPqarrows(t *testing.T) {
	if testing.Short() {
		t.Skip("DuckDB check")
	}
	r := rand.New(rand.NewPCG(5, 5))
	rec := randomBatch(t, r, 6000, 0.15, 300)
	defer rec.Release()
	lean, ref := encodeBoth(t, rec, compress.Codecs.Zstd, 2048, 700, IntEncodingDelta)
	dir := t.TempDir()
	leanPath, refPath := filepath.Join(dir, "lean.parquet"), filepath.Join(dir, "ref.parquet")
	if err := os.WriteFile(leanPath, lean, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(refPath, ref, 0o644); err != nil {
		t.Fatal(err)
	}
	count := duckCounter(t)
	if n := count(`SELECT count(*) FROM read_parquet(?)`, leanPath); n != rec.NumRows() {
		t.Fatalf("DuckDB reads %d rows from the lean file, wrote %d", n, rec.NumRows())
	}
	for _, pair := range [][2]string{{leanPath, refPath}, {refPath, leanPath}} {
		if n := count(`SELECT count(*) FROM (SELECT * FROM read_parquet(?) EXCEPT ALL SELECT * FROM read_parquet(?))`, pair[0], pair[1]); n != 0 {
			t.Fatalf("%d rows of %s are not in %s", n, filepath.Base(pair[0]), filepath.Base(pair[1]))
		}
	}
	// Every chunk's min and max as DuckDB reads them, empty strings
	// included, are pqarrow's; the list's elements are left out, where
	// arrow-go's are not always right (checkListStats).
	const stats = `SELECT row_group_id, path_in_schema, stats_min_value, stats_max_value, stats_null_count
		FROM parquet_metadata(?) WHERE path_in_schema NOT LIKE 'list%'`
	for _, pair := range [][2]string{{leanPath, refPath}, {refPath, leanPath}} {
		if n := count(`SELECT count(*) FROM (`+stats+` EXCEPT ALL `+stats+`)`, pair[0], pair[1]); n != 0 {
			t.Errorf("%d column chunks of %s have statistics that %s does not", n, filepath.Base(pair[0]), filepath.Base(pair[1]))
		}
	}
	if n := count(`SELECT count(*) FROM parquet_metadata(?) WHERE encodings LIKE '%DELTA_BINARY_PACKED%'`, leanPath); n == 0 {
		t.Error("no chunk is DELTA_BINARY_PACKED: the batch no longer tests DuckDB reading it")
	}
	if n := count(`SELECT count(*) FROM parquet_metadata(?) WHERE stats_min_value = ''`, leanPath); n == 0 {
		t.Error("no chunk has the empty string for its minimum: the batch no longer tests it")
	}
	// Filters prune row groups by min/max: wrong statistics lose rows.
	for _, q := range []string{
		`SELECT count(*) FROM read_parquet(?) WHERE req_i = (SELECT max(req_i) FROM read_parquet(?))`,
		`SELECT count(*) FROM read_parquet(?) WHERE s = (SELECT min(s) FROM read_parquet(?))`,
		`SELECT count(*) FROM read_parquet(?) WHERE d38 = (SELECT min(d38) FROM read_parquet(?))`,
		`SELECT count(*) FROM read_parquet(?) WHERE f > 1e300 OR f = (SELECT min(f) FROM read_parquet(?))`,
		`SELECT count(*) FROM read_parquet(?) WHERE t = (SELECT max(t) FROM read_parquet(?))`,
		`SELECT count(*) FROM read_parquet(?) WHERE before.d = (SELECT min(before.d) FROM read_parquet(?))`,
	} {
		got, want := count(q, leanPath, refPath), count(q, refPath, refPath)
		if got != want || want == 0 {
			t.Errorf("%s: %d rows from the lean file, %d from pqarrow's", q, got, want)
		}
	}
}

// duckCounter opens DuckDB and returns a function that runs a count query.
func duckCounter(t *testing.T) func(q string, args ...any) int64 {
	db := duckq.OpenTB(t)
	return func(q string, args ...any) int64 {
		t.Helper()
		var n int64
		if err := db.QueryRow(q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
}
