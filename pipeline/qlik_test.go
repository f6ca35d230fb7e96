package pipeline_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
	"github.com/lakehouse-exporter/lakehouse-exporter/pipeline"
)

const qlikSample = "../testdata/qlik/sample.jsonl"

func autoDecoder(t *testing.T, qlik cdc.QlikOptions) pipeline.Decoder {
	gg, err := cdc.NewGoldenGate(cdc.GoldenGateNames{})
	if err != nil {
		t.Fatal(err)
	}
	return &cdc.Auto{GoldenGate: gg, Qlik: cdc.NewQlik(qlik)}
}

// TestQlikStreamReadBackWithDuckDB: full load, CDC, a tableVersion change
// and a partial columnMask, read back with DuckDB. Expected values are
// worked out by hand from testdata/qlik/sample.jsonl.
func TestQlikStreamReadBackWithDuckDB(t *testing.T) {
	dir := t.TempDir()
	sum, err := export(t, dir, func(c *pipeline.Config) { c.Decoder = cdc.NewQlik(cdc.QlikOptions{}) }, qlikSample)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rejected != 0 {
		t.Fatalf("%d rejected", sum.Rejected)
	}
	db := openDuck(t)
	rows := query(t, db, `SELECT op_type, make_timestamp(epoch_us(op_ts))::VARCHAR, xid, pos, ID, NAME, BALANCE::VARCHAR, BIG::VARCHAR,
		make_timestamp(epoch_us(CREATED))::VARCHAR, BIRTH::VARCHAR, ACTIVE, NOTE, TIER, absent_columns::VARCHAR, changed_columns::VARCHAR,
		change_seq, txn_event_counter, txn_last_event, schema_version
		FROM `+lakeGlob(dir, "SALES.CUSTOMERS")+` ORDER BY op_ts, ID`)
	equalLines(t, "SALES.CUSTOMERS", rowStrings(rows), []string{
		// full load: no timestamp, dated by the metadata message (03:00)
		"REFRESH|2026-07-13 03:00:00|NULL|NULL|1|Ada|100.50|18446744073709551615|2026-07-01 10:00:00.123456|1815-12-10|true|first|NULL|NULL|NULL|NULL|0|false|1",
		"REFRESH|2026-07-13 03:00:00|NULL|NULL|2|Grace|-7.25|0|2026-07-02 11:30:00|1906-12-09|false|NULL|NULL|NULL|NULL|NULL|NULL|NULL|1",
		"INSERT|2026-07-13 04:00:00|00000000000000000000000000060008|00000000.00bb2531.00000001.0000.02.0000:154.6963.16|3|Edsger|0.01|42|2026-07-13 04:00:00.000001|1930-05-11|true|hello|NULL|NULL|[ID, NAME, BALANCE, BIG, CREATED, BIRTH, ACTIVE, NOTE]|20260713040000000000000000000000001|1|true|1",
		// changeMask 06 = ordinals 2 and 3
		"UPDATE|2026-07-13 04:01:00|00000000000000000000000000060009|00000000.00bb2531.00000001.0000.02.0000:154.6963.17|1|Ada L.|120.00|18446744073709551615|2026-07-01 10:00:00.123456|1815-12-10|true|first|NULL|NULL|[NAME, BALANCE]|20260713040100000000000000000000002|1|false|1",
		// columnMask 7F: NOTE (ordinal 8) was not replicated: absent, not null; changeMask 42 = ordinals 2 and 7
		"UPDATE|2026-07-13 04:02:00|00000000000000000000000000060009|00000000.00bb2531.00000001.0000.02.0000:154.6963.18|3|Edsger W.|0.01|42|2026-07-13 04:00:00.000001|1930-05-11|false|NULL|NULL|[NOTE]|[NAME, ACTIVE]|20260713040200000000000000000000003|2|true|1",
		// DELETE with only the key replicated (columnMask 01)
		"DELETE|2026-07-13 04:03:00|0000000000000000000000000006000A|00000000.00bb2531.00000001.0000.02.0000:154.6963.19|2|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|[NAME, BALANCE, BIG, CREATED, BIRTH, ACTIVE, NOTE]|[ID]|20260713040300000000000000000000004|1|true|1",
		// tableVersion 2 added TIER: schema version 2
		"INSERT|2026-07-13 05:01:00|0000000000000000000000000006000B|00000000.00bb2531.00000001.0000.02.0000:154.6963.20|4|Barbara|99999.99|7|2026-07-13 05:01:00|1939-11-07|true|x|GOLD|NULL|[ID, NAME, BALANCE, BIG, CREATED, BIRTH, ACTIVE, NOTE, TIER]|20260713050100000000000000000000005|1|true|2",
	})
	types := query(t, db, `SELECT typeof(ID), typeof(NAME), typeof(BALANCE), typeof(BIG), typeof(CREATED), typeof(BIRTH), typeof(ACTIVE), typeof(NOTE)
		FROM `+lakeGlob(dir, "SALES.CUSTOMERS")+` LIMIT 1`)
	// UINT8 widens to DECIMAL(20,0): no unsigned type, no lost precision
	equalLines(t, "types", rowStrings(types), []string{
		"BIGINT|VARCHAR|DECIMAL(12,2)|DECIMAL(20,0)|TIMESTAMP WITH TIME ZONE|DATE|BOOLEAN|VARCHAR"})
	for _, v := range []string{"v1.json", "v2.json"} {
		if _, err := os.Stat(filepath.Join(dir, "_schemas", "SALES.CUSTOMERS", v)); err != nil {
			t.Errorf("schema %s: %v", v, err)
		}
	}
}

