package pipeline_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/syncbuf"
	"github.com/lakehouse-exporter/lakehouse-exporter/pipeline"
)

// TestFilesUseOnlyTypesSparkAndDuckDBRead checks every column of every file
// made from both sample streams: no INT96, no unsigned integers, no
// nanosecond timestamps.
func TestFilesUseOnlyTypesSparkAndDuckDBRead(t *testing.T) {
	dir := t.TempDir()
	if _, err := export(t, dir, func(c *pipeline.Config) { c.Decoder = autoDecoder(t, cdc.QlikOptions{}) }, samplePath, qlikSample); err != nil {
		t.Fatal(err)
	}
	db := openDuck(t)
	files := dataFiles(t, dir)
	if len(files) < 8 {
		t.Fatalf("only %d files", len(files))
	}
	checked := 0
	for _, f := range files {
		rows := query(t, db, `SELECT name, coalesce(type, ''), coalesce(converted_type, ''), coalesce(logical_type::VARCHAR, '') FROM parquet_schema('`+f+`')`)
		for _, r := range rowStrings(rows) {
			upper := strings.ToUpper(r)
			for _, bad := range []string{"INT96", "UINT", "UNSIGNED", "NANOS=NANOSECONDS", "ISSIGNED=0"} {
				if strings.Contains(upper, bad) {
					t.Errorf("%s: column %s uses %s", f, r, bad)
				}
			}
			checked++
		}
	}
	if checked < 100 {
		t.Errorf("only %d columns checked", checked)
	}
}

// TestColumnsNamedLikeFolderKeysAreNotShadowed: a table whose columns are
// called like the layout's partition folders (dt, schema_version, hr, in
// any case) keeps their values readable with Hive partitioning: such a
// column is written with an underscore appended, in the row, the before
// image and absent_columns alike, and _schemas/ names both. A table that
// also has a column of that written name is refused (bad_metadata): the
// name could otherwise mean one column in one version and the other in
// the next.
func TestColumnsNamedLikeFolderKeysAreNotShadowed(t *testing.T) {
	meta := `{"op_type":"OBJECT_METADATA","qual_table":"S.P","columns":{"ID":{"type":"number","null":false,"key":true},` +
		`"DT":{"type":"string","null":true,"key":false},"Schema_Version":{"type":"string","null":true,"key":false},` +
		`"hr":{"type":"number","null":true,"key":false}}}`
	clash := `{"op_type":"OBJECT_METADATA","qual_table":"S.C","columns":{"ID":{"type":"number","null":false,"key":true},` +
		`"DT":{"type":"string","null":true,"key":false},"dt_":{"type":"string","null":true,"key":false}}}`
	lines := []string{meta, clash,
		`{"qual_table":"S.P","op_type":"INSERT","op_ts":"2026-07-13T04:01:00Z","xid":"x","pos":"p1","after":{"ID":1,"DT":"col-dt","Schema_Version":"col-sv","hr":7}}`,
		`{"qual_table":"S.P","op_type":"UPDATE","op_ts":"2026-07-13T04:02:00Z","xid":"x","pos":"p2","before":{"ID":1,"DT":"col-dt","Schema_Version":"col-sv","hr":7},"after":{"ID":1,"Schema_Version":"sv2","hr":8}}`,
		`{"qual_table":"S.C","op_type":"INSERT","op_ts":"2026-07-13T04:01:00Z","xid":"x","pos":"c1","after":{"ID":1,"DT":"a","dt_":"b"}}`,
	}
	p := writeFile(t, t.TempDir(), "in.jsonl", strings.Join(lines, "\n")+"\n")
	dir := t.TempDir()
	sum, err := export(t, dir, nil, p)
	if err != nil {
		t.Fatal(err)
	}
	rows := query(t, openDuck(t), `SELECT ID, DT_, Schema_Version_, hr_, dt::VARCHAR, schema_version, absent_columns::VARCHAR,
		before_image.DT_, before_image.hr_ FROM `+lakeGlob(dir, "S.P")+` ORDER BY pos`)
	equalLines(t, "rows", rowStrings(rows), []string{
		"1|col-dt|col-sv|7|2026-07-13|1|NULL|NULL|NULL",
		"1|NULL|sv2|8|2026-07-13|1|[DT_]|col-dt|7",
	})
	doc, err := os.ReadFile(filepath.Join(dir, "_schemas", "S.P", "v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"name": "DT_"`, `"source_name": "DT"`, `"name": "Schema_Version_"`, `"source_name": "Schema_Version"`, `"name": "hr_"`} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("_schemas/S.P/v1.json lacks %s:\n%s", want, doc)
		}
	}
	if sum.RejectedBy["bad_metadata"] != 1 || sum.RejectedBy["no_metadata"] != 1 {
		t.Errorf("rejects %v: want S.C's metadata refused (DT and dt_) and its row without metadata", sum.RejectedBy)
	}
}

