package tables

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go/table"
)

// localCatalogs are the catalogs that need no server, each in a
// test's folder: the SQL one on SQLite and the hadoop one.
func localCatalogs() map[string]func(dir string) Config {
	return map[string]func(dir string) Config{
		"sql-sqlite": func(dir string) Config {
			return Config{Kind: SQL, URI: "sqlite://" + filepath.Join(dir, "catalog.db"), Warehouse: "file://" + filepath.Join(dir, "wh")}
		},
		"hadoop": func(dir string) Config {
			return Config{Kind: Hadoop, Warehouse: "file://" + filepath.Join(dir, "wh")}
		},
	}
}

// concurrentCatalogs are the catalogs two instances share in a test: the
// fast local ones, and PostgreSQL when the tests have one.
func concurrentCatalogs() map[string]func(dir string) Config {
	cats := localCatalogs()
	if dsn := os.Getenv("EXPORTER_TEST_POSTGRES_DSN"); dsn != "" {
		name := "c" + strconv.FormatInt(time.Now().UnixNano(), 36) // the database outlives the test
		cats["sql-postgres"] = func(dir string) Config {
			return Config{Kind: SQL, Name: name, URI: dsn, Warehouse: "file://" + filepath.Join(dir, "wh")}
		}
	}
	return cats
}

// TestTwoInstancesCreateAndEvolveTablesAtOnce: two publishers (two
// instances of one consumer group, each with its own source partition)
// start at the same moment on tables that do not exist yet, so both try
// to create each one, then both meet the same DDL (version 2 drops NAME,
// adds EMAIL, widens AMOUNT) and update the schema at once, publishing a
// round after each step. Every file must then be in its table once, carry
// the field IDs the table's schema gives its columns by name, and read
// back through the catalog with the values it was written with.
func TestTwoInstancesCreateAndEvolveTablesAtOnce(t *testing.T) {
	for name, mk := range concurrentCatalogs() {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			ctx := context.Background()
			cfg := mk(dir)
			pubs := make([]*Publisher, 2)
			for i := range pubs {
				p, err := Open(ctx, cfg, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close()
				pubs[i] = p
			}
			tableNames := []string{"SALES.ORDERS", "SALES.ITEMS", "HR.EMPLOYEES"}
			day := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
			var (
				mu    sync.Mutex
				files = map[string][]DataFile{} // by table, every file published
				wg    sync.WaitGroup
				start = make(chan struct{})
			)
			for i, p := range pubs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					run := fmt.Sprintf("run-%d", i)
					partition := fmt.Sprintf("topic/%d", i)
					for version := 1; version <= 2; version++ {
						var round []DataFile
						for ti, name := range tableNames {
							v, err := p.PrepareVersion(ctx, TableVersion{Table: name, Version: version, Schema: sourceSchema(version)})
							if err != nil {
								t.Errorf("%s: prepare %s version %d: %v", run, name, version, err)
								return
							}
							// ids unique per file: instance, version, table.
							base := int64(1000*(i+1) + 100*version + 10*ti)
							f := writeFile(t, dir, fmt.Sprintf("data/%s/v%d/%s.parquet", name, version, run), v.Schema, version,
								[]int64{base, base + 1}, []time.Time{day, day}, base)
							f.Table, f.SourcePartition = name, partition
							round = append(round, f)
						}
						if _, err := p.Publish(ctx, Round{RunID: run, RoundID: strconv.Itoa(version), Files: round}); err != nil {
							t.Errorf("%s: publish round %d: %v", run, version, err)
							return
						}
						mu.Lock()
						for _, f := range round {
							files[f.Table] = append(files[f.Table], f)
						}
						mu.Unlock()
					}
				}()
			}
			close(start)
			wg.Wait()
			if t.Failed() {
				return
			}
			for _, name := range tableNames {
				ident, err := pubs[0].Identifier(name)
				if err != nil {
					t.Fatal(err)
				}
				tbl, err := pubs[0].Catalog().LoadTable(ctx, ident)
				if err != nil {
					t.Fatal(err)
				}
				checkTableFiles(t, tbl, files[name])
				checkFileFieldIDs(t, tbl, files[name])
				checkTableValues(t, tbl, files[name])
			}
		})
	}
}