// TestMixedGoldenGateAndQlikInOneStream: with the auto format, the two
// formats can share one input.
func TestMixedGoldenGateAndQlikInOneStream(t *testing.T) {
	gg, _ := os.ReadFile(samplePath)
	ql, _ := os.ReadFile(qlikSample)
	a, b := strings.Split(strings.TrimSpace(string(gg)), "\n"), strings.Split(strings.TrimSpace(string(ql)), "\n")
	var mixed []string
	for i := 0; i < len(a) || i < len(b); i++ {
		if i < len(a) {
			mixed = append(mixed, a[i])
		}
		if i < len(b) {
			mixed = append(mixed, b[i])
		}
	}
	p := writeFile(t, t.TempDir(), "mixed.jsonl", strings.Join(mixed, "\n"))
	dir := t.TempDir()
	sum, err := export(t, dir, func(c *pipeline.Config) { c.Decoder = autoDecoder(t, cdc.QlikOptions{}) }, p)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rejected != 0 || sum.RowsByTable["SALES.ORDERS"] != 6 || sum.RowsByTable["HR.EMPLOYEES"] != 6 || sum.RowsByTable["SALES.CUSTOMERS"] != 7 {
		t.Fatalf("summary %+v", sum)
	}
	db := openDuck(t)
	counts := query(t, db, `SELECT (SELECT count(*) FROM `+lakeGlob(dir, "SALES.ORDERS")+`), (SELECT count(*) FROM `+lakeGlob(dir, "SALES.CUSTOMERS")+`)`)
	equalLines(t, "row counts", rowStrings(counts), []string{"6|7"})
}