// TestRefreshUnlikeTheDDLOpensTheNextVersion: DML written under the
// columns a DDL statement gave (X int64 from NUMBER(10)) keeps its
// version when the refreshed metadata says otherwise (X decimal(38,2));
// the refresh opens the next version, so each version's files match its
// _schemas document. A rerun over the grown input rebuilds the same
// versions and writes only the new row.
func TestRefreshUnlikeTheDDLOpensTheNextVersion(t *testing.T) {
	schema := func(x string) string {
		return `{"$schema":"http://json-schema.org/draft-04/schema#","id":"S.R","type":"object","definitions":{"row":{"type":"object","properties":{"ID":{"type":"integer"}` + x +
			`}}},"properties":{"after":{"$ref":"#/definitions/row"},"before":{"$ref":"#/definitions/row"}}}`
	}
	lines := []string{
		schema(""),
		`{"op_type":"OBJECT_METADATA","qual_table":"S.R","columns":{"ID":{"type":"number","null":false,"key":true}}}`,
		`{"op_type":"DDL","op_ts":"2026-07-13T04:00:02Z","xid":"x","pos":"d2","ddl":{"object":{"catalog":"","schema":"S","object":"R"},"statement":"ALTER TABLE S.R ADD X NUMBER(10)"}}`,
		`{"qual_table":"S.R","op_type":"INSERT","op_ts":"2026-07-13T04:00:03Z","xid":"x","pos":"p3","after":{"ID":2,"X":7}}`,
		schema(`,"X":{"type":["number","null"],"multipleOf":0.01}`),
		`{"op_type":"OBJECT_METADATA","qual_table":"S.R","columns":{"ID":{"type":"number","null":false,"key":true},"X":{"type":"number","null":true,"key":false}}}`,
		`{"qual_table":"S.R","op_type":"INSERT","op_ts":"2026-07-13T04:00:04Z","xid":"x","pos":"p4","after":{"ID":3,"X":7.25}}`,
	}
	in := t.TempDir()
	p := writeFile(t, in, "ddl.jsonl", strings.Join(lines, "\n")+"\n")
	dir := t.TempDir()
	if _, err := export(t, dir, nil, p); err != nil {
		t.Fatal(err)
	}
	lines = append(lines, `{"qual_table":"S.R","op_type":"INSERT","op_ts":"2026-07-13T04:00:05Z","xid":"x","pos":"p5","after":{"ID":4,"X":1.5}}`)
	writeFile(t, in, "ddl.jsonl", strings.Join(lines, "\n")+"\n")
	if _, err := export(t, dir, nil, p); err != nil {
		t.Fatal(err)
	}
	db := openDuck(t)
	rows := query(t, db, `SELECT ID, X::VARCHAR, schema_version FROM `+lakeGlob(dir, "S.R")+` ORDER BY ID`)
	equalLines(t, "rows", rowStrings(rows), []string{"2|7.00|2", "3|7.25|3", "4|1.50|3"})
	// Each file's X has the type its version's document gives.
	files := query(t, db, `SELECT DISTINCT file_name, regexp_extract(file_name, 'schema_version=(\d+)', 1), logical_type IS NOT NULL AND logical_type LIKE '%Decimal%' FROM parquet_schema('`+dir+`/S.R/*/*/*.parquet') WHERE name = 'X' ORDER BY 2`)
	var perFile []string
	for _, f := range files {
		perFile = append(perFile, fmt.Sprintf("%v|%v", f[1], f[2]))
	}
	equalLines(t, "X in the files", perFile, []string{"2|false", "3|true", "3|true"})
	for version, want := range map[int]string{2: "int64", 3: "decimal(38, 2)"} {
		if got := schemaDocTypes(t, dir, "S.R", version)["X"]; got != want {
			t.Errorf("v%d.json: X is %s, want %s", version, got, want)
		}
	}
}

