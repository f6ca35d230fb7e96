package tables

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

var tsType = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}

// sourceSchema is a data-file schema like arrowschema builds: version 1
// has NAME and AMOUNT decimal(10,2); version 2 drops NAME, adds EMAIL and
// widens AMOUNT to decimal(12,2).
func sourceSchema(version int) *arrow.Schema {
	fields := []arrow.Field{
		{Name: "op_type", Type: arrow.BinaryTypes.String},
		{Name: "op_ts", Type: tsType},
		{Name: "pos", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "ID", Type: arrow.PrimitiveTypes.Int64, Metadata: arrow.NewMetadata([]string{"key"}, []string{"true"})},
	}
	if version == 1 {
		fields = append(fields,
			arrow.Field{Name: "NAME", Type: arrow.BinaryTypes.String, Nullable: true},
			arrow.Field{Name: "AMOUNT", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true})
	} else {
		fields = append(fields,
			arrow.Field{Name: "AMOUNT", Type: &arrow.Decimal128Type{Precision: 12, Scale: 2}, Nullable: true},
			arrow.Field{Name: "EMAIL", Type: arrow.BinaryTypes.String, Nullable: true})
	}
	fields = append(fields,
		arrow.Field{Name: "absent_columns", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		arrow.Field{Name: "src_partition", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "src_offset", Type: arrow.PrimitiveTypes.Int64})
	return arrow.NewSchema(fields, nil)
}

// writeFile writes rows with ids ids at op_ts times into a Parquet file
// of schema sc (field IDs included) and returns its DataFile, footer from
// the writer's memory.
func writeFile(t *testing.T, dir, name string, sc *arrow.Schema, version int, ids []int64, times []time.Time, firstOffset int64) DataFile {
	t.Helper()
	return writeFileWith(t, parquet.NewWriterProperties(parquet.WithStats(true)), dir, name, sc, version, ids, times, firstOffset)
}

// writeFileWith is writeFile with the Parquet writer's properties given.
func writeFileWith(t *testing.T, props *parquet.WriterProperties, dir, name string, sc *arrow.Schema, version int, ids []int64, times []time.Time, firstOffset int64) DataFile {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i, id := range ids {
		for j, f := range sc.Fields() {
			fb := b.Field(j)
			switch f.Name {
			case "op_type":
				fb.(*array.StringBuilder).Append("I")
			case "op_ts":
				fb.(*array.TimestampBuilder).Append(arrow.Timestamp(times[i].UnixMicro()))
			case "pos":
				fb.(*array.StringBuilder).Append(strconv.FormatInt(id, 10))
			case "ID":
				fb.(*array.Int64Builder).Append(id)
			case "NAME":
				fb.(*array.StringBuilder).Append(fmt.Sprintf("name-%d", id))
			case "EMAIL":
				fb.(*array.StringBuilder).Append(fmt.Sprintf("%d@example.com", id))
			case "AMOUNT":
				fb.(*array.Decimal128Builder).Append(decimal128.FromI64(id * 100))
			case "absent_columns":
				lb := fb.(*array.ListBuilder)
				lb.Append(true)
				lb.ValueBuilder().(*array.StringBuilder).Append("X")
			case "src_partition":
				fb.(*array.StringBuilder).Append("topic/0")
			case "src_offset":
				fb.(*array.Int64Builder).Append(firstOffset + int64(i))
			}
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(sc, out, props, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	footer, err := w.FileMetadata()
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return DataFile{
		Table: "SALES.ORDERS", Version: version, Location: "file://" + path, SizeBytes: st.Size(), Footer: footer,
		SourcePartition: "topic/0", FirstOffset: firstOffset, LastOffset: firstOffset + int64(len(ids)) - 1,
	}
}

func fieldIDs(t *testing.T, sc *arrow.Schema) map[string]int {
	t.Helper()
	ids := make(map[string]int)
	for _, f := range sc.Fields() {
		v, ok := f.Metadata.GetValue(table.ArrowParquetFieldIDKey)
		if !ok {
			t.Fatalf("field %s has no field id", f.Name)
		}
		ids[f.Name], _ = strconv.Atoi(v)
		if lt, ok := f.Type.(*arrow.ListType); ok {
			ev, ok := lt.ElemField().Metadata.GetValue(table.ArrowParquetFieldIDKey)
			if !ok {
				t.Fatalf("element of %s has no field id", f.Name)
			}
			ids[f.Name+".element"], _ = strconv.Atoi(ev)
		}
	}
	return ids
}

func TestPublishSQLite(t *testing.T) {
	dir := t.TempDir()
	testPublish(t, Config{Kind: SQL, URI: "sqlite://" + filepath.Join(dir, "catalog.db"), Warehouse: "file://" + filepath.Join(dir, "warehouse")}, dir)
}

func TestPublishHadoop(t *testing.T) {
	dir := t.TempDir()
	testPublish(t, Config{Kind: Hadoop, Warehouse: "file://" + filepath.Join(dir, "_iceberg")}, dir)
}

func TestPublishPostgres(t *testing.T) {
	dsn := os.Getenv("EXPORTER_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("EXPORTER_TEST_POSTGRES_DSN is not set (source scripts/postgres.sh and run postgres_start)")
	}
	dir := t.TempDir()
	// Each run gets its own catalog name: the database outlives the test.
	testPublish(t, Config{Kind: SQL, Name: "t" + strconv.FormatInt(time.Now().UnixNano(), 36), URI: dsn, Warehouse: "file://" + filepath.Join(dir, "warehouse")}, dir)
}

func testPublish(t *testing.T, cfg Config, dir string) {
	ctx := context.Background()
	p, err := Open(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	v1, err := p.PrepareVersion(ctx, TableVersion{Table: "SALES.ORDERS", Version: 1, Schema: sourceSchema(1)})
	if err != nil {
		t.Fatal(err)
	}
	ids1 := fieldIDs(t, v1.Schema)
	if fmt.Sprint(v1.Identifier) != "[SALES ORDERS]" {
		t.Fatalf("identifier %v, want [SALES ORDERS]", v1.Identifier)
	}
	day1 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	f1 := writeFile(t, dir, "data/SALES.ORDERS/schema_version=1/dt=2026-03-01/part-1.parquet", v1.Schema, 1,
		[]int64{1, 2, 3}, []time.Time{day1, day1.Add(time.Minute), day1.Add(time.Hour)}, 0)
	res, err := p.Publish(ctx, Round{RunID: "run-a", RoundID: "1", Files: []DataFile{f1}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Already {
		t.Fatalf("round 1: %+v", res)
	}

	v2, err := p.PrepareVersion(ctx, TableVersion{Table: "SALES.ORDERS", Version: 2, Schema: sourceSchema(2)})
	if err != nil {
		t.Fatal(err)
	}
	ids2 := fieldIDs(t, v2.Schema)
	for _, col := range []string{"op_type", "op_ts", "ID", "AMOUNT", "absent_columns", "absent_columns.element", "src_offset"} {
		if ids1[col] != ids2[col] {
			t.Errorf("column %s: field id %d in version 1, %d in version 2", col, ids1[col], ids2[col])
		}
	}
	maxID := 0
	for _, id := range ids1 {
		maxID = max(maxID, id)
	}
	if ids2["EMAIL"] <= maxID {
		t.Errorf("EMAIL got field id %d, want a new one above version 1's %d", ids2["EMAIL"], maxID)
	}
	if v2.SchemaID == v1.SchemaID {
		t.Errorf("version 2 has schema id %d like version 1", v2.SchemaID)
	}
	again, err := p.PrepareVersion(ctx, TableVersion{Table: "SALES.ORDERS", Version: 1, Schema: sourceSchema(1)})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(fieldIDs(t, again.Schema)) != fmt.Sprint(ids1) || again.SchemaID != v1.SchemaID {
		t.Errorf("version 1 prepared again: schema %d ids %v, want %d %v", again.SchemaID, fieldIDs(t, again.Schema), v1.SchemaID, ids1)
	}

	day2 := day1.AddDate(0, 0, 1)
	f2 := writeFile(t, dir, "data/SALES.ORDERS/schema_version=2/dt=2026-03-02/part-2.parquet", v2.Schema, 2,
		[]int64{4, 5}, []time.Time{day2, day2.Add(time.Second)}, 3)
	round2 := Round{RunID: "run-a", RoundID: "2", Files: []DataFile{f2}}
	res2, err := p.Publish(ctx, round2)
	if err != nil {
		t.Fatal(err)
	}
	// A retry publishes the round again: the table already holds it.
	res3, err := p.Publish(ctx, round2)
	if err != nil {
		t.Fatal(err)
	}
	if !res3[0].Already || res3[0].SnapshotID != res2[0].SnapshotID {
		t.Fatalf("round 2 published again: %+v, first time %+v", res3, res2)
	}
	tbl, err := p.Catalog().LoadTable(ctx, v1.Identifier)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tbl.Metadata().Snapshots()); n != 2 {
		t.Fatalf("%d snapshots, want 2 (one per round)", n)
	}
	if s := RoundSnapshot(tbl, "run-a", "2"); s == nil || s.SnapshotID != res2[0].SnapshotID {
		t.Errorf("RoundSnapshot(round 2) = %v, want snapshot %d", s, res2[0].SnapshotID)
	}
	if s := RoundSnapshot(tbl, "run-b", "2"); s != nil {
		t.Errorf("RoundSnapshot(another run's round 2) = snapshot %d, want none", s.SnapshotID)
	}
	cur := tbl.CurrentSnapshot()
	want := map[string]string{SummaryRunID: "run-a", SummaryRoundID: "2", SummaryOffsets: `{"topic/0":{"first":3,"last":4}}`, "added-records": "2", "added-data-files": "1"}
	for k, v := range want {
		if got := cur.Summary.Properties[k]; got != v {
			t.Errorf("snapshot summary %s = %q, want %q", k, got, v)
		}
	}
	spec := tbl.Spec()
	if got := spec.Field(0).Transform.String(); got != "day" {
		t.Errorf("partition transform %s, want day", got)
	}

	rows, amounts, emails := scan(t, tbl, 0)
	if rows != 5 || amounts != 1500 || emails != 2 {
		t.Errorf("current snapshot: %d rows, AMOUNT sum %d, %d EMAILs; want 5, 1500, 2", rows, amounts, emails)
	}
	first := tbl.Metadata().Snapshots()[0].SnapshotID
	if rows, _, _ := scan(t, tbl, first); rows != 3 {
		t.Errorf("round 1's snapshot: %d rows, want 3", rows)
	}
	filtered, err := tbl.Scan(table.WithRowFilter(iceberg.GreaterThanEqual(iceberg.Reference("op_ts"), day2.UnixMicro()))).PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(filtered) != 1 || filtered[0].File.FilePath() != f2.Location {
		t.Errorf("op_ts >= day 2 plans %d files, want only %s", len(filtered), f2.Location)
	}

	// A file whose op_ts spans two days has no day(op_ts) partition.
	f3 := writeFile(t, dir, "data/SALES.ORDERS/schema_version=2/dt=2026-03-02/part-3.parquet", v2.Schema, 2,
		[]int64{6, 7}, []time.Time{day2, day2.AddDate(0, 0, 1)}, 5)
	if _, err := p.Publish(ctx, Round{RunID: "run-a", RoundID: "3", Files: []DataFile{f3}}); err == nil {
		t.Error("a file spanning two days of op_ts was published")
	}
}

// scan reads the table (at snapshot, or the current one for 0) through
// iceberg-go and returns the row count, the sum of AMOUNT in cents and
// the number of non-null EMAILs.
func scan(t *testing.T, tbl *table.Table, snapshot int64) (rows, amountCents int64, emails int) {
	t.Helper()
	var opts []table.ScanOption
	if snapshot != 0 {
		opts = append(opts, table.WithSnapshotID(snapshot))
	}
	at, err := tbl.Scan(opts...).ToArrowTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	rows = at.NumRows()
	for i := 0; i < int(at.NumCols()); i++ {
		col := at.Column(i)
		for _, chunk := range col.Data().Chunks() {
			switch col.Name() {
			case "AMOUNT":
				a := chunk.(*array.Decimal128)
				for j := 0; j < a.Len(); j++ {
					amountCents += int64(a.Value(j).LowBits())
				}
			case "EMAIL":
				emails += chunk.Len() - chunk.NullN()
			}
		}
	}
	return rows, amountCents, emails
}

// TestOldMetadataFilesAreDeleted: a table the exporter creates deletes,
// at each commit, the metadata files its metadata log no longer lists,
// so that a round a minute does not leave a file per table a minute
// forever; a table created without the setting gets it with its next
// round. The log is cut to two entries here (Iceberg's default keeps
// 100); time travel, which reads snapshots, still reaches every round.
// ordersTable opens a publisher on cfg (closed when the test ends) and
// creates SALES.ORDERS with schema version 1.
func ordersTable(t *testing.T, cfg Config) (*Publisher, Prepared, *table.Table) {
	t.Helper()
	ctx := context.Background()
	p, err := Open(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	v, err := p.PrepareVersion(ctx, TableVersion{Table: "SALES.ORDERS", Version: 1, Schema: sourceSchema(1)})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := p.LoadTable(ctx, "SALES.ORDERS")
	if err != nil {
		t.Fatal(err)
	}
	return p, v, tbl
}

func TestOldMetadataFilesAreDeleted(t *testing.T) {
	for name, mk := range localCatalogs() {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			ctx := context.Background()
			p, v, tbl := ordersTable(t, mk(dir))
			if got := tbl.Properties()[table.MetadataDeleteAfterCommitEnabledKey]; got != "true" {
				t.Fatalf("%s = %q on a new table, want true", table.MetadataDeleteAfterCommitEnabledKey, got)
			}
			// As a table an earlier version created: without the
			// property, which its next round sets.
			txn := tbl.NewTransaction()
			if err := txn.SetProperties(iceberg.Properties{table.MetadataPreviousVersionsMaxKey: "2"}); err != nil {
				t.Fatal(err)
			}
			if err := txn.RemoveProperties([]string{table.MetadataDeleteAfterCommitEnabledKey}); err != nil {
				t.Fatal(err)
			}
			if _, err := txn.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			p.Forget("SALES.ORDERS") // committed behind the publisher's back
			day := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
			const rounds = 6
			for i := 1; i <= rounds; i++ {
				f := writeFile(t, dir, fmt.Sprintf("data/part-%d.parquet", i), v.Schema, 1, []int64{int64(i)}, []time.Time{day}, int64(i))
				if _, err := p.Publish(ctx, Round{RunID: "run", RoundID: strconv.Itoa(i), Files: []DataFile{f}}); err != nil {
					t.Fatal(err)
				}
			}
			tbl, err := p.LoadTable(ctx, "SALES.ORDERS")
			if err != nil {
				t.Fatal(err)
			}
			if got := tbl.Properties()[table.MetadataDeleteAfterCommitEnabledKey]; got != "true" {
				t.Errorf("%s = %q after rounds on a table without it, want true", table.MetadataDeleteAfterCommitEnabledKey, got)
			}
			files, err := filepath.Glob(filepath.Join(strings.TrimPrefix(tbl.Location(), "file://"), "metadata", "*.metadata.json"))
			if err != nil {
				t.Fatal(err)
			}
			// The current file and the two its log lists; the table
			// made 2+rounds of them.
			if len(files) != 3 {
				t.Errorf("%d metadata files after %d rounds, want 3: %v", len(files), rounds, files)
			}
			if rows, _, _ := scan(t, tbl, tbl.Metadata().Snapshots()[0].SnapshotID); rows != 1 {
				t.Errorf("time travel to round 1: %d rows, want 1", rows)
			}
		})
	}
}

// TestTableShape: the partition spec follows Config.Partitioning (day,
// hour, none: --partition-time processing), the sort order is op_ts
// ascending, and the table names the exporter version that made it.
func TestTableShape(t *testing.T) {
	for _, tc := range []struct {
		part      Partitioning
		transform string // "" for unpartitioned
	}{{ByDay, "day"}, {ByHour, "hour"}, {Unpartitioned, ""}} {
		t.Run(string(tc.part), func(t *testing.T) {
			ctx := context.Background()
			p, v1, _ := sqliteTableAtVersion1(t, Config{Partitioning: tc.part, ExporterVersion: "v9.8.7-test"})
			tbl, err := p.Catalog().LoadTable(ctx, v1.Identifier)
			if err != nil {
				t.Fatal(err)
			}
			opTS, _ := tbl.Schema().FindFieldByName("op_ts")
			spec := tbl.Spec()
			switch {
			case tc.transform == "" && spec.NumFields() != 0:
				t.Errorf("partition spec %v, want none", spec)
			case tc.transform != "" && (spec.NumFields() != 1 || spec.Field(0).Transform.String() != tc.transform || spec.Field(0).SourceIDs[0] != opTS.ID):
				t.Errorf("partition spec %v, want %s(op_ts)", spec, tc.transform)
			}
			order := tbl.SortOrder()
			if order.Len() != 1 {
				t.Fatalf("sort order %v, want op_ts ascending", order)
			}
			for _, f := range order.Fields() {
				if f.SourceIDs[0] != opTS.ID || f.Direction != table.SortASC {
					t.Errorf("sort field %v, want op_ts ascending", f)
				}
			}
			if got := tbl.Properties()[PropExporterVersion]; got != "v9.8.7-test" {
				t.Errorf("table property %s = %q, want the exporter's version", PropExporterVersion, got)
			}
		})
	}
}

// TestTypeChangeReplacesTheColumn: a type the column cannot be promoted
// to in place (string → decimal) drops it and adds a new column of the
// same name with a new field ID; the older snapshot still reads the old
// values.
func TestTypeChangeReplacesTheColumn(t *testing.T) {
	ctx := context.Background()
	p, v1, dir := sqliteTableAtVersion1(t, Config{})
	day := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	f1 := writeFile(t, dir, "data/SALES.ORDERS/schema_version=1/dt=2026-03-01/part-1.parquet", v1.Schema, 1,
		[]int64{1, 2}, []time.Time{day, day.Add(time.Minute)}, 0)
	if _, err := p.Publish(ctx, Round{RunID: "r", RoundID: "1", Files: []DataFile{f1}}); err != nil {
		t.Fatal(err)
	}
	sc := sourceSchema(1)
	fields := sc.Fields()
	for i := range fields {
		if fields[i].Name == "NAME" {
			fields[i].Type = &arrow.Decimal128Type{Precision: 10, Scale: 0}
		}
	}
	v2, err := p.PrepareVersion(ctx, TableVersion{Table: "SALES.ORDERS", Version: 2, Schema: arrow.NewSchema(fields, nil)})
	if err != nil {
		t.Fatal(err)
	}
	old, now := fieldIDs(t, v1.Schema)["NAME"], fieldIDs(t, v2.Schema)["NAME"]
	if old == 0 || now == 0 || old == now {
		t.Errorf("NAME has field ID %d in version 1 and %d in version 2, want a new one", old, now)
	}
	tbl, err := p.Catalog().LoadTable(ctx, v1.Identifier)
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := tbl.Schema().FindFieldByName("NAME"); !ok || f.ID != now || f.Type.String() != "decimal(10, 0)" {
		t.Errorf("current NAME %v (found %v), want decimal(10, 0) with field ID %d", f, ok, now)
	}
	if rows, _, _ := scan(t, tbl, tbl.CurrentSnapshot().SnapshotID); rows != 2 {
		t.Errorf("the snapshot before the change reads %d rows, want 2", rows)
	}
}

// sqliteTableAtVersion1 opens a publisher with cfg on a SQLite catalog of
// a new folder (also returned) and prepares version 1 of SALES.ORDERS.
func sqliteTableAtVersion1(t *testing.T, cfg Config) (*Publisher, Prepared, string) {
	t.Helper()
	dir := t.TempDir()
	cfg.Kind, cfg.URI, cfg.Warehouse = SQL, "sqlite://"+filepath.Join(dir, "catalog.db"), "file://"+filepath.Join(dir, "wh")
	p, err := Open(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	v1, err := p.PrepareVersion(context.Background(), TableVersion{Table: "SALES.ORDERS", Version: 1, Schema: sourceSchema(1)})
	if err != nil {
		t.Fatal(err)
	}
	return p, v1, dir
}