// TestQlikWithoutMetadata: with inference off, data messages of a table
// without a metadata message end in the dead-letter output; with it on,
// their columns define the table and new columns open a new version.
func TestQlikWithoutMetadata(t *testing.T) {
	lines := []string{
		`{"headers":{"operation":"INSERT","timestamp":"2026-07-13T04:00:00","streamPosition":"p1"},"data":{"ID":"1","NAME":"a"}}`,
		`{"headers":{"operation":"INSERT","timestamp":"2026-07-13T04:00:01","streamPosition":"p2"},"data":{"ID":"2","NAME":"b","EXTRA":"new"}}`,
	}
	p := writeFile(t, t.TempDir(), "nometa.jsonl", strings.Join(lines, "\n"))

	dir := t.TempDir()
	sum, err := export(t, dir, func(c *pipeline.Config) { c.Decoder = cdc.NewQlik(cdc.QlikOptions{DefaultTable: "APP.EVENTS"}) }, p)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rejected != 2 || sum.RejectedBy[cdc.ReasonNoMetadata] != 2 {
		t.Errorf("without inference: %+v", sum)
	}

	dir = t.TempDir()
	sum, err = export(t, dir, func(c *pipeline.Config) {
		c.Decoder = cdc.NewQlik(cdc.QlikOptions{DefaultTable: "APP.EVENTS"})
		c.InferColumns = true
		c.Schema.Hints = hints(t, map[string]string{"APP.EVENTS:ID": "int64"})
	}, p)
	if err != nil || sum.Rejected != 0 {
		t.Fatalf("with inference: %+v %v", sum, err)
	}
	rows := query(t, openDuck(t), `SELECT ID, typeof(ID), NAME, EXTRA, schema_version FROM `+lakeGlob(dir, "APP.EVENTS")+` ORDER BY ID`)
	equalLines(t, "inferred", rowStrings(rows), []string{"1|BIGINT|a|NULL|1", "2|BIGINT|b|new|2"})
}

// TestQlikBadMessagesGoToDeadLetters covers the Qlik-specific rejects.
func TestQlikBadMessagesGoToDeadLetters(t *testing.T) {
	ql, _ := os.ReadFile(qlikSample)
	meta := strings.SplitN(string(ql), "\n", 2)[0]
	lines := []string{
		meta,
		`{"magic":"atMSX","type":"DT","message":{}}`, // bad magic
		`{"schema":"SALES","table":"CUSTOMERS","headers":{"operation":"MERGE","timestamp":"2026-07-13T04:00:00"},"data":{"ID":"9"}}`,                     // unknown operation
		`{"schema":"SALES","table":"CUSTOMERS","headers":{"operation":"INSERT","timestamp":"2026-07-13T04:00:00","columnMask":"3FF"},"data":{"ID":"9"}}`, // mask names ordinal 10 of 8
		`{"schema":"SALES","table":"CUSTOMERS","headers":{"operation":"INSERT","timestamp":"2026-07-13T04:00:00","changeMask":"XY"},"data":{"ID":"9"}}`,  // not hex
		`{"schema":"SALES","table":"CUSTOMERS","headers":{"operation":"INSERT","timestamp":"2026-07-13T04:00:00"},"data":{"ID":"9","BALANCE":"1.005"}}`,  // scale
		`{"schema":"SALES","table":"CUSTOMERS","headers":{"operation":"INSERT","timestamp":"2026-07-13T04:00:00"},"data":{"ID":"10"}}`,                   // good
	}
	p := writeFile(t, t.TempDir(), "bad.jsonl", strings.Join(lines, "\n"))
	dir := t.TempDir()
	sum, err := export(t, dir, func(c *pipeline.Config) { c.Decoder = autoDecoder(t, cdc.QlikOptions{}) }, p)
	if err != nil {
		t.Fatal(err)
	}
	got := readDLQ(t, dir)
	want := []string{"malformed_json", "unknown_op_type", "bad_mask", "bad_mask", "value_mismatch"}
	if len(got) != len(want) {
		t.Fatalf("%d dead letters: %+v", len(got), got)
	}
	for i, w := range want {
		if got[i].Reason != w || got[i].Offset != int64(i+2) {
			t.Errorf("dead letter %d: line %d reason %s (%s), want line %d %s", i, got[i].Offset, got[i].Reason, got[i].Error, i+2, w)
		}
	}
	if sum.RowsByTable["SALES.CUSTOMERS"] != 1 {
		t.Errorf("good rows: %v", sum.RowsByTable)
	}
}

