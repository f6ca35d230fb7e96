package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	pqschema "github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/duckdb/duckdb-go/v2"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/duckq"
	"github.com/lakehouse-exporter/lakehouse-exporter/partition"
	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
)

// goldenStream is a stream of the golden lakes, exported in several runs
// so that each table gets several snapshots: each run adds the lines up
// to the next cut to the input file, and the last run the whole stream.
type goldenStream struct {
	name, path string
	hints      string // a file holding the --type-hint value, or ""
	cuts       []int
}

// goldenStreams are the streams of enginetest/test_spark_reads.py, and
// the bounds stream of every type at its edges. The GoldenGate sample is
// cut before each DDL, so that the tables' older snapshots have the older
// schemas.
var goldenStreams = []goldenStream{
	{name: "goldengate", path: "../../testdata/goldengate/sample.jsonl", cuts: []int{8, 18}},
	{name: "qlik", path: "../../testdata/qlik/sample.jsonl", cuts: []int{5}},
	{name: "edge_types", path: "../../enginetest/testdata/edge_types.jsonl", hints: "../../enginetest/testdata/edge_types.hints", cuts: []int{4}},
	{name: "partial", path: "../../enginetest/testdata/partial.jsonl", cuts: []int{4}},
	{name: "bounds", path: "../../enginetest/testdata/bounds.jsonl", hints: "../../enginetest/testdata/bounds.hints", cuts: []int{5, 125}},
}

// goldenCatalog is a catalog the golden lakes are published to: the
// exporter's flags for it and the same catalog opened for reading.
type goldenCatalog struct {
	name string
	args func(dir, sink string) []string
	cfg  func(dir, sink string) tables.Config
}

func goldenCatalogs() []goldenCatalog {
	cats := []goldenCatalog{
		{"hadoop", func(string, string) []string { return []string{"--catalog", "hadoop"} },
			func(_, sink string) tables.Config {
				return tables.Config{Kind: tables.Hadoop, Warehouse: "file://" + sink + "/_iceberg"}
			}},
		{"sqlite", func(dir, _ string) []string {
			return []string{"--catalog", "sql", "--catalog-uri", "sqlite://" + filepath.Join(dir, "catalog.db")}
		}, func(dir, sink string) tables.Config {
			return tables.Config{Kind: tables.SQL, URI: "sqlite://" + filepath.Join(dir, "catalog.db"), Warehouse: "file://" + sink + "/_iceberg"}
		}},
	}
	if dsn := os.Getenv("EXPORTER_TEST_POSTGRES_DSN"); dsn != "" {
		// A namespace of its own: the database outlives the test.
		ns := "golden_" + strconv.FormatInt(time.Now().UnixNano(), 36)
		cats = append(cats, goldenCatalog{"postgres", func(string, string) []string {
			return []string{"--catalog", "sql", "--catalog-uri", dsn, "--catalog-namespace", ns}
		}, func(_, sink string) tables.Config {
			return tables.Config{Kind: tables.SQL, URI: dsn, Warehouse: "file://" + sink + "/_iceberg", Namespace: ns}
		}})
	}
	return cats
}

// TestGoldenStreamsThroughIcebergCatalogs exports every golden stream
// with every catalog (hadoop, SQL on SQLite and, with
// EXPORTER_TEST_POSTGRES_DSN, on PostgreSQL) and, on the hadoop catalog,
// the streams of every type (edge types, bounds) with both Parquet
// encoders and both integer encodings, in files of several row groups; then reads every table through the catalog with
// iceberg-go and checks it against DuckDB's reading of the same files
// (see checkGoldenTable).
func TestGoldenStreamsThroughIcebergCatalogs(t *testing.T) {
	if testing.Short() {
		t.Skip("exports every golden stream a dozen times")
	}
	type setting struct{ encoder, ints string }
	for _, cat := range goldenCatalogs() {
		settings := []setting{{"lean", "delta"}}
		if cat.name == "hadoop" {
			settings = append(settings, setting{"lean", "plain"}, setting{"arrow", "delta"}, setting{"arrow", "plain"})
		}
		for _, set := range settings {
			for _, st := range goldenStreams {
				if set != settings[0] && st.name != "bounds" && st.name != "edge_types" {
					continue // the encoders' bounds: the streams of every type
				}
				t.Run(fmt.Sprintf("%s/%s-%s/%s", cat.name, set.encoder, set.ints, st.name), func(t *testing.T) {
					t.Parallel()
					dir := t.TempDir()
					sink := filepath.Join(dir, "lake")
					args := append(cat.args(dir, sink), "--parquet-encoder", set.encoder, "--int-encoding", set.ints,
						"--row-group-rows", "8")
					exportInRuns(t, dir, sink, st, args)
					checkGoldenLake(t, sink, cat.cfg(dir, sink))
				})
			}
		}
	}
}