// A table's schema record may come after its metadata (Data Streams sends
// it before the first DML that needs it): its types apply at once, in the
// next version, whether DML came under the first (S.B) or not (S.A, whose
// first version has no files); the metadata repeated later opens nothing.
// A rerun over the grown input rebuilds the same versions and writes only
// the new rows.
func TestSchemaRecordAfterMetadataTypesTheVersionInForce(t *testing.T) {
	meta := func(table string) string {
		return `{"op_type":"OBJECT_METADATA","qual_table":"` + table + `","columns":{"ID":{"type":"number","null":false,"key":true},"AMT":{"type":"number","null":true,"key":false}}}`
	}
	schema := func(table string) string {
		return `{"$schema":"http://json-schema.org/draft-04/schema#","id":"` + table + `","type":"object","definitions":{"row":{"type":"object","properties":{"ID":{"type":"integer"},"AMT":{"type":["number","null"],"multipleOf":0.01}}}},"properties":{"after":{"$ref":"#/definitions/row"},"before":{"$ref":"#/definitions/row"}}}`
	}
	ins := func(table string, pos int, id, amt string) string {
		return fmt.Sprintf(`{"qual_table":"%s","op_type":"INSERT","op_ts":"2026-07-13T04:00:%02dZ","xid":"x","pos":"p%d","after":{"ID":%s,"AMT":%s}}`, table, pos, pos, id, amt)
	}
	lines := []string{
		meta("S.A"), schema("S.A"), ins("S.A", 1, "9007199254740993", "12.34"),
		meta("S.B"), ins("S.B", 2, "1", "0.5"), schema("S.B"), ins("S.B", 3, "9007199254740993", "1.25"),
		meta("S.A"), meta("S.B"), ins("S.A", 4, "2", "0.01"),
	}
	in := t.TempDir()
	p := writeFile(t, in, "in.jsonl", strings.Join(lines, "\n")+"\n")
	dir := t.TempDir()
	for run := range 2 {
		if run == 1 {
			lines = append(lines, ins("S.A", 5, "3", "9.99"), ins("S.B", 6, "2", "2.5"))
			writeFile(t, in, "in.jsonl", strings.Join(lines, "\n")+"\n")
		}
		sum, err := export(t, dir, nil, p)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Rejected != 0 {
			t.Fatalf("run %d: %d rejected: %v", run+1, sum.Rejected, readDLQ(t, dir))
		}
	}
	db := openDuck(t)
	rows := query(t, db, `SELECT ID::VARCHAR, AMT::VARCHAR, schema_version FROM `+lakeGlob(dir, "S.A")+` ORDER BY ID`)
	equalLines(t, "S.A", rowStrings(rows), []string{"2|0.01|2", "3|9.99|2", "9007199254740993|12.34|2"})
	// Each version on its own: read together, DuckDB unions BIGINT with
	// the first version's DOUBLE.
	for version, want := range map[int][]string{1: {"1.0|0.5"}, 2: {"2|2.50", "9007199254740993|1.25"}} {
		rows = query(t, db, fmt.Sprintf(`SELECT ID::VARCHAR, AMT::VARCHAR FROM read_parquet('%s/S.B/schema_version=%d/*/*.parquet') ORDER BY ID`, dir, version))
		equalLines(t, fmt.Sprintf("S.B v%d", version), rowStrings(rows), want)
	}
	for _, c := range []struct {
		table   string
		version int
		id      string
	}{{"S.A", 1, "float64"}, {"S.A", 2, "int64"}, {"S.B", 1, "float64"}, {"S.B", 2, "int64"}} {
		if got := schemaDocTypes(t, dir, c.table, c.version)["ID"]; got != c.id {
			t.Errorf("%s v%d.json: ID is %s, want %s", c.table, c.version, got, c.id)
		}
	}
	for _, extra := range []string{"S.A/v3.json", "S.B/v3.json"} {
		if _, err := os.Stat(filepath.Join(dir, "_schemas", extra)); err == nil {
			t.Errorf("_schemas/%s exists: the repeated metadata opened a version", extra)
		}
	}
}

