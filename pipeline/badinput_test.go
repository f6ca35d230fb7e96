package pipeline_test

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/lakehouse-exporter/lakehouse-exporter/partition"
	"github.com/lakehouse-exporter/lakehouse-exporter/pipeline"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
)

const ordersMeta = `{"op_type":"OBJECT_METADATA","qual_table":"S.T","columns":{"ID":{"type":"number","null":false,"key":true},"N":{"type":"number","null":true,"key":false},"FLAG":{"type":"boolean","null":true,"key":false},"D":{"type":"number","null":true,"key":false},"NAME":{"type":"string","null":true,"key":false}}}`

func dml(id, extra string) string {
	return `{"qual_table":"S.T","op_type":"INSERT","op_ts":"2026-07-13T04:01:01Z","xid":"x","pos":"p` + id + `","after":{"ID":` + id + extra + `}}`
}

type dlqLine struct {
	Reason    string  `json:"reason"`
	Error     string  `json:"error"`
	Source    string  `json:"source"`
	Offset    int64   `json:"offset"`
	Size      int64   `json:"size"`
	Truncated bool    `json:"truncated"`
	Record    *string `json:"record"`
	Base64    *string `json:"record_base64"`
}

func readDLQ(t *testing.T, dir string) []dlqLine {
	t.Helper()
	var out []dlqLine
	files, _ := filepath.Glob(filepath.Join(dir, "_dlq", "dt=*", "*.jsonl"))
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var l dlqLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			out = append(out, l)
		}
		fh.Close()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Offset < out[j].Offset })
	return out
}