// exportInRuns exports st into sink with one run per cut and one for the
// whole stream, appending to one input file as a producer would.
func exportInRuns(t *testing.T, dir, sink string, st goldenStream, extra []string) {
	t.Helper()
	data, err := os.ReadFile(st.path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	if st.hints != "" {
		hints, err := os.ReadFile(st.hints)
		if err != nil {
			t.Fatal(err)
		}
		extra = append(extra, "--type-hint", strings.TrimSpace(string(hints)))
	}
	in := filepath.Join(dir, st.name+".jsonl")
	for _, cut := range append(slices.Clone(st.cuts), len(lines)) {
		if err := os.WriteFile(in, []byte(strings.Join(lines[:min(cut, len(lines))], "")), 0o644); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"run", "--source", "file:" + in, "--sink", "file://" + sink, "--once",
			"--max-rejects", "0", "--log-level", "warn"}, extra...)
		if code, _, stderr := runExporter(t, nil, args...); code != exitOK {
			t.Fatalf("export of %s up to line %d: exit %d: %s", st.name, cut, code, stderr)
		}
	}
}

// checkGoldenLake checks every table of the lake (see checkGoldenTable).
func checkGoldenLake(t *testing.T, sink string, cfg tables.Config) {
	t.Helper()
	ctx := context.Background()
	p, err := tables.Open(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	entries, err := os.ReadDir(sink)
	if err != nil {
		t.Fatal(err)
	}
	db := duckq.OpenTB(t)
	if _, err := db.Exec("SET TimeZone = 'UTC'"); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), "_") {
			continue
		}
		name, err := partition.ParseTableSegment(e.Name())
		if err != nil {
			t.Fatal(err)
		}
		n++
		ident, err := p.Identifier(name)
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := p.Catalog().LoadTable(ctx, ident)
		if err != nil {
			t.Fatalf("load the table of %s: %v", name, err)
		}
		checkGoldenTable(t, db, tbl, name, filepath.Join(sink, e.Name()))
	}
	if n == 0 {
		t.Fatal("the export wrote no table")
	}
}