// A DDL that changes no column (row movement, storage, partitions) holds
// no DML: Data Streams need not refresh the metadata after it, and each
// row waited for a hold limit.
func TestDDLThatChangesNoColumnHoldsNothing(t *testing.T) {
	lines := []string{ordersMeta,
		`{"op_type":"DDL","op_ts":"2026-07-13T04:01:00Z","pos":"d1","ddl":{"object":{"catalog":"","schema":"S","object":"T"},"statement":"ALTER TABLE S.T ENABLE ROW MOVEMENT"}}`}
	var want []string
	for i := 1; i <= 10; i++ {
		lines = append(lines, dml(fmt.Sprint(i), ""))
		want = append(want, fmt.Sprintf("%d|2", i))
	}
	dir := t.TempDir()
	var logs syncbuf.Buffer
	sum, err := export(t, dir, func(c *pipeline.Config) {
		c.HoldMaxRecords = 2
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	}, writeFile(t, t.TempDir(), "in.jsonl", strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "holding DML") || sum.Rejected != 0 {
		t.Errorf("%d rejected, log:\n%s\nwant nothing held", sum.Rejected, logs.String())
	}
	rows := query(t, openDuck(t), `SELECT ID, schema_version FROM `+lakeGlob(dir, "S.T")+` ORDER BY ID`)
	equalLines(t, "rows", rowStrings(rows), want)
}

// TestForcedReleaseUnderAHoldingVersionOpensTheNext: DML held after a DDL
// that is not understood, and released by a hold limit before the refresh,
// is written under the holding version's columns; the refresh, with a new
// column, then opens the next version instead of replacing that one.
func TestForcedReleaseUnderAHoldingVersionOpensTheNext(t *testing.T) {
	meta := func(cols string) string {
		return `{"op_type":"OBJECT_METADATA","qual_table":"S.H","columns":{"ID":{"type":"number","null":false,"key":true}` + cols + `}}`
	}
	row := func(id, extra string) string {
		return `{"qual_table":"S.H","op_type":"INSERT","op_ts":"2026-07-13T04:00:0` + id + `Z","xid":"x","pos":"p` + id + `","after":{"ID":` + id + extra + `}}`
	}
	lines := []string{
		meta(""),
		`{"op_type":"DDL","op_ts":"2026-07-13T04:00:00Z","xid":"x","pos":"d1","ddl":{"object":{"catalog":"","schema":"S","object":"H"},"statement":"ALTER TABLE S.H SOMETHING UNPARSEABLE"}}`,
		row("1", ""), row("2", ""), row("3", ""),
		meta(`,"Z":{"type":"string","null":true,"key":false}`),
		row("4", `,"Z":"z"`),
	}
	p := writeFile(t, t.TempDir(), "hold.jsonl", strings.Join(lines, "\n")+"\n")
	dir := t.TempDir()
	sum, err := export(t, dir, func(c *pipeline.Config) { c.HoldMaxRecords = 2 }, p)
	if err != nil || sum.Rejected != 0 {
		t.Fatalf("%+v %v", sum, err)
	}
	rows := query(t, openDuck(t), `SELECT ID, Z, schema_version FROM `+lakeGlob(dir, "S.H")+` ORDER BY ID`)
	equalLines(t, "rows", rowStrings(rows), []string{"1|NULL|2", "2|NULL|2", "3|NULL|2", "4|z|3"})
}

// TestRerunKeepsTheVersionsAHoldLimitWrote: DML held under a version
// opened by a DDL that is not understood, and released by a hold limit (or
// by the commit at the end of the input) before its refresh, is written
// under that version's columns, which marks it. A rerun of the grown input
// skips those rows as durable; it must still open the next version for a
// refresh with other columns, as the first run did or would have, instead
// of replacing the version under its number: every data file keeps
// matching its _schemas document, over a third run too.
func TestRerunKeepsTheVersionsAHoldLimitWrote(t *testing.T) {
	meta := func(cols string) string {
		return `{"op_type":"OBJECT_METADATA","qual_table":"S.H","columns":{"ID":{"type":"number","null":false,"key":true}` + cols + `}}`
	}
	row := func(id, extra string) string {
		return `{"qual_table":"S.H","op_type":"INSERT","op_ts":"2026-07-13T04:00:0` + id + `Z","xid":"x","pos":"p` + id + `","after":{"ID":` + id + extra + `}}`
	}
	ddl := `{"op_type":"DDL","op_ts":"2026-07-13T04:00:00Z","xid":"x","pos":"d1","ddl":{"object":{"catalog":"","schema":"S","object":"H"},"statement":"ALTER TABLE S.H SOMETHING UNPARSEABLE"}}`
	withZ := meta(`,"Z":{"type":"string","null":true,"key":false}`)
	held := []string{meta(""), ddl, row("1", ""), row("2", ""), row("3", "")}
	refreshed := slices.Concat(held, []string{withZ, row("4", `,"Z":"z"`)})
	type input struct{ hold, next []string } // the two input files' lines; no next file when empty
	for _, tc := range []struct {
		name    string
		runs    []input
		holdMax int
		want    []string
	}{{
		// The first run ends while the rows wait: its last commit releases
		// them. The refresh comes with the rerun.
		name: "refresh after the checkpoint",
		runs: []input{{hold: held}, {hold: refreshed}, {hold: slices.Concat(refreshed, []string{row("6", `,"Z":"w"`)})}},
		want: []string{"1|NULL|2", "2|NULL|2", "3|NULL|2", "4|z|3", "6|w|3"},
	}, {
		// A hold limit releases the rows mid-file; the refresh that
		// follows, below the checkpoint on the rerun, opened version 3.
		name: "refresh below the checkpoint",
		runs: []input{{hold: refreshed}, {hold: slices.Concat(refreshed, []string{row("5", `,"Z":"y"`)})},
			{hold: slices.Concat(refreshed, []string{row("5", `,"Z":"y"`), row("6", `,"Z":"w"`)})}},
		holdMax: 2,
		want:    []string{"1|NULL|2", "2|NULL|2", "3|NULL|2", "4|z|3", "5|y|3", "6|w|3"},
	}, {
		// The files share one catalog: the refresh comes in the next file.
		name: "refresh in the next file",
		runs: []input{{hold: held}, {hold: held, next: []string{withZ, row("4", `,"Z":"z"`)}},
			{hold: held, next: []string{withZ, row("4", `,"Z":"z"`), row("6", `,"Z":"w"`)}}},
		want: []string{"1|NULL|2", "2|NULL|2", "3|NULL|2", "4|z|3", "6|w|3"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			in, dir := t.TempDir(), t.TempDir()
			holdMax := func(c *pipeline.Config) { c.HoldMaxRecords = tc.holdMax }
			var before map[int]string
			for i, run := range tc.runs {
				paths := []string{writeFile(t, in, "hold.jsonl", strings.Join(run.hold, "\n")+"\n")}
				if len(run.next) > 0 {
					paths = append(paths, writeFile(t, in, "next.jsonl", strings.Join(run.next, "\n")+"\n"))
				}
				if sum, err := export(t, dir, holdMax, paths...); err != nil || sum.Rejected != 0 {
					t.Fatalf("run %d: %+v %v", i+1, sum, err)
				}
				docs := schemaFields(t, dir, "S.H")
				for n, fields := range before {
					if docs[n] != fields {
						t.Errorf("run %d rewrote _schemas/S.H/v%d.json with other columns:\nbefore:\n%s\nnow:\n%s", i+1, n, fields, docs[n])
					}
				}
				checkFilesMatchSchemas(t, dir, "S.H", docs)
				before = docs
			}
			rows := query(t, openDuck(t), `SELECT ID, Z, schema_version FROM `+lakeGlob(dir, "S.H")+` ORDER BY ID`)
			equalLines(t, "rows", rowStrings(rows), tc.want)
		})
	}
}

// schemaFields reads every _schemas/{table}/v{N}.json of dir: version →
// its Arrow fields as "name:type" lines.
func schemaFields(t *testing.T, dir, table string) map[int]string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "_schemas", table, "v*.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Version int                           `json:"schema_version"`
			Fields  []struct{ Name, Type string } `json:"arrow_schema"`
		}
		if err := json.Unmarshal(data, &d); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		var lines []string
		for _, f := range d.Fields {
			lines = append(lines, f.Name+":"+f.Type)
		}
		out[d.Version] = strings.Join(lines, "\n")
	}
	return out
}

