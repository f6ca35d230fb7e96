package parquetenc

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
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
	lean, ref := encodeBoth(t, rec, compress.Codecs.Zstd, 2048, 700, intsDelta)
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

// At the default zstd level, pages under 1 KiB are stored rather than
// compressed, and DuckDB must read them; bit-packed pages are stored only
// while zstd does not shrink the column's, so that a column whose deltas
// repeat stays compressed. Both columns' values follow a pattern zstd
// shrinks, so that stored and compressed pages differ in size.
func TestDuckDBReadsStoredPages(t *testing.T) {
	if testing.Short() {
		t.Skip("DuckDB check")
	}
	count := duckCounter(t)
	dir := t.TempDir()
	for _, c := range []struct {
		name       string
		rows       int
		pageSize   int64
		level      int
		wantStored bool
	}{
		{"tiny page", 400, 1 << 20, 1, true},
		{"tiny page at level 3", 400, 1 << 20, 3, false},
		{"repeating deltas, many pages", 20000, 4 << 10, 1, false},
	} {
		b := array.NewInt64Builder(memory.DefaultAllocator)
		var want int64
		for i := range c.rows {
			v := int64(i*40_000 + (i%5)*7_001) // no value repeats: DELTA_BINARY_PACKED, not a dictionary
			b.Append(v)
			want += v
		}
		col := b.NewArray()
		rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil), []arrow.Array{col}, int64(c.rows))
		props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithCompressionLevel(c.level),
			parquet.WithStats(true), parquet.WithEncoding(parquet.Encodings.DeltaBinaryPacked), parquet.WithDictionaryDefault(false),
			parquet.WithDataPageSize(c.pageSize))
		path := filepath.Join(dir, fmt.Sprintf("%d.parquet", c.rows*10+c.level))
		if err := os.WriteFile(path, encodeLeanWith(t, rec, props), 0o644); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		col.Release()
		if got := count(`SELECT sum(v)::BIGINT FROM read_parquet(?)`, path); got != want {
			t.Fatalf("%s: DuckDB sums the column to %d, wrote %d", c.name, got, want)
		}
		if n := count(`SELECT count(*) FROM parquet_metadata(?) WHERE encodings LIKE '%DELTA_BINARY_PACKED%'`, path); n != 1 {
			t.Fatalf("%s: %d DELTA_BINARY_PACKED chunks, want the one", c.name, n)
		}
		compressed := count(`SELECT total_compressed_size FROM parquet_metadata(?)`, path)
		uncompressed := count(`SELECT total_uncompressed_size FROM parquet_metadata(?)`, path)
		if stored := compressed > uncompressed; stored != c.wantStored {
			t.Errorf("%s: chunk of %d bytes compressed, %d uncompressed: stored %v, want %v", c.name, compressed, uncompressed, stored, c.wantStored)
		}
	}
}