// checkGoldenTable reads one table through the catalog. At every snapshot
// (time travel), iceberg-go's scan has the columns of the schema the
// snapshot records, which are those of the newest schema version among
// the snapshot's files, and every row and value DuckDB reads from the
// snapshot's files, as many as the snapshot's summary counts. At the
// current snapshot, every row of the table's folder is in the table. In
// every file, the field IDs are those of the Iceberg schema of the file's
// version, and each manifest entry's bounds and counts hold what DuckDB
// reads from the file (checkBounds).
func checkGoldenTable(t *testing.T, db *sql.DB, tbl *table.Table, name, folder string) {
	t.Helper()
	ctx := context.Background()
	snaps := tbl.Metadata().Snapshots()
	if len(snaps) == 0 {
		t.Fatalf("%s: no snapshot", name)
	}
	checked := map[string]bool{}
	for _, s := range snaps {
		scan := tbl.Scan(table.WithSnapshotID(s.SnapshotID))
		tasks, err := scan.PlanFiles(ctx)
		if err != nil {
			t.Fatalf("%s: plan snapshot %d: %v", name, s.SnapshotID, err)
		}
		var paths []string
		newest := 0
		for _, task := range tasks {
			path := strings.TrimPrefix(task.File.FilePath(), "file://")
			paths = append(paths, path)
			newest = max(newest, fileVersion(t, path))
			if !checked[path] {
				checked[path] = true
				checkFieldIDs(t, tbl, name, path)
				checkBounds(t, db, tbl, name, path, task.File)
			}
		}
		sc := snapshotSchema(t, tbl, s)
		var want []string
		for _, f := range sc.Fields() {
			want = append(want, f.Name)
		}
		newestFile := ""
		for _, p := range paths {
			if fileVersion(t, p) == newest {
				newestFile = p
			}
		}
		// Iceberg appends an added column; the files have it where the
		// source metadata puts it.
		if got := columnNames(t, db, fmt.Sprintf("read_parquet('%s', hive_partitioning = false)", newestFile)); !sameSet(got, want) {
			t.Errorf("%s snapshot %d: schema %d has columns %v, the files of version %d %v", name, s.SnapshotID, sc.ID, want, newest, got)
		}
		at, err := scan.ToArrowTable(ctx)
		if err != nil {
			t.Fatalf("%s: scan snapshot %d: %v", name, s.SnapshotID, err)
		}
		var got []string
		for _, f := range at.Schema().Fields() {
			got = append(got, f.Name)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s snapshot %d: the scan has columns %v, its schema %d %v", name, s.SnapshotID, got, sc.ID, want)
		}
		scanned := filepath.Join(t.TempDir(), "scan.parquet")
		f, err := os.Create(scanned)
		if err != nil {
			t.Fatal(err)
		}
		if err := pqarrow.WriteTable(at, f, max(at.NumRows(), 1), nil, pqarrow.DefaultWriterProps()); err != nil {
			t.Fatal(err)
		}
		rows := at.NumRows()
		at.Release()
		files := "read_parquet(['" + strings.Join(paths, "','") + "'], union_by_name = true, hive_partitioning = false)"
		if c := count(t, db, "SELECT count(*) FROM "+files); c != rows {
			t.Errorf("%s snapshot %d: the scan reads %d rows, DuckDB %d from its %d files", name, s.SnapshotID, rows, c, len(paths))
		}
		if total := s.Summary.Properties["total-records"]; total != strconv.FormatInt(rows, 10) {
			t.Errorf("%s snapshot %d: the summary counts %s rows, the scan reads %d", name, s.SnapshotID, total, rows)
		}
		cols := selectList(t, db, files, want)
		for _, q := range []string{
			fmt.Sprintf("SELECT %s FROM read_parquet('%s') EXCEPT ALL SELECT %s FROM %s", quoteAll(want), scanned, cols, files),
			fmt.Sprintf("SELECT %s FROM %s EXCEPT ALL SELECT %s FROM read_parquet('%s')", cols, files, quoteAll(want), scanned),
		} {
			if c := count(t, db, "SELECT count(*) FROM ("+q+")"); c != 0 {
				_, diff, _ := duckq.Rows(db, q+" LIMIT 3")
				t.Errorf("%s snapshot %d: %d rows differ between the scan and DuckDB's reading of the files: %v", name, s.SnapshotID, c, duckq.Lines(diff))
			}
		}
	}
	all := fmt.Sprintf("read_parquet('%s/**/*.parquet', union_by_name = true, hive_partitioning = false)", folder)
	if c, cur := count(t, db, "SELECT count(*) FROM "+all), tbl.CurrentSnapshot(); cur.Summary.Properties["total-records"] != strconv.FormatInt(c, 10) {
		t.Errorf("%s: the current snapshot counts %s rows, the table's folder holds %d", name, cur.Summary.Properties["total-records"], c)
	}
}

var versionFolder = regexp.MustCompile(`/schema_version=(\d+)/`)

// fileVersion is the schema version in a data file's path.
func fileVersion(t *testing.T, path string) int {
	t.Helper()
	m := versionFolder.FindStringSubmatch(path)
	if m == nil {
		t.Fatalf("data file %s is not in a schema_version folder", path)
	}
	v, _ := strconv.Atoi(m[1])
	return v
}

func snapshotSchema(t *testing.T, tbl *table.Table, s table.Snapshot) *iceberg.Schema {
	t.Helper()
	if s.SchemaID == nil {
		t.Fatalf("snapshot %d records no schema", s.SnapshotID)
	}
	for _, sc := range tbl.Metadata().Schemas() {
		if sc.ID == *s.SchemaID {
			return sc
		}
	}
	t.Fatalf("snapshot %d: no schema %d", s.SnapshotID, *s.SchemaID)
	return nil
}

// versionSchema is the Iceberg schema the table records for the schema
// version of a data file.
func versionSchema(t *testing.T, tbl *table.Table, path string) *iceberg.Schema {
	t.Helper()
	v := fileVersion(t, path)
	id, err := strconv.Atoi(tbl.Properties()["lakehouse-exporter.schema-version."+strconv.Itoa(v)])
	if err != nil {
		t.Fatalf("%s: the table records no schema for version %d: %v", path, v, err)
	}
	for _, sc := range tbl.Metadata().Schemas() {
		if sc.ID == id {
			return sc
		}
	}
	t.Fatalf("%s: no schema %d", path, id)
	return nil
}