// checkFilesMatchSchemas fails unless every data file of table has the
// Arrow fields (names and types) of its version's _schemas document.
func checkFilesMatchSchemas(t *testing.T, dir, table string, docs map[int]string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, table, "schema_version=*", "*", "*.parquet"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no data files of %s (%v)", table, err)
	}
	for _, f := range files {
		var n int
		if _, err := fmt.Sscanf(filepath.Base(filepath.Dir(filepath.Dir(f))), "schema_version=%d", &n); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		pf, err := file.OpenParquetFile(f, false)
		if err != nil {
			t.Fatal(err)
		}
		fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := fr.Schema()
		pf.Close()
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, fd := range sc.Fields() {
			// Parquet names a list's element "element", Arrow "item".
			lines = append(lines, fd.Name+":"+strings.ReplaceAll(fd.Type.String(), "list<element: ", "list<item: "))
		}
		if got := strings.Join(lines, "\n"); got != docs[n] {
			t.Errorf("%s does not match _schemas/%s/v%d.json:\nfile:\n%s\ndocument:\n%s", f, table, n, got, docs[n])
		}
	}
}

// TestRerunKnowsEveryFilesMarksBeforeReading: the mark that a hold limit
// wrote under a version is in the checkpoint of the file whose rows were
// released (b), not in that of the file the DDL came from (a), which the
// run did not rewrite. When a grows a refresh and is read first, the
// rerun must already know the mark, from every input file's checkpoint,
// or it replaces the version b's files were written under.
func TestRerunKnowsEveryFilesMarksBeforeReading(t *testing.T) {
	// Not understood: b's rows wait for a hold limit, the end of the
	// input. Understood, changing no column: they are written at once.
	for _, stmt := range []string{"ALTER TABLE S.H SOMETHING UNPARSEABLE", "ALTER TABLE S.H SPLIT PARTITION P1 AT (5)"} {
		t.Run(stmt, func(t *testing.T) { rerunKnowsEveryFilesMarks(t, stmt) })
	}
}