// TestQlikFullLoadRowWithoutAnyDate: a full-load row has no timestamp and
// takes its table's lineage.timestamp; with neither (inferred columns have
// no metadata message) it is dated by the run, with a warning.
func TestQlikFullLoadRowWithoutAnyDate(t *testing.T) {
	md := func(table, lineageTS string) string {
		return `{"magic":"atMSG","type":"MD","message":{"lineage":{"class":"TABLE","type":"TABLE","schema":"Q","table":"` + table + `","tableVersion":1` + lineageTS +
			`},"tableStructure":{"tableColumns":{"ID":{"ordinal":1,"type":"INT4","length":4,"precision":0,"scale":0,"primaryKeyPosition":1}}}}}`
	}
	refresh := func(table, id string) string {
		return `{"magic":"atMSG","type":"DT","message":{"schema":"Q","table":"` + table + `","data":{"ID":"` + id + `"},"beforeData":null,"headers":{"operation":"REFRESH","changeSequence":"","timestamp":"","streamPosition":"","transactionId":""}}}`
	}
	lines := []string{
		md("UNDATED", ""), refresh("UNDATED", "1"),
		md("DATED", `,"timestamp":"2026-07-13T03:00:00.000"`), refresh("DATED", "2"),
	}
	p := writeFile(t, t.TempDir(), "load.jsonl", strings.Join(lines, "\n"))
	dir := t.TempDir()
	now := time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)
	var logs strings.Builder
	sum, err := export(t, dir, func(c *pipeline.Config) {
		c.Decoder = autoDecoder(t, cdc.QlikOptions{})
		c.Now = func() time.Time { return now }
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	}, p)
	if err != nil || sum.Rejected != 0 {
		t.Fatalf("%+v %v", sum, err)
	}
	rows := query(t, openDuck(t), `SELECT ID, op_type, op_ts::VARCHAR, dt::VARCHAR FROM `+lakeGlob(dir, "")+` ORDER BY ID`)
	equalLines(t, "rows", rowStrings(rows), []string{"1|REFRESH|2026-09-01 12:00:00+00|2026-09-01", "2|REFRESH|2026-07-13 03:00:00+00|2026-07-13"})
	if n := strings.Count(logs.String(), "dated by the time of the run"); n != 1 || !strings.Contains(logs.String(), "table=Q.UNDATED") {
		t.Errorf("%d warnings:\n%s", n, logs.String())
	}
}

// TestQlikInferredColumnNameNotUTF8: with inferred columns a data key
// becomes a column name; one that is not UTF-8 is refused once, as
// bad_metadata, and the lake stays readable.
func TestQlikInferredColumnNameNotUTF8(t *testing.T) {
	lines := []string{
		`{"headers":{"operation":"INSERT","timestamp":"2026-07-13T04:00:00","streamPosition":"p1"},"data":{"ID":"1","N` + "\xff" + `AME":"a"}}`,
		`{"headers":{"operation":"INSERT","timestamp":"2026-07-13T04:00:01","streamPosition":"p2"},"data":{"ID":"2","NAME":"b"}}`,
	}
	p := writeFile(t, t.TempDir(), "infer.jsonl", strings.Join(lines, "\n"))
	dir := t.TempDir()
	sum, err := export(t, dir, func(c *pipeline.Config) {
		c.Decoder = cdc.NewQlik(cdc.QlikOptions{DefaultTable: "APP.EVENTS"})
		c.InferColumns = true
	}, p)
	if err != nil {
		t.Fatal(err)
	}
	if got := readDLQ(t, dir); sum.Rejected != 1 || len(got) != 1 || got[0].Reason != "bad_metadata" || got[0].Offset != 1 {
		t.Fatalf("rejected %v, dead letters %+v: want line 1 once as bad_metadata", sum.RejectedBy, got)
	}
	rows := query(t, openDuck(t), `SELECT * EXCLUDE (op_ts) FROM `+lakeGlob(dir, "APP.EVENTS"))
	if len(rows) != 1 {
		t.Errorf("rows %v", rows)
	}
}