// checkFieldIDs: every field of the file, nested ones included, carries
// the field ID its name has in the Iceberg schema of the file's version.
func checkFieldIDs(t *testing.T, tbl *table.Table, name, path string) {
	t.Helper()
	sc := versionSchema(t, tbl, path)
	rd, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	root := rd.MetaData().Schema.Root()
	var walk func(prefix string, n pqschema.Node)
	walk = func(prefix string, n pqschema.Node) {
		path := prefix + n.Name()
		if f, ok := sc.FindFieldByName(path); !ok {
			t.Errorf("%s: file %s has %s, which schema %d lacks", name, filepath.Base(path), path, sc.ID)
		} else if int(n.FieldID()) != f.ID {
			t.Errorf("%s: file %s: %s has field ID %d, schema %d gives it %d", name, filepath.Base(path), path, n.FieldID(), sc.ID, f.ID)
		}
		g, ok := n.(*pqschema.GroupNode)
		if !ok {
			return
		}
		if _, list := g.LogicalType().(pqschema.ListLogicalType); list {
			// LIST > repeated group "list" > element: Iceberg names it
			// path.element.
			rep := g.Field(0).(*pqschema.GroupNode)
			walk(path+".", rep.Field(0))
			return
		}
		for i := range g.NumFields() {
			walk(path+".", g.Field(i))
		}
	}
	for i := range root.NumFields() {
		walk("", root.Field(i))
	}
}

// checkBounds holds a manifest entry's counts and bounds to the values
// DuckDB reads from the file: for every primitive column (nested ones
// too), the value, null and NaN counts are the file's, the lower bound is at
// most the smallest value and the upper bound at least the largest, in
// Iceberg's order (-0.0 before 0.0; NaN has no place in it and is never a
// bound), and a bound of a type Iceberg does not truncate is the value
// itself. Bounds may be left out, never wrong: engines skip a file whose
// bounds exclude what a query asks for.
func checkBounds(t *testing.T, db *sql.DB, tbl *table.Table, name, path string, df iceberg.DataFile) {
	t.Helper()
	sc := versionSchema(t, tbl, path)
	lower, upper := df.LowerBoundValues(), df.UpperBoundValues()
	for _, f := range primitiveFields(sc) {
		expr := `"` + strings.ReplaceAll(f.path, ".", `"."`) + `"`
		_, rows, err := duckq.Rows(db, fmt.Sprintf("SELECT %s FROM read_parquet('%s', hive_partitioning = false)", expr, path))
		if err != nil {
			t.Fatalf("%s: read %s of %s: %v", name, f.path, path, err)
		}
		var vals []any
		nulls, nans := int64(0), int64(0)
		for _, r := range rows {
			switch v := r[0].(type) {
			case nil:
				nulls++
			case float64:
				if math.IsNaN(v) {
					nans++
				} else {
					vals = append(vals, v)
				}
			default:
				vals = append(vals, v)
			}
		}
		where := fmt.Sprintf("%s: %s, file %s", name, f.path, filepath.Base(path))
		if c, ok := df.NullValueCounts()[f.id]; ok && c != nulls {
			t.Errorf("%s: null count %d, the file holds %d nulls", where, c, nulls)
		}
		if _, float := f.typ.(iceberg.Float64Type); float {
			if c, ok := df.NaNValueCounts()[f.id]; !ok || c != nans {
				t.Errorf("%s: NaN count %d (given: %v), the file holds %d NaNs", where, c, ok, nans)
			}
		}
		if c, ok := df.ValueCounts()[f.id]; ok && !strings.Contains(f.path, ".") && c != int64(len(rows)) {
			t.Errorf("%s: value count %d, the file holds %d rows", where, c, len(rows))
		}
		lo, hasLo := lower[f.id]
		hi, hasHi := upper[f.id]
		if len(vals) == 0 {
			continue
		}
		least, most := vals[0], vals[0]
		for _, v := range vals[1:] {
			if compareGo(t, f.typ, v, least) < 0 {
				least = v
			}
			if compareGo(t, f.typ, v, most) > 0 {
				most = v
			}
		}
		exact := true
		switch f.typ.(type) {
		case iceberg.StringType, iceberg.BinaryType:
			exact = false // truncated to 16 characters or bytes
		}
		if hasLo {
			b := boundValue(t, f.typ, lo)
			if c := compareGo(t, f.typ, b, least); c > 0 || exact && c != 0 {
				t.Errorf("%s: lower bound %v, the smallest value %v", where, show(b), show(least))
			}
		}
		if hasHi {
			b := boundValue(t, f.typ, hi)
			if c := compareGo(t, f.typ, b, most); c < 0 || exact && c != 0 {
				t.Errorf("%s: upper bound %v, the largest value %v", where, show(b), show(most))
			}
		}
	}
}

