package lakeview_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/duckq"
	"github.com/lakehouse-exporter/lakehouse-exporter/lakeview"
	"github.com/lakehouse-exporter/lakehouse-exporter/pipeline"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
	"github.com/lakehouse-exporter/lakehouse-exporter/store"
	"github.com/lakehouse-exporter/lakehouse-exporter/writer"
)

const samplePath = "../testdata/goldengate/sample.jsonl"

// export runs the pipeline over files into dir (the pattern of
// pipeline/helpers_test.go) and returns the store.
func export(t *testing.T, dir string, paths ...string) *store.Local {
	t.Helper()
	st, err := store.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	src, err := source.NewFiles(paths, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dec, err := cdc.NewGoldenGate(cdc.GoldenGateNames{})
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	sum, err := pipeline.Run(context.Background(), pipeline.Config{
		Source: src, Store: st, Decoder: dec, MaxRejects: -1,
		Schema: arrowschema.Options{BeforeImage: true},
		Writer: writer.Config{Allocator: mem},
	})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rejected != 0 {
		t.Fatalf("export rejected %d records", sum.Rejected)
	}
	mem.AssertSize(t, 0)
	return st
}

func openDuck(t *testing.T) *sql.DB { return duckq.OpenTB(t) }

// generate writes the DuckDB script for the lake in dir and runs it.
func generateAndRun(t *testing.T, db *sql.DB, st lakeview.Store, root string) string {
	t.Helper()
	script, err := lakeview.Generate(context.Background(), st, root, lakeview.DuckDB)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(script); err != nil {
		t.Fatalf("running the generated script: %v\n%s", err, script)
	}
	return script
}

func query(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	_, rows, err := duckq.Rows(db, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return duckq.Lines(rows)
}

func equalLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\ngot:\n  %s\nwant:\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// (a) The sample stream: every row change through the all-versions view,
// and the current state equal to a replay of the sample done by hand.
func TestSampleViewsInDuckDB(t *testing.T) {
	dir := t.TempDir()
	st := export(t, dir, samplePath)
	db := openDuck(t)
	generateAndRun(t, db, st, dir)

	equalLines(t, "SALES.ORDERS row count", query(t, db, `SELECT count(*) FROM "SALES.ORDERS"`), []string{"6"})
	equalLines(t, "SALES.ORDERS rows per schema version",
		query(t, db, `SELECT schema_version, count(*) FROM "SALES.ORDERS" GROUP BY ALL ORDER BY 1`),
		[]string{"1|4", "2|2"})
	// CUSTOMER_TIER exists in v2 only: NULL for every v1 row
	equalLines(t, "CUSTOMER_TIER by version",
		query(t, db, `SELECT schema_version, count(CUSTOMER_TIER) FROM "SALES.ORDERS" GROUP BY ALL ORDER BY 1`),
		[]string{"1|0", "2|2"})
	equalLines(t, "HR.EMPLOYEES rows per schema version",
		query(t, db, `SELECT schema_version, count(*), count(ACTIVE) FROM "HR.EMPLOYEES" GROUP BY ALL ORDER BY 1`),
		[]string{"1|4|3", "2|2|0"})

	// Replayed by hand from testdata/goldengate/sample.jsonl:
	// ORDERS: 1001 inserted, updated, deleted; 1002 inserted NEW (total
	// and created_at null); 1003 inserted NEW/GOLD (v2), updated to
	// SHIPPED/PLATINUM.
	equalLines(t, "SALES.ORDERS__current", query(t, db, `SELECT ORDER_ID, STATUS, CAST(TOTAL_AMOUNT AS VARCHAR),
		CAST(CREATED_AT AT TIME ZONE 'UTC' AS VARCHAR), CUSTOMER_TIER FROM "SALES.ORDERS__current" ORDER BY ORDER_ID`),
		[]string{"1002|NEW|NULL|NULL|NULL", "1003|SHIPPED|99.99|2026-07-13 04:05:00|PLATINUM"})
	// the current view has the table's columns only, v1's and v2's
	cols, _, err := duckq.Rows(db, `SELECT * FROM "SALES.ORDERS__current" LIMIT 0`)
	if err != nil {
		t.Fatal(err)
	}
	equalLines(t, "SALES.ORDERS__current columns", cols, []string{"ORDER_ID", "STATUS", "TOTAL_AMOUNT", "CREATED_AT", "CUSTOMER_TIER"})

	// EMPLOYEES: 7 inserted, partially updated, deleted (in v2); 8
	// inserted, then upserted to salary 6100, active; 9 inserted in v2
	// (no ACTIVE column there).
	equalLines(t, "HR.EMPLOYEES__current", query(t, db, `SELECT CAST(EMP_ID AS BIGINT), NAME, CAST(SALARY AS VARCHAR), CAST(ACTIVE AS VARCHAR)
		FROM "HR.EMPLOYEES__current" ORDER BY EMP_ID`),
		[]string{"8|Grace Hopper|6100.0|true", "9|Edsger Dijkstra|7000.0|NULL"})
}

// ggRecord is one GoldenGate record of a hand-written stream.
type ggRecord struct {
	QualTable string         `json:"qual_table,omitempty"`
	OpType    string         `json:"op_type"`
	OpTS      string         `json:"op_ts,omitempty"`
	XID       string         `json:"xid,omitempty"`
	Pos       string         `json:"pos,omitempty"`
	Before    map[string]any `json:"before,omitempty"`
	After     map[string]any `json:"after,omitempty"`
	Columns   map[string]any `json:"columns,omitempty"`
	DDL       map[string]any `json:"ddl,omitempty"`
}

func metadata(table string, keys []string, cols ...string) ggRecord {
	m := map[string]any{}
	for _, c := range cols {
		typ := "string"
		if slices.Contains(keys, c) || c == "QTY" {
			typ = "number"
		}
		m[c] = map[string]any{"type": typ, "null": !slices.Contains(keys, c), "key": slices.Contains(keys, c)}
	}
	return ggRecord{QualTable: table, OpType: "OBJECT_METADATA", Columns: m}
}

func writeStream(t *testing.T, path string, recs []ggRecord) {
	t.Helper()
	var b strings.Builder
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// replay applies a stream's row changes to a map keyed by the key
// columns, the way the source database did: after images of
// INSERT/UPDATE/UPSERT replace the row, DELETE removes the key, and an
// UPDATE whose before image names another key removes that key.
func replay(recs []ggRecord, table string, keys ...string) map[string]map[string]any {
	state := map[string]map[string]any{}
	keyOf := func(img map[string]any) (string, bool) {
		var parts []string
		present := false
		for _, k := range keys {
			v, ok := img[k]
			if ok && v != nil {
				present = true
			}
			parts = append(parts, fmt.Sprint(v))
		}
		return strings.Join(parts, "|"), present
	}
	for _, r := range recs {
		if r.QualTable != table {
			continue
		}
		switch r.OpType {
		case "INSERT", "UPDATE", "UPSERT":
			after, _ := keyOf(r.After)
			if before, ok := keyOf(r.Before); ok && r.OpType == "UPDATE" && before != after {
				delete(state, before)
			}
			row := map[string]any{}
			for k, v := range r.After {
				row[k] = v
			}
			state[after] = row
		case "DELETE":
			before, _ := keyOf(r.Before)
			delete(state, before)
		}
	}
	return state
}

// (b) A stream with every kind of change a current state must get right,
// compared with an independent replay.
func TestCurrentStateMatchesReplay(t *testing.T) {
	const table = "TEST.ITEMS"
	row := func(id float64, name string, qty float64) map[string]any {
		return map[string]any{"ID": id, "NAME": name, "QTY": qty}
	}
	row2 := func(id float64, name string, qty float64, color string) map[string]any {
		r := row(id, name, qty)
		r["COLOR"] = color
		return r
	}
	n := 0
	dml := func(op, ts, xid string, before, after map[string]any) ggRecord {
		n++
		return ggRecord{QualTable: table, OpType: op, OpTS: "2026-08-01T" + ts + "Z", XID: xid,
			Pos: fmt.Sprintf("P%04d", n), Before: before, After: after}
	}
	recs := []ggRecord{
		metadata(table, []string{"ID"}, "ID", "NAME", "QTY"),
		dml("INSERT", "10:00:00.000000", "t1", nil, row(1, "one", 1)),
		dml("INSERT", "10:00:01.000000", "t2", nil, row(2, "two", 2)),
		dml("INSERT", "10:00:02.000000", "t3", nil, row(3, "three", 3)),
		// a non-key column changes
		dml("UPDATE", "10:01:00.000000", "t4", row(2, "two", 2), row(2, "two-b", 2)),
		// the key changes: 1 becomes 10 (a key-only before image, as
		// GoldenGate sends without full supplemental logging)
		dml("UPDATE", "10:02:00.000000", "t5", map[string]any{"ID": 1.0}, row(10, "one", 1)),
		// deleted, then inserted again
		dml("DELETE", "10:03:00.000000", "t6", row(3, "three", 3), nil),
		dml("INSERT", "10:04:00.000000", "t7", nil, row(3, "three-again", 30)),
		// one transaction, one op_ts: only the stream order decides
		dml("INSERT", "10:05:00.000000", "t8", nil, row(4, "four-a", 4)),
		dml("UPDATE", "10:05:00.000000", "t8", row(4, "four-a", 4), row(4, "four-b", 4)),
		dml("DELETE", "10:05:00.000000", "t8", row(4, "four-b", 4), nil),
		dml("INSERT", "10:05:00.000000", "t8", nil, row(4, "four-c", 4)),
		dml("UPDATE", "10:05:00.000000", "t8", row(4, "four-c", 4), row(4, "four-d", 4)),
		dml("INSERT", "10:05:00.000000", "t8", nil, row(5, "five", 5)),
		dml("DELETE", "10:05:00.000000", "t8", row(5, "five", 5), nil),
		// the key changes inside the transaction, and the old key comes
		// back in it
		dml("UPDATE", "10:05:00.000000", "t8", row(2, "two-b", 2), row(20, "two-c", 2)),
		dml("INSERT", "10:05:00.000000", "t8", nil, row(2, "two-new", 22)),
		// a column is added in the middle of the stream
		{OpType: "DDL", OpTS: "2026-08-01T10:06:00.000000Z", XID: "t9", Pos: "P-DDL",
			DDL: map[string]any{"object": map[string]any{"catalog": "", "schema": "TEST", "object": "ITEMS"},
				"statement": "ALTER TABLE TEST.ITEMS ADD COLOR VARCHAR2(10)"}},
		// between the DDL and the refreshed metadata
		dml("UPDATE", "10:07:00.000000", "t10", row2(10, "one", 1, ""), row2(10, "one", 1, "red")),
		metadata(table, []string{"ID"}, "ID", "NAME", "QTY", "COLOR"),
		dml("INSERT", "10:08:00.000000", "t11", nil, row2(6, "six", 6, "blue")),
		// a key change in the new version, back to a key deleted before
		dml("UPDATE", "10:09:00.000000", "t12", row2(6, "six", 6, "blue"), row2(5, "six-now-five", 6, "blue")),
		dml("UPDATE", "10:10:00.000000", "t13", row2(3, "three-again", 30, ""), row2(3, "three-c", 31, "green")),
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "items.jsonl")
	writeStream(t, path, recs)
	lake := filepath.Join(dir, "lake")
	st := export(t, lake, path)

	var want []string
	for _, r := range replay(recs, table, "ID") {
		color := "NULL"
		if c, ok := r["COLOR"]; ok {
			color = c.(string)
		}
		want = append(want, fmt.Sprintf("%d|%s|%s", int64(r["ID"].(float64)), r["NAME"], color))
	}
	sort.Strings(want)
	// guard the replay itself against a stream that tests nothing
	if len(want) != 6 {
		t.Fatalf("replay left %d keys, want 6: %v", len(want), want)
	}

	db := openDuck(t)
	generateAndRun(t, db, st, lake)
	got := query(t, db, `SELECT CAST(CAST(ID AS BIGINT) AS VARCHAR) || '|' || NAME || '|' || coalesce(COLOR, 'NULL')
		FROM "TEST.ITEMS__current" ORDER BY 1`)
	equalLines(t, "TEST.ITEMS__current", got, want)

	// every change is in the all-versions view, in both versions
	equalLines(t, "TEST.ITEMS rows per version",
		query(t, db, `SELECT schema_version, count(*) FROM "TEST.ITEMS" GROUP BY ALL ORDER BY 1`),
		[]string{"1|16", "2|4"})
	// one key, one row
	equalLines(t, "duplicate keys", query(t, db, `SELECT count(*) - count(DISTINCT ID) FROM "TEST.ITEMS__current"`), []string{"0"})
}

// (b) A composite key with a nullable part: an UPDATE that sets a key
// column to NULL moves the row to another key, which only a null-safe
// comparison notices.
func TestCurrentStateCompositeNullableKey(t *testing.T) {
	const table = "TEST.PAIRS"
	md := ggRecord{QualTable: table, OpType: "OBJECT_METADATA", Columns: map[string]any{
		"A": map[string]any{"type": "number", "null": false, "key": true},
		"B": map[string]any{"type": "string", "null": true, "key": true},
		"V": map[string]any{"type": "string", "null": true, "key": false},
	}}
	img := func(a float64, b any, v string) map[string]any { return map[string]any{"A": a, "B": b, "V": v} }
	n := 0
	dml := func(op string, before, after map[string]any) ggRecord {
		n++
		return ggRecord{QualTable: table, OpType: op, OpTS: fmt.Sprintf("2026-08-01T10:00:%02dZ", n), Before: before, After: after}
	}
	recs := []ggRecord{md,
		dml("INSERT", nil, img(1, "x", "v1")),
		dml("INSERT", nil, img(1, "y", "v2")),
		dml("INSERT", nil, img(3, nil, "v3")),
		dml("UPDATE", img(1, "x", "v1"), img(1, nil, "v4")),        // (1,x) becomes (1,NULL)
		dml("UPDATE", img(1, "y", "v2"), img(2, "y", "v5")),        // (1,y) becomes (2,y)
		dml("UPDATE", img(3, nil, "v3"), img(3, nil, "v6")),        // a NULL key part that stays NULL
		dml("UPDATE", img(2, "y", "v5"), img(2, "y", "v7")),        // no key change
		dml("UPDATE", map[string]any{"A": 3.0}, img(3, "z", "v8")), // (3,NULL) becomes (3,z)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "pairs.jsonl")
	writeStream(t, path, recs)
	lake := filepath.Join(dir, "lake")
	st := export(t, lake, path)

	var want []string
	for _, r := range replay(recs, table, "A", "B") {
		b := "NULL"
		if r["B"] != nil {
			b = r["B"].(string)
		}
		want = append(want, fmt.Sprintf("%d|%s|%s", int64(r["A"].(float64)), b, r["V"]))
	}
	sort.Strings(want)
	if len(want) != 3 {
		t.Fatalf("replay left %d keys, want 3: %v", len(want), want)
	}
	db := openDuck(t)
	generateAndRun(t, db, st, lake)
	got := query(t, db, `SELECT CAST(CAST(A AS BIGINT) AS VARCHAR) || '|' || coalesce(B, 'NULL') || '|' || V
		FROM "TEST.PAIRS__current" ORDER BY 1`)
	equalLines(t, "TEST.PAIRS__current", got, want)
}

// hostileLake exports two tables with names that break naive quoting, and
// one table without a key.
func hostileLake(t *testing.T, dir string, names ...string) *store.Local {
	t.Helper()
	var recs []ggRecord
	for i, name := range names {
		recs = append(recs, metadata(name, []string{"ID"}, "ID", "NAME"),
			ggRecord{QualTable: name, OpType: "INSERT", OpTS: "2026-08-01T10:00:00Z", After: map[string]any{"ID": 1, "NAME": fmt.Sprintf("a%d", i)}},
			ggRecord{QualTable: name, OpType: "INSERT", OpTS: "2026-08-01T10:00:01Z", After: map[string]any{"ID": 2, "NAME": fmt.Sprintf("b%d", i)}},
			ggRecord{QualTable: name, OpType: "UPDATE", OpTS: "2026-08-01T10:00:02Z", Before: map[string]any{"ID": 1}, After: map[string]any{"ID": 3, "NAME": fmt.Sprintf("c%d", i)}},
		)
	}
	recs = append(recs, metadata("NOKEY.LOG", nil, "MSG"),
		ggRecord{QualTable: "NOKEY.LOG", OpType: "INSERT", OpTS: "2026-08-01T10:00:00Z", After: map[string]any{"MSG": "hi"}})
	path := filepath.Join(t.TempDir(), "hostile.jsonl")
	writeStream(t, path, recs)
	return export(t, dir, path)
}

// (c) Spark: a temporary view per table, null-safe key comparison,
// backtick-quoted identifiers and backslash-escaped literals.
func TestSparkGeneration(t *testing.T) {
	hostile := "we`ird'name"
	st := hostileLake(t, t.TempDir(), hostile, "SALES.ORDERS", `ends\`)
	sqlText, err := lakeview.Generate(context.Background(), st, `s3://bucket/it's\x`, lakeview.Spark)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"CREATE OR REPLACE TEMPORARY VIEW `we``ird'name` USING parquet OPTIONS (path 's3://bucket/it\\'s\\\\x/we%60ird%27name', mergeSchema 'true', recursiveFileLookup 'false', datetimeRebaseMode 'CORRECTED');\n",
		"CREATE OR REPLACE TEMPORARY VIEW `SALES.ORDERS` USING parquet OPTIONS (path 's3://bucket/it\\'s\\\\x/SALES.ORDERS', mergeSchema 'true', recursiveFileLookup 'false', datetimeRebaseMode 'CORRECTED');\n",
		"CREATE OR REPLACE TEMPORARY VIEW `NOKEY.LOG` USING parquet",
		"CREATE OR REPLACE TEMPORARY VIEW `we``ird'name__current` AS\n",
		"CREATE OR REPLACE TEMPORARY VIEW `SALES.ORDERS__current` AS\n",
		"NOT (before_image.`ID` <=> `ID`)",
		"FROM `we``ird'name`\n",
		"PARTITION BY `ID` ORDER BY op_ts DESC, src_partition DESC, src_offset DESC",
		"No current-state view can be built for NOKEY.LOG",
	} {
		if !strings.Contains(sqlText, want) {
			t.Errorf("Spark SQL lacks %q:\n%s", want, sqlText)
		}
	}
	var code []string // the SQL without its comment lines
	for _, line := range strings.Split(sqlText, "\n") {
		if !strings.HasPrefix(line, "--") {
			code = append(code, line)
		}
	}
	for _, bad := range []string{"IS DISTINCT FROM", "read_parquet", "`NOKEY.LOG__current`", `"`, "''"} {
		if strings.Contains(strings.Join(code, "\n"), bad) {
			t.Errorf("Spark SQL contains %q:\n%s", bad, sqlText)
		}
	}
	// a comment line ending in a backslash would swallow the next line
	for _, line := range strings.Split(sqlText, "\n") {
		if strings.HasSuffix(line, `\`) {
			t.Errorf("line ends with a backslash: %q", line)
		}
	}
	if !strings.Contains(sqlText, "CREATE OR REPLACE TEMPORARY VIEW `ends\\` USING parquet OPTIONS (path 's3://bucket/it\\'s\\\\x/ends%5C'") {
		t.Errorf("table ends\\ not quoted as expected:\n%s", sqlText)
	}
	// tables in name order
	a, b, c := strings.Index(sqlText, "`NOKEY.LOG`"), strings.Index(sqlText, "`SALES.ORDERS`"), strings.Index(sqlText, "`we``ird'name`")
	if !(a >= 0 && a < b && b < c) {
		t.Errorf("tables not in name order: %d %d %d", a, b, c)
	}
	if !strings.HasPrefix(sqlText, "-- ") {
		t.Errorf("no header comment:\n%s", sqlText)
	}
	if _, err := lakeview.Generate(context.Background(), st, "/x", "postgres"); err == nil {
		t.Error("an unknown dialect was accepted")
	}
}

// (c) DuckDB: hostile table names and a root with a quote in it run and
// read back correctly.
func TestDuckDBHostileNames(t *testing.T) {
	names := []string{`od"d'na/me`, `x";DROP VIEW "y`, "line\nbreak -- ;\n", "_AUDIT.T"}
	lake := filepath.Join(t.TempDir(), "it's a lake")
	st := hostileLake(t, lake, names...)
	// a leading '_' is escaped: Spark and Hive skip such folders as hidden
	if _, err := os.Stat(filepath.Join(lake, "%5FAUDIT.T")); err != nil {
		t.Errorf("table _AUDIT.T: %v", err)
	}
	db := openDuck(t)
	script := generateAndRun(t, db, st, lake)
	if strings.Contains(script, "NOKEY.LOG__current") {
		t.Errorf("a current view for a table without a key:\n%s", script)
	}
	if !strings.Contains(script, "-- No current-state view can be built for NOKEY.LOG") {
		t.Errorf("no comment for the table without a key:\n%s", script)
	}
	ident := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
	for i, name := range names {
		equalLines(t, name+" rows", query(t, db, `SELECT CAST(ID AS BIGINT), NAME FROM `+ident(name)+` ORDER BY op_ts`),
			[]string{fmt.Sprintf("1|a%d", i), fmt.Sprintf("2|b%d", i), fmt.Sprintf("3|c%d", i)})
		// 1 became 3
		equalLines(t, name+" current", query(t, db, `SELECT CAST(ID AS BIGINT), NAME FROM `+ident(name+"__current")+` ORDER BY ID`),
			[]string{fmt.Sprintf("2|b%d", i), fmt.Sprintf("3|c%d", i)})
	}
	equalLines(t, "NOKEY.LOG", query(t, db, `SELECT MSG FROM "NOKEY.LOG"`), []string{"hi"})
	equalLines(t, "views", query(t, db, `SELECT count(*) FROM duckdb_views() WHERE NOT internal`), []string{"9"})
}

// (d) Tables(): versions, the union of the columns, key flags.
func TestTablesOfSample(t *testing.T) {
	st := export(t, t.TempDir(), samplePath)
	tables, err := lakeview.Tables(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tb := range tables {
		var cols []string
		for _, c := range tb.Columns {
			s := c.Name
			if c.Key {
				s += "*"
			}
			cols = append(cols, s)
		}
		got = append(got, fmt.Sprintf("%s %s %v %s before=%v order=%v", tb.Name, tb.Segment, tb.Versions, strings.Join(cols, ","), tb.BeforeImage, tb.SourceOrder))
	}
	equalLines(t, "tables", got, []string{
		"HR.EMPLOYEES HR.EMPLOYEES [1 2] EMP_ID*,NAME,SALARY,ACTIVE before=true order=true",
		"SALES.ORDERS SALES.ORDERS [1 2] ORDER_ID*,STATUS,TOTAL_AMOUNT,CREATED_AT,CUSTOMER_TIER before=true order=true",
	})
	if len(tables) == 2 {
		if k := tables[1].Keys(); !slices.Equal(k, []string{"ORDER_ID"}) {
			t.Errorf("SALES.ORDERS keys %v", k)
		}
		if c := tables[0].Columns[3]; c.Name != "ACTIVE" || !slices.Equal(c.Versions, []int{1}) {
			t.Errorf("HR.EMPLOYEES ACTIVE: %+v, want versions [1]", c)
		}
	}
}

// memStore is a Store over a map, for registry shapes the exporter does
// not write on its own.
type memStore map[string]string

func (m memStore) List(_ context.Context, prefix string) ([]string, error) {
	var keys []string
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys, nil
}

func (m memStore) Get(_ context.Context, key string) ([]byte, error) {
	v, ok := m[key]
	if !ok {
		return nil, store.ErrNotExist
	}
	return []byte(v), nil
}

func doc(table string, version int, cols ...string) string {
	var cs []string
	for _, c := range cols {
		name, key := strings.CutSuffix(c, "*")
		cs = append(cs, fmt.Sprintf(`{"name":%q,"key":%v,"type":"int64"}`, name, key))
	}
	return fmt.Sprintf(`{"table":%q,"schema_version":%d,"arrow_schema":[{"name":"op_type"}],"columns":[%s]}`, table, version, strings.Join(cs, ","))
}

// (d) Key flags come from the newest version, versions sort as numbers,
// names come from the folder, and a document that disagrees with its
// folder is an error.
func TestTablesKeysFromNewestVersion(t *testing.T) {
	st := memStore{
		"_schemas/A%2FB/v1.json":   doc("A/B", 1, "ID*", "OLD"),
		"_schemas/A%2FB/v2.json":   doc("A/B", 2, "ID", "OLD", "CODE*"),
		"_schemas/A%2FB/v10.json":  doc("A/B", 10, "NEW", "CODE*", "ID"),
		"_schemas/A%2FB/.tmp-x":    "not json",
		"_schemas/C/v1.json":       doc("C", 1, "X"),
		"A%2FB/schema_version=1/x": "data",
	}
	tables, err := lakeview.Tables(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 2 || tables[0].Name != "A/B" || tables[1].Name != "C" {
		t.Fatalf("tables %+v", tables)
	}
	ab := tables[0]
	if !slices.Equal(ab.Versions, []int{1, 2, 10}) {
		t.Errorf("versions %v", ab.Versions)
	}
	var cols []string
	for _, c := range ab.Columns {
		cols = append(cols, fmt.Sprintf("%s:%v:%v", c.Name, c.Key, c.Versions))
	}
	equalLines(t, "A/B columns", cols, []string{"ID:false:[1 2 10]", "OLD:false:[1 2]", "CODE:true:[2 10]", "NEW:false:[10]"})
	if ab.BeforeImage || ab.SourceOrder {
		t.Errorf("metacolumns found that the documents lack: %+v", ab)
	}

	// without src_partition/src_offset and before_image the view still
	// builds, and says what it cannot do
	script, err := lakeview.Generate(context.Background(), st, "/lake", lakeview.DuckDB)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ORDER BY op_ts DESC)", "no before_image", "no src_partition/src_offset",
		"No current-state view can be built for C", `PARTITION BY "CODE" ORDER BY`} {
		if !strings.Contains(script, want) {
			t.Errorf("script lacks %q:\n%s", want, script)
		}
	}

	st["_schemas/C/v2.json"] = doc("D", 2, "X")
	if _, err := lakeview.Tables(context.Background(), st); err == nil {
		t.Error("a document naming another table than its folder was accepted")
	}
	delete(st, "_schemas/C/v2.json")
	st["_schemas/a%2fb/v1.json"] = doc("a/b", 1, "X")
	if _, err := lakeview.Tables(context.Background(), st); err == nil {
		t.Error("a folder TableSegment does not produce was accepted")
	}
}

// Names that differ only in case would replace each other's views
// (DuckDB compares even quoted names case-insensitively): the second gets
// a comment instead.
func TestViewNameCollisions(t *testing.T) {
	st := memStore{
		"_schemas/A/v1.json":          doc("A", 1, "ID*"),
		"_schemas/a/v1.json":          doc("a", 1, "ID*"),
		"_schemas/a__CURRENT/v1.json": doc("a__CURRENT", 1, "ID*"),
	}
	script, err := lakeview.Generate(context.Background(), st, "/lake", lakeview.DuckDB)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`CREATE OR REPLACE VIEW "A" AS`, `CREATE OR REPLACE VIEW "A__current" AS`,
		"-- The view name a collides with A", "-- The view name a__CURRENT collides with A__current"} {
		if !strings.Contains(script, want) {
			t.Errorf("script lacks %q:\n%s", want, script)
		}
	}
	for _, bad := range []string{`VIEW "a"`, `VIEW "a__CURRENT"`, `VIEW "a__current"`} {
		if strings.Contains(script, bad) {
			t.Errorf("script contains %q:\n%s", bad, script)
		}
	}
}