// TestQlikBinaryIsHexDigits: Qlik's JSON carries BYTES and BLOB values as
// hexadecimal digits, in either case; base64 or an odd count of digits is
// a dead letter, not bytes made up from them.
func TestQlikBinaryIsHexDigits(t *testing.T) {
	md := `{"lineage":{"class":"TABLE","type":"TABLE","schema":"Q","table":"BIN","tableVersion":1,"timestamp":"2026-07-13T03:00:00.000"},` +
		`"tableStructure":{"tableColumns":{"ID":{"ordinal":1,"type":"INT4","length":4,"precision":0,"scale":0,"primaryKeyPosition":1},` +
		`"RAW":{"ordinal":2,"type":"BYTES","length":16,"precision":0,"scale":0,"primaryKeyPosition":0},` +
		`"DOC":{"ordinal":3,"type":"BLOB","length":0,"precision":0,"scale":0,"primaryKeyPosition":0}}}}`
	row := func(id, raw, doc string) string {
		return `{"schema":"Q","table":"BIN","headers":{"operation":"INSERT","timestamp":"2026-07-13T04:00:00"},"data":{"ID":"` + id + `","RAW":` + raw + `,"DOC":` + doc + `}}`
	}
	lines := []string{md,
		row("1", `"DEADBEEF"`, `"00ff10"`),
		row("2", `"0a0B"`, `""`),
		row("3", `null`, `"CAFE"`),
		row("4", `"QUJD"`, `null`), // base64 of "ABC": not hex
		row("5", `"ABC"`, `null`),  // odd
	}
	p := writeFile(t, t.TempDir(), "bin.jsonl", strings.Join(lines, "\n"))
	dir := t.TempDir()
	sum, err := export(t, dir, func(c *pipeline.Config) { c.Decoder = cdc.NewQlik(cdc.QlikOptions{}) }, p)
	if err != nil {
		t.Fatal(err)
	}
	rows := query(t, openDuck(t), `SELECT ID, typeof(RAW), hex(RAW), octet_length(DOC), hex(DOC) FROM `+lakeGlob(dir, "Q.BIN")+` ORDER BY ID`)
	equalLines(t, "binary", rowStrings(rows), []string{"1|BLOB|DEADBEEF|3|00FF10", "2|BLOB|0A0B|0|", "3|BLOB|NULL|2|CAFE"})
	got := readDLQ(t, dir)
	if sum.Rejected != 2 || len(got) != 2 {
		t.Fatalf("%d rejected, dead letters %+v", sum.Rejected, got)
	}
	for i, d := range got {
		if d.Reason != "value_mismatch" || !strings.Contains(d.Error, "hexadecimal") || d.Offset != int64(5+i) {
			t.Errorf("dead letter %d: line %d %s: %s", i, d.Offset, d.Reason, d.Error)
		}
	}
}