type primitiveField struct {
	path string
	id   int
	typ  iceberg.Type
}

// primitiveFields are the schema's primitive fields, struct members
// included, with their dotted paths; list elements are left out.
func primitiveFields(sc *iceberg.Schema) []primitiveField {
	var out []primitiveField
	var walk func(prefix string, fields []iceberg.NestedField)
	walk = func(prefix string, fields []iceberg.NestedField) {
		for _, f := range fields {
			switch ft := f.Type.(type) {
			case *iceberg.StructType:
				walk(prefix+f.Name+".", ft.FieldList)
			case iceberg.PrimitiveType:
				out = append(out, primitiveField{prefix + f.Name, f.ID, f.Type})
			}
		}
	}
	walk("", sc.Fields())
	return out
}

// boundValue decodes a bound into the Go value DuckDB returns for the
// column's type.
func boundValue(t *testing.T, typ iceberg.Type, b []byte) any {
	t.Helper()
	lit, err := iceberg.LiteralFromBytes(typ, b)
	if err != nil {
		t.Fatalf("bound %x of type %s: %v", b, typ, err)
	}
	switch l := lit.(type) {
	case iceberg.Int32Literal:
		return int32(l)
	case iceberg.Int64Literal:
		return int64(l)
	case iceberg.Float64Literal:
		if math.IsNaN(float64(l)) {
			t.Errorf("a bound of type %s is NaN", typ)
		}
		return float64(l)
	case iceberg.BoolLiteral:
		return bool(l)
	case iceberg.StringLiteral:
		return string(l)
	case iceberg.BinaryLiteral:
		return []byte(l)
	case iceberg.DateLiteral:
		return time.Unix(int64(l)*86400, 0).UTC()
	case iceberg.TimestampLiteral:
		return time.UnixMicro(int64(l)).UTC()
	case iceberg.DecimalLiteral:
		return duckdb.Decimal{Scale: uint8(l.Scale), Value: l.Val.BigInt()}
	}
	t.Fatalf("bound of type %s: no Go value for %T", typ, lit)
	return nil
}

// compareGo orders two values of a column as Iceberg does: -0.0 before
// 0.0, strings by their UTF-8 bytes, binaries as unsigned bytes.
func compareGo(t *testing.T, typ iceberg.Type, a, b any) int {
	t.Helper()
	switch x := a.(type) {
	case int32:
		return cmpOrdered(x, b.(int32))
	case int64:
		return cmpOrdered(x, b.(int64))
	case float64:
		y := b.(float64)
		if x == 0 && y == 0 {
			return cmpOrdered(b2i(!math.Signbit(x)), b2i(!math.Signbit(y)))
		}
		return cmpOrdered(x, y)
	case bool:
		return cmpOrdered(b2i(x), b2i(b.(bool)))
	case string:
		return strings.Compare(x, b.(string))
	case []byte:
		return bytes.Compare(x, b.([]byte))
	case time.Time:
		return x.Compare(b.(time.Time))
	case duckdb.Decimal:
		y := b.(duckdb.Decimal)
		if x.Scale != y.Scale {
			t.Fatalf("decimals of scales %d and %d compared", x.Scale, y.Scale)
		}
		return x.Value.Cmp(y.Value)
	}
	t.Fatalf("type %s: cannot compare %T", typ, a)
	return 0
}

func cmpOrdered[T int | int32 | int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// show renders a value for an error message.
func show(v any) string {
	switch x := v.(type) {
	case []byte:
		return fmt.Sprintf("%x", x)
	case string:
		return strconv.Quote(x)
	case duckdb.Decimal:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

func count(t *testing.T, db *sql.DB, q string) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// columnNames are the columns of a DuckDB relation, in order.
func columnNames(t *testing.T, db *sql.DB, rel string) []string {
	t.Helper()
	_, rows, err := duckq.Rows(db, "SELECT column_name FROM (DESCRIBE SELECT * FROM "+rel+")")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		out = append(out, r[0].(string))
	}
	return out
}

// selectList selects cols from rel, NULL for a column no file has.
func selectList(t *testing.T, db *sql.DB, rel string, cols []string) string {
	t.Helper()
	have := map[string]bool{}
	for _, c := range columnNames(t, db, rel) {
		have[c] = true
	}
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = quoteIdent(c)
		if !have[c] {
			out[i] = "NULL AS " + quoteIdent(c)
		}
	}
	return strings.Join(out, ", ")
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func quoteAll(cols []string) string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = quoteIdent(c)
	}
	return strings.Join(out, ", ")
}