func rerunKnowsEveryFilesMarks(t *testing.T, stmt string) {
	meta := `{"op_type":"OBJECT_METADATA","qual_table":"S.H","columns":{"ID":{"type":"number","null":false,"key":true}}}`
	withZ := `{"op_type":"OBJECT_METADATA","qual_table":"S.H","columns":{"ID":{"type":"number","null":false,"key":true},"Z":{"type":"string","null":true,"key":false}}}`
	row := func(id, extra string) string {
		return `{"qual_table":"S.H","op_type":"INSERT","op_ts":"2026-07-13T04:00:0` + id + `Z","xid":"x","pos":"p` + id + `","after":{"ID":` + id + extra + `}}`
	}
	ddl := `{"op_type":"DDL","op_ts":"2026-07-13T04:00:00Z","xid":"x","pos":"d1","ddl":{"object":{"catalog":"","schema":"S","object":"H"},"statement":"` + stmt + `"}}`
	in, dir := t.TempDir(), t.TempDir()
	lines := func(l ...string) string { return strings.Join(l, "\n") + "\n" }
	a := writeFile(t, in, "a.jsonl", lines(meta, ddl))
	runs := []func() []string{
		func() []string { return []string{a} },
		func() []string { return []string{a, writeFile(t, in, "b.jsonl", lines(row("1", ""), row("2", "")))} },
		func() []string {
			writeFile(t, in, "a.jsonl", lines(meta, ddl, withZ, row("4", `,"Z":"z"`)))
			return []string{a, filepath.Join(in, "b.jsonl")}
		},
	}
	var before map[int]string
	for i, paths := range runs {
		if sum, err := export(t, dir, nil, paths()...); err != nil || sum.Rejected != 0 {
			t.Fatalf("run %d: %+v %v", i+1, sum, err)
		}
		docs := schemaFields(t, dir, "S.H")
		for n, fields := range before {
			if docs[n] != fields {
				t.Errorf("run %d rewrote _schemas/S.H/v%d.json with other columns:\nbefore:\n%s\nnow:\n%s", i+1, n, fields, docs[n])
			}
		}
		if i > 0 {
			checkFilesMatchSchemas(t, dir, "S.H", docs)
		}
		before = docs
	}
	rows := query(t, openDuck(t), `SELECT ID, Z, schema_version FROM `+lakeGlob(dir, "S.H")+` ORDER BY ID`)
	equalLines(t, "rows", rowStrings(rows), []string{"1|NULL|2", "2|NULL|2", "4|z|3"})
}

// schemaDocTypes reads the column types of a version's _schemas document.
func schemaDocTypes(t *testing.T, dir, table string, version int) map[string]string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(dir, "_schemas", table, fmt.Sprintf("v%d.json", version)))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Schema []struct{ Name, Type string } `json:"arrow_schema"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	for _, f := range d.Schema {
		types[f.Name] = f.Type
	}
	return types
}