// checkTableFiles: the table's current snapshot names each of want once,
// and nothing else.
func checkTableFiles(t *testing.T, tbl *table.Table, want []DataFile) {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, task := range tasks {
		seen[task.File.FilePath()]++
	}
	for _, f := range want {
		if seen[f.Location] != 1 {
			t.Errorf("%s: file %s is in the table %d times, want once", strings.Join(tbl.Identifier(), "."), f.Location, seen[f.Location])
		}
	}
	if len(seen) != len(want) {
		t.Errorf("%s: the table holds %d files, want the %d published", strings.Join(tbl.Identifier(), "."), len(seen), len(want))
	}
}

// checkFileFieldIDs: every column of every file carries the field ID that
// the Iceberg schema of the file's version gives the column's name.
func checkFileFieldIDs(t *testing.T, tbl *table.Table, files []DataFile) {
	t.Helper()
	for _, f := range files {
		sc, ok := versionSchema(tbl, f.Version)
		if !ok {
			t.Errorf("%s has no schema for version %d", strings.Join(tbl.Identifier(), "."), f.Version)
			continue
		}
		for col, id := range parquetFieldIDs(t, strings.TrimPrefix(f.Location, "file://")) {
			want, ok := sc.FindFieldByName(col)
			if !ok {
				t.Errorf("%s: column %s is not in the table's schema %d of version %d", f.Location, col, sc.ID, f.Version)
				continue
			}
			if want.ID != id {
				t.Errorf("%s: column %s has field id %d, the table's schema %d (version %d) says %d", f.Location, col, id, sc.ID, f.Version, want.ID)
			}
		}
	}
}

// parquetFieldIDs reads the top-level field IDs of a Parquet file's
// footer, by column name.
func parquetFieldIDs(t *testing.T, path string) map[string]int {
	t.Helper()
	rd, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	sc, err := pqarrow.FromParquet(rd.MetaData().Schema, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, f := range sc.Fields() {
		v, ok := f.Metadata.GetValue(table.ArrowParquetFieldIDKey)
		if !ok {
			t.Errorf("%s: column %s has no field id", path, f.Name)
			continue
		}
		out[f.Name], _ = strconv.Atoi(v)
	}
	return out
}

// checkTableValues scans the table through iceberg-go, which matches a
// file's columns to the table's by field ID: each row must come back with
// the values writeFile derived from its ID (a file carrying another
// column's ID reads as nulls or as the other column's values).
func checkTableValues(t *testing.T, tbl *table.Table, files []DataFile) {
	t.Helper()
	at, err := tbl.Scan().ToArrowTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	version := map[int64]int{} // id → the version of its file
	for _, f := range files {
		for id := f.FirstOffset; id <= f.LastOffset; id++ {
			version[id] = f.Version
		}
	}
	tr := array.NewTableReader(at, -1)
	defer tr.Release()
	seen := map[int64]int{}
	for tr.Next() {
		rec := tr.RecordBatch()
		col := func(name string) arrow.Array {
			idx := rec.Schema().FieldIndices(name)
			if len(idx) != 1 {
				t.Fatalf("%s: scan has no column %s", strings.Join(tbl.Identifier(), "."), name)
			}
			return rec.Column(idx[0])
		}
		ids, offsets, emails := col("ID").(*array.Int64), col("src_offset").(*array.Int64), col("EMAIL").(*array.String)
		amounts := col("AMOUNT").(*array.Decimal128)
		for r := 0; r < int(rec.NumRows()); r++ {
			id := ids.Value(r)
			seen[id]++
			if offsets.Value(r) != id || amounts.IsNull(r) || amounts.Value(r).LowBits() != uint64(id*100) {
				t.Errorf("%s: row ID %d reads src_offset %d, AMOUNT %v; want %d and %d cents", strings.Join(tbl.Identifier(), "."),
					id, offsets.Value(r), amounts.Value(r), id, id*100)
			}
			wantEmail := version[id] == 2
			if wantEmail && (emails.IsNull(r) || emails.Value(r) != fmt.Sprintf("%d@example.com", id)) || !wantEmail && !emails.IsNull(r) {
				t.Errorf("%s: row ID %d (version %d) reads EMAIL %q (null %v)", strings.Join(tbl.Identifier(), "."), id, version[id], emails.Value(r), emails.IsNull(r))
			}
		}
	}
	for id := range version {
		if seen[id] != 1 {
			t.Errorf("%s: row ID %d read %d times, want once", strings.Join(tbl.Identifier(), "."), id, seen[id])
		}
	}
	if len(seen) != len(version) {
		t.Errorf("%s: %d distinct rows read, want %d", strings.Join(tbl.Identifier(), "."), len(seen), len(version))
	}
}