// TestQlikDatetimeFinerThanMicroseconds: a DATETIME whose scale passes
// the lake's microseconds (SQL Server's datetime2(7), Oracle's
// TIMESTAMP(9)) keeps its values' exact text; every row of such a column
// used to be dead-lettered for its seventh digit. Scale 6 stays a
// timestamp.
func TestQlikDatetimeFinerThanMicroseconds(t *testing.T) {
	md := `{"lineage":{"class":"TABLE","type":"TABLE","schema":"Q","table":"TS","tableVersion":1,"timestamp":"2026-07-13T03:00:00.000"},` +
		`"tableStructure":{"tableColumns":{"ID":{"ordinal":1,"type":"INT4","length":4,"precision":0,"scale":0,"primaryKeyPosition":1},` +
		`"FINE":{"ordinal":2,"type":"DATETIME","length":0,"precision":0,"scale":7,"primaryKeyPosition":0},` +
		`"NANO":{"ordinal":3,"type":"DATETIME","length":0,"precision":0,"scale":9,"primaryKeyPosition":0},` +
		`"MICRO":{"ordinal":4,"type":"DATETIME","length":0,"precision":0,"scale":6,"primaryKeyPosition":0}}}}`
	row := func(id, fine, nano, micro string) string {
		return `{"schema":"Q","table":"TS","headers":{"operation":"INSERT","timestamp":"2026-07-13T04:00:00"},"data":{"ID":"` + id +
			`","FINE":` + fine + `,"NANO":` + nano + `,"MICRO":` + micro + `}}`
	}
	lines := []string{md,
		row("1", `"2026-07-13 04:00:00.1234567"`, `"2026-07-13 04:00:00.123456789"`, `"2026-07-13 04:00:00.123456"`),
		row("2", `"2026-07-13 04:00:01.0000000"`, `null`, `"2026-07-13 04:00:01"`),
	}
	p := writeFile(t, t.TempDir(), "ts.jsonl", strings.Join(lines, "\n"))
	dir := t.TempDir()
	sum, err := export(t, dir, func(c *pipeline.Config) { c.Decoder = cdc.NewQlik(cdc.QlikOptions{}) }, p)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rejected != 0 {
		t.Fatalf("%d rejected: %+v", sum.Rejected, readDLQ(t, dir))
	}
	rows := query(t, openDuck(t), `SELECT ID, typeof(FINE), FINE, typeof(NANO), NANO, typeof(MICRO), make_timestamp(epoch_us(MICRO))::VARCHAR
		FROM `+lakeGlob(dir, "Q.TS")+` ORDER BY ID`)
	equalLines(t, "timestamps", rowStrings(rows), []string{
		"1|VARCHAR|2026-07-13 04:00:00.1234567|VARCHAR|2026-07-13 04:00:00.123456789|TIMESTAMP WITH TIME ZONE|2026-07-13 04:00:00.123456",
		"2|VARCHAR|2026-07-13 04:00:01.0000000|VARCHAR|NULL|TIMESTAMP WITH TIME ZONE|2026-07-13 04:00:01",
	})
}

// TestQlikInferredColumnsIgnoreMasks: a mask's bits are ordinals of the
// metadata message; inferred columns have none, and reading the masks by
// the order the columns were first seen in (A, C, B here) lost C's value
// and dead-lettered the first message.
func TestQlikInferredColumnsIgnoreMasks(t *testing.T) {
	msg := func(data, op, masks string, i int) string {
		return fmt.Sprintf(`{"schema":"S","table":"J","data":%s,"beforeData":null,"headers":{"operation":"%s","timestamp":"2026-07-13T04:00:0%d.000"%s,"streamPosition":"p%d"}}`, data, op, i, masks, i)
	}
	lines := []string{
		msg(`{"A":"1","C":"c1"}`, "INSERT", `,"changeMask":"05"`, 1),
		msg(`{"A":"2","B":"b2","C":"c2"}`, "INSERT", `,"changeMask":"07","columnMask":"07"`, 2),
		msg(`{"A":"3","B":null,"C":"c3"}`, "UPDATE", `,"changeMask":"04","columnMask":"05"`, 3),
	}
	p := writeFile(t, t.TempDir(), "infer.jsonl", strings.Join(lines, "\n"))
	dir := t.TempDir()
	sum, err := export(t, dir, func(c *pipeline.Config) {
		c.Decoder = cdc.NewQlik(cdc.QlikOptions{})
		c.InferColumns = true
	}, p)
	if err != nil || sum.Rejected != 0 {
		t.Fatalf("%+v %v", sum, err)
	}
	rows := query(t, openDuck(t), `SELECT A, B, C, absent_columns::VARCHAR, changed_columns::VARCHAR FROM `+lakeGlob(dir, "S.J")+` ORDER BY A`)
	equalLines(t, "inferred", rowStrings(rows), []string{"1|NULL|c1|NULL|NULL", "2|b2|c2|NULL|NULL", "3|NULL|c3|NULL|NULL"})
}