// TestBadInputGoesToDeadLetters feeds every kind of bad record between
// good ones: each bad one lands in _dlq/ with its reason, its line and its
// original text, and every good one is written.
func TestBadInputGoesToDeadLetters(t *testing.T) {
	in := t.TempDir()
	lines := []string{
		ordersMeta,         // 1
		dml("1", `,"N":7`), // 2 good
		`{"qual_table":"S.T","op_type":"INSERT",`,                                                // 3 malformed JSON
		`{"qual_table":"S.T","op_type":"MERGE","op_ts":"2026-07-13T04:01:01Z","after":{"ID":2}}`, // 4 unknown op
		dml("3", `,"N":"seven"`),             // 5 text in number column
		dml("4", `,"FLAG":"maybe"`),          // 6 not a boolean
		dml("5", `,"N":9223372036854775808`), // 7 int64 overflow
		dml("6", `,"D":1.239`),               // 8 scale that decimal(10,2) cannot hold
		`{"qual_table":"S.T","op_type":"INSERT","xid":"x","pos":"p7","after":{"ID":7}}`,                      // 9 missing op_ts
		`{"qual_table":"S.T","op_type":"INSERT","op_ts":"13/07/2026","xid":"x","pos":"p8","after":{"ID":8}}`, // 10 bad op_ts
		`{"qual_table":"NO.META","op_type":"INSERT","op_ts":"2026-07-13T04:01:01Z","after":{"A":1}}`,         // 11 never gets metadata
		dml("9", `,"N":5,"D":10.5,"FLAG":true,"NAME":"ok"`),                                                  // 12 good
		dml("10", `,"GHOST":1`), // 13 column not in metadata
		`{"qual_table":"S.T","op_type":"UPDATE","op_ts":"2026-07-13T04:01:01Z","before":{"ID":1}}`, // 14 update without after image
		`[1,2,3]`,              // 15 not an object
		dml("11", `,"N":12.0`), // 16 good: 12.0 is an integer
		`{"qual_table":"S.T","op_type":"INSERT","op_ts":"2026-07-13T04:01:01Z","xid":"x` + "\xff" + `","pos":"p12","after":{"ID":12}}`, // 17 xid not UTF-8
		`{"qual_table":"S.T","op_type":"INSERT","op_ts":"2026-07-13T04:01:01Z","xid":"x","pos":"p` + "\xc3(" + `","after":{"ID":13}}`,  // 18 pos not UTF-8
		dml("14", ""), // 19 good
	}
	p := writeFile(t, in, "bad.jsonl", strings.Join(lines, "\n")+"\n")
	dir := t.TempDir()
	sum, err := export(t, dir, func(c *pipeline.Config) {
		c.Schema.Hints = hints(t, map[string]string{"S.T:N": "int64", "S.T:D": "decimal(10,2)"})
	}, p)
	if err != nil {
		t.Fatal(err)
	}
	got := readDLQ(t, dir)
	want := []struct {
		line   int64
		reason string
	}{
		{3, "malformed_json"}, {4, "unknown_op_type"}, {5, "value_mismatch"}, {6, "value_mismatch"},
		{7, "value_mismatch"}, {8, "value_mismatch"}, {9, "bad_op_ts"}, {10, "bad_op_ts"}, {11, "no_metadata"},
		{13, "unknown_column"}, {14, "missing_image"}, {15, "malformed_json"},
		{17, "malformed_json"}, {18, "malformed_json"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d dead letters, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Offset != w.line || g.Reason != w.reason {
			t.Errorf("dead letter %d: line %d reason %s (%s); want line %d reason %s", i, g.Offset, g.Reason, g.Error, w.line, w.reason)
		}
		original := g.Record
		if g.Base64 != nil { // a record that is not UTF-8
			b, _ := base64.StdEncoding.DecodeString(*g.Base64)
			s := string(b)
			original = &s
		}
		if original == nil || *original != lines[w.line-1] {
			t.Errorf("dead letter for line %d does not carry the original record", w.line)
		}
		if !strings.HasSuffix(g.Source, "bad.jsonl:"+itoa(w.line)) || g.Error == "" {
			t.Errorf("dead letter for line %d: source %q error %q", w.line, g.Source, g.Error)
		}
	}
	if sum.Rejected != int64(len(want)) {
		t.Errorf("summary counts %d rejects, want %d", sum.Rejected, len(want))
	}
	db := openDuck(t)
	rows := query(t, db, `SELECT ID, N, D::VARCHAR, FLAG, NAME FROM `+lakeGlob(dir, "S.T")+` ORDER BY ID`)
	equalLines(t, "good rows", rowStrings(rows), []string{"1|7|NULL|NULL|NULL", "9|5|10.50|true|ok", "11|12|NULL|NULL|NULL", "14|NULL|NULL|NULL|NULL"})
	types := query(t, db, `SELECT typeof(ID), typeof(N), typeof(D) FROM `+lakeGlob(dir, "S.T")+` LIMIT 1`)
	equalLines(t, "hinted types", rowStrings(types), []string{"DOUBLE|BIGINT|DECIMAL(10,2)"})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestMaxRejectsFailsTheRunButKeepsGoodData: past --max-rejects the run
// fails, and what was accepted before is still written.
func TestMaxRejectsFailsTheRunButKeepsGoodData(t *testing.T) {
	in := t.TempDir()
	p := writeFile(t, in, "in.jsonl", strings.Join([]string{ordersMeta, dml("1", ""), "not json", "still not json", dml("2", "")}, "\n"))
	dir := t.TempDir()
	_, err := export(t, dir, func(c *pipeline.Config) { c.MaxRejects = 1 }, p)
	if !errors.Is(err, pipeline.ErrTooManyRejects) {
		t.Fatalf("err = %v, want ErrTooManyRejects", err)
	}
	rows := query(t, openDuck(t), `SELECT count(*) FROM `+lakeGlob(dir, "S.T"))
	if rowStrings(rows)[0] != "1" {
		t.Errorf("rows written before the limit: %v, want 1", rowStrings(rows))
	}
	if n := len(readDLQ(t, dir)); n != 2 {
		t.Errorf("%d dead letters, want 2", n)
	}
}

// TestRejectLimitPassedByReleasedRecordsLosesNone: held records released
// at a commit, one of which passes --max-rejects, are all written or
// dead-lettered before the checkpoint covers them (the ones after the
// reject were dropped), and the run fails with the limit.
func TestRejectLimitPassedByReleasedRecordsLosesNone(t *testing.T) {
	noMeta := func(id string) string { return strings.Replace(dml(id, ""), `"S.T"`, `"NO.META"`, 1) }
	for _, c := range []struct {
		name     string
		lines    []string
		dlq, ids string
	}{
		// Held for NO.META's metadata, which never comes: both rejected
		// at the end, the first past the limit.
		{"never completed", []string{ordersMeta, dml("1", ""), noMeta("7"), noMeta("8"), dml("2", "")}, "[3 4]", "1,2"},
		// Held until S.T's metadata comes; the second has a bad value.
		{"released by metadata", []string{dml("1", ""), dml("2", `,"N":"two"`), dml("3", ""), ordersMeta}, "[2]", "1,3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := writeFile(t, t.TempDir(), "in.jsonl", strings.Join(c.lines, "\n"))
			dir := t.TempDir()
			if _, err := export(t, dir, func(c *pipeline.Config) { c.MaxRejects = 0 }, p); !errors.Is(err, pipeline.ErrTooManyRejects) {
				t.Fatalf("err = %v, want ErrTooManyRejects", err)
			}
			// A rerun without the limit finds nothing left to do.
			if _, err := export(t, dir, nil, p); err != nil {
				t.Fatal(err)
			}
			if got := dlqOffsets(t, dir); got != c.dlq {
				t.Errorf("dead letters at lines %s, want %s", got, c.dlq)
			}
			rows := query(t, openDuck(t), `SELECT string_agg(CAST(ID AS BIGINT)::VARCHAR, ',' ORDER BY ID) FROM `+lakeGlob(dir, "S.T"))
			if got := rowStrings(rows)[0]; got != c.ids {
				t.Errorf("rows %s, want %s", got, c.ids)
			}
		})
	}
}

// TestHostileTableNamesStayInsideTheSink: a table name can never write
// outside the sink, and two names never share a folder.
func TestHostileTableNamesStayInsideTheSink(t *testing.T) {
	names := []string{"../../escape", "a/b", `a\b`, "..", ".", "tab\tle\x01", "x=1", "A/B", "a%2Fb", "_schemas", "_checkpoints", "_dlq"}
	var lines []string
	for i, n := range names {
		q, _ := json.Marshal(n)
		lines = append(lines,
			`{"op_type":"OBJECT_METADATA","qual_table":`+string(q)+`,"columns":{"ID":{"type":"number","null":false,"key":true}}}`,
			`{"qual_table":`+string(q)+`,"op_type":"INSERT","op_ts":"2026-07-13T04:01:01Z","pos":"p","after":{"ID":`+itoa(int64(i+1))+`}}`)
	}
	in := t.TempDir()
	p := writeFile(t, in, "hostile.jsonl", strings.Join(lines, "\n"))
	root := t.TempDir()
	dir := filepath.Join(root, "sink")
	if _, err := export(t, dir, nil, p); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 1 || entries[0].Name() != "sink" {
		t.Fatalf("files appeared next to the sink: %v", entries)
	}
	seen := map[string]bool{}
	tops, _ := os.ReadDir(dir)
	for _, e := range tops {
		if strings.HasPrefix(e.Name(), "_") {
			continue
		}
		name, err := partition.ParseTableSegment(e.Name())
		if err != nil {
			t.Errorf("folder %q is not a table segment: %v", e.Name(), err)
			continue
		}
		seen[name] = true
		if files := dataFiles(t, filepath.Join(dir, e.Name())); len(files) != 1 {
			t.Errorf("table %q has %d files, want 1", name, len(files))
		}
	}
	for _, n := range names {
		if !seen[n] {
			t.Errorf("table %q has no folder of its own", n)
		}
	}
}

// Qlik's metacolumn names are not reserved in GoldenGate tables: columns
// named change_seq, changed_columns or txn_event_counter are written as
// the table's own (a change_seq column panicked the writer, which took
// the table for a Qlik one).
func TestGoldenGateColumnsNamedLikeQlikMetacolumns(t *testing.T) {
	meta := `{"op_type":"OBJECT_METADATA","qual_table":"S.Q","columns":{"ID":{"type":"number","null":false,"key":true},"change_seq":{"type":"string","null":true,"key":false},"changed_columns":{"type":"string","null":true,"key":false}}}`
	row := `{"qual_table":"S.Q","op_type":"INSERT","op_ts":"2026-07-13T04:01:01Z","pos":"p1","after":{"ID":1,"change_seq":"v","changed_columns":"w"}}`
	dir := t.TempDir()
	sum, err := export(t, dir, nil, writeFile(t, t.TempDir(), "in.jsonl", meta+"\n"+row))
	if err != nil || sum.Rejected != 0 {
		t.Fatalf("%+v %v", sum, err)
	}
	rows := query(t, openDuck(t), `SELECT ID, change_seq, changed_columns FROM `+lakeGlob(dir, "S.Q"))
	equalLines(t, "rows", rowStrings(rows), []string{"1|v|w"})
}

// An input file listed twice, by its path and by another spelling of it
// or a link to it, is read once: every row is written once, under one version per change
// (read twice in one partition, the rows were written twice and the DDL
// opened two more versions).
func TestAFileListedTwiceIsReadOnce(t *testing.T) {
	ddl := `{"op_type":"DDL","op_ts":"2026-07-13T04:01:02Z","pos":"d","ddl":{"object":{"catalog":"","schema":"S","object":"T"},"statement":"ALTER TABLE S.T ADD (X NUMBER(10))"}}`
	p := writeFile(t, t.TempDir(), "in.jsonl", strings.Join([]string{ordersMeta, dml("1", ""), ddl, dml("2", `,"X":5`)}, "\n"))
	again := filepath.Dir(p) + "/./" + filepath.Base(p)
	link := filepath.Join(t.TempDir(), "link.jsonl")
	if err := os.Symlink(p, link); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sum, err := export(t, dir, nil, p, again, link, p)
	if err != nil || sum.Rejected != 0 {
		t.Fatalf("%+v %v", sum, err)
	}
	rows := query(t, openDuck(t), `SELECT ID, X, schema_version FROM `+lakeGlob(dir, "S.T")+` ORDER BY ID`)
	equalLines(t, "rows", rowStrings(rows), []string{"1|NULL|1", "2|5|2"})
}

// A table name too long for a folder (two 128-byte Oracle identifiers, or
// fewer characters that take 9 bytes each escaped) sends its metadata, DDL
// and DML to the dead letters as bad_table_name; the other tables' rows
// are written, and the run, and a run again over the same input, succeed.
func TestTableNamesTooLongForAFolderAreDeadLettered(t *testing.T) {
	long := strings.Repeat("S", 128) + "." + strings.Repeat("T", 128)
	wide := "SALES." + strings.Repeat("表", 42)
	var lines []string
	for _, n := range []string{long, wide} {
		schema, object, _ := strings.Cut(n, ".")
		lines = append(lines,
			strings.Replace(ordersMeta, `"S.T"`, `"`+n+`"`, 1),
			strings.Replace(dml("1", ""), `"S.T"`, `"`+n+`"`, 1),
			`{"op_type":"DDL","op_ts":"2026-07-13T04:01:02Z","pos":"d","ddl":{"object":{"catalog":"","schema":"`+schema+`","object":"`+object+`"},"statement":"ALTER TABLE X ADD (Y NUMBER)"}}`)
	}
	lines = append(lines, ordersMeta, dml("2", ""), strings.Replace(dml("3", ""), `"S.T"`, `"`+long+`"`, 1))
	p := writeFile(t, t.TempDir(), "in.jsonl", strings.Join(lines, "\n"))
	dir := t.TempDir()
	for run := range 2 {
		sum, err := export(t, dir, nil, p)
		if err != nil {
			t.Fatalf("run %d: %v", run+1, err)
		}
		if run == 0 && (sum.Rejected != 7 || sum.RowsByTable["S.T"] != 1) {
			t.Errorf("run 1: %d rejected, rows %v; want 7 and S.T's one row", sum.Rejected, sum.RowsByTable)
		}
	}
	dl := readDLQ(t, dir)
	if len(dl) != 7 {
		t.Fatalf("%d dead letters, want 7: %+v", len(dl), dl)
	}
	for _, l := range dl {
		if l.Reason != "bad_table_name" || !strings.Contains(l.Error, "255") {
			t.Errorf("dead letter at offset %d: %s: %s", l.Offset, l.Reason, l.Error)
		}
	}
	rows := query(t, openDuck(t), `SELECT ID FROM `+lakeGlob(dir, "S.T"))
	equalLines(t, "rows", rowStrings(rows), []string{"2"})
}

// TestOversizedRecordsKeepWhatFitsInTheDeadLetters: a record past
// --max-record-bytes is dead-lettered with its size, whole when it fits
// in what a dead letter keeps (and then not marked truncated), else its
// beginning, marked truncated.
func TestOversizedRecordsKeepWhatFitsInTheDeadLetters(t *testing.T) {
	mid := dml("2", `,"NAME":"`+strings.Repeat("m", 2500)+`"`)
	long := dml("3", `,"NAME":"`+strings.Repeat("l", 20000)+`"`)
	p := writeFile(t, t.TempDir(), "in.jsonl", strings.Join([]string{ordersMeta, dml("1", ""), mid, long, dml("4", "")}, "\r\n")+"\r\n")
	dir := t.TempDir()
	_, err := export(t, dir, func(c *pipeline.Config) {
		src, err := source.NewFiles([]string{p}, 2000, nil)
		if err != nil {
			t.Fatal(err)
		}
		c.Source = src
	}, p)
	if err != nil {
		t.Fatal(err)
	}
	dl := readDLQ(t, dir)
	if len(dl) != 2 {
		t.Fatalf("%d dead letters, want the two oversized records", len(dl))
	}
	if d := dl[0]; d.Reason != "oversized" || d.Size != int64(len(mid)) || d.Truncated || d.Record == nil || *d.Record != mid {
		t.Errorf("record of %d bytes: reason %s, size %d, truncated %v, kept %d bytes", len(mid), d.Reason, d.Size, d.Truncated, len(*d.Record))
	}
	if d := dl[1]; d.Reason != "oversized" || d.Size != int64(len(long)) || !d.Truncated || d.Record == nil || !strings.HasPrefix(long, *d.Record) || len(*d.Record) >= len(long) {
		t.Errorf("record of %d bytes: reason %s, size %d, truncated %v", len(long), d.Reason, d.Size, d.Truncated)
	}
	rows := query(t, openDuck(t), `SELECT string_agg(ID::BIGINT::VARCHAR, ',' ORDER BY ID) FROM `+lakeGlob(dir, "S.T"))
	if got := rowStrings(rows)[0]; got != "1,4" {
		t.Errorf("IDs written: %s, want 1,4", got)
	}
}