// TestInferredTableWithABadNameIsDeadLettered: with inferred columns, a
// Qlik table whose name makes no folder is a bad table name for the dead
// letters, as with a metadata message; it stopped every run.
func TestInferredTableWithABadNameIsDeadLettered(t *testing.T) {
	long := strings.Repeat("S", 128) + "." + strings.Repeat("T", 128)
	schema, table, _ := strings.Cut(long, ".")
	lines := []string{
		`{"schema":"APP","table":"EVENTS","headers":{"operation":"INSERT","timestamp":"2026-07-13T04:00:00","streamPosition":"p1"},"data":{"ID":"1"}}`,
		`{"schema":"` + schema + `","table":"` + table + `","headers":{"operation":"INSERT","timestamp":"2026-07-13T04:00:01","streamPosition":"p2"},"data":{"ID":"2"}}`,
		`{"schema":"APP","table":"EVENTS","headers":{"operation":"INSERT","timestamp":"2026-07-13T04:00:02","streamPosition":"p3"},"data":{"ID":"3"}}`,
	}
	p := writeFile(t, t.TempDir(), "in.jsonl", strings.Join(lines, "\n"))
	dir := t.TempDir()
	sum, err := export(t, dir, func(c *pipeline.Config) {
		c.Decoder = cdc.NewQlik(cdc.QlikOptions{})
		c.InferColumns = true
	}, p)
	if err != nil {
		t.Fatal(err)
	}
	if sum.RejectedBy[cdc.ReasonBadTableName] != 1 || sum.RowsByTable["APP.EVENTS"] != 2 {
		t.Errorf("rejected %v, rows %v: want the long name's record as %s and APP.EVENTS' 2 rows", sum.RejectedBy, sum.RowsByTable, cdc.ReasonBadTableName)
	}
}

// TestInferredVersionsAreRebuiltOnARerun: a rerun over a grown file
// replays the columns of the records it skips as durable, so the new
// record's columns open the version a single run would have given them,
// and the earlier versions' _schemas documents stay as written.
func TestInferredVersionsAreRebuiltOnARerun(t *testing.T) {
	lines := []string{
		`{"headers":{"operation":"INSERT","timestamp":"2026-07-13T04:00:00","streamPosition":"p1"},"data":{"ID":"1","NAME":"a"}}`,
		`{"headers":{"operation":"INSERT","timestamp":"2026-07-13T04:00:01","streamPosition":"p2"},"data":{"ID":"2","NAME":"b","EXTRA":"x"}}`,
	}
	grown := `{"headers":{"operation":"INSERT","timestamp":"2026-07-13T04:00:02","streamPosition":"p3"},"data":{"ID":"3","NAME":"c","OTHER":"y"}}`
	qlik := func(c *pipeline.Config) {
		c.Decoder = cdc.NewQlik(cdc.QlikOptions{DefaultTable: "APP.EVENTS"})
		c.InferColumns = true
	}
	dir := t.TempDir()
	p := writeFile(t, t.TempDir(), "in.jsonl", strings.Join(lines, "\n")+"\n")
	if _, err := export(t, dir, qlik, p); err != nil {
		t.Fatal(err)
	}
	v1, err := os.ReadFile(filepath.Join(dir, "_schemas", "APP.EVENTS", "v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Join(append(lines, grown), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := export(t, dir, qlik, p); err != nil {
		t.Fatal(err)
	}
	rows := query(t, openDuck(t), `SELECT ID, schema_version FROM `+lakeGlob(dir, "APP.EVENTS")+` ORDER BY ID`)
	equalLines(t, "versions", rowStrings(rows), []string{"1|1", "2|2", "3|3"})
	writtenAt := regexp.MustCompile(`"written_at": "[^"]*"`)
	if again, _ := os.ReadFile(filepath.Join(dir, "_schemas", "APP.EVENTS", "v1.json")); writtenAt.ReplaceAllString(string(again), "") != writtenAt.ReplaceAllString(string(v1), "") {
		t.Errorf("_schemas v1 changed by the rerun:\n%s\nwas\n%s", again, v1)
	}
}
