package pipeline_test

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
	"github.com/lakehouse-exporter/lakehouse-exporter/checkpoint"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/gen"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/syncbuf"
	"github.com/lakehouse-exporter/lakehouse-exporter/pipeline"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
	"github.com/lakehouse-exporter/lakehouse-exporter/store"
)

func generate(t *testing.T, path string, o gen.Options) gen.Stats {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var w = any(f).(interface{ Write([]byte) (int, error) })
	var gz *gzip.Writer
	if strings.HasSuffix(path, ".gz") {
		gz = gzip.NewWriter(f)
		w = gz
	}
	st, err := gen.Write(w, o)
	if err != nil {
		t.Fatal(err)
	}
	if gz != nil {
		gz.Close()
	}
	return st
}

// TestGeneratedStreamRowForRow exports a generated stream with DDL in the
// middle, through small files, and checks every DML record is in the lake
// exactly once with its table and op.
func TestGeneratedStreamRowForRow(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 3000
	}
	in := filepath.Join(t.TempDir(), "gen.jsonl.gz")
	st := generate(t, in, gen.Options{Records: n, Tables: 5, Seed: 7, DDLEvery: n / 4})
	dir := t.TempDir()
	sum, err := export(t, dir, func(c *pipeline.Config) { c.Writer.MaxRows = 1000 }, in)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rejected != 0 {
		t.Fatalf("%d records rejected", sum.Rejected)
	}
	db := openDuck(t)
	var want []string
	for table, ops := range st.ByTableOp {
		for op, c := range ops {
			want = append(want, table+"|"+op+"|"+strconv.Itoa(c))
		}
	}
	sort.Strings(want)
	var got []string
	for _, table := range st.TableNames {
		rows := query(t, db, `SELECT '`+table+`', op_type, count(*) FROM `+lakeGlob(dir, table)+` GROUP BY op_type`)
		got = append(got, rowStrings(rows)...)
	}
	sort.Strings(got)
	equalLines(t, "rows per table and op", got, want)
	dup := query(t, db, `SELECT count(*), count(DISTINCT pos) FROM `+lakeGlob(dir, "")+``)
	if s := rowStrings(dup)[0]; s != strconv.Itoa(n)+"|"+strconv.Itoa(n) {
		t.Errorf("rows|distinct pos = %s, want %d|%d", s, n, n)
	}
	versions := query(t, db, `SELECT max(schema_version) FROM `+lakeGlob(dir, ""))
	if rowStrings(versions)[0] == "1" {
		t.Errorf("the DDL in the stream opened no new schema version")
	}
}

// TestRerunDoesNotDuplicate: running again over the same input adds no
// rows, thanks to the checkpoint; records appended later are exported.
func TestRerunDoesNotDuplicate(t *testing.T) {
	in := t.TempDir()
	p := writeFile(t, in, "in.jsonl", strings.Join([]string{ordersMeta, dml("1", ""), dml("2", "")}, "\n")+"\n")
	dir := t.TempDir()
	if _, err := export(t, dir, nil, p); err != nil {
		t.Fatal(err)
	}
	sum, err := export(t, dir, nil, p)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Skipped != 2 {
		t.Errorf("second run skipped %d records, want 2", sum.Skipped)
	}
	f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(dml("3", "") + "\n")
	f.Close()
	if _, err := export(t, dir, nil, p); err != nil {
		t.Fatal(err)
	}
	rows := query(t, openDuck(t), `SELECT string_agg(ID::BIGINT::VARCHAR, ',' ORDER BY ID) FROM `+lakeGlob(dir, "S.T"))
	if got := rowStrings(rows)[0]; got != "1,2,3" {
		t.Errorf("IDs after three runs: %s, want 1,2,3", got)
	}
}

// TestReplacedInputFileIsReported: a file that now ends before the line
// its checkpoint reached was replaced or truncated since the last run;
// the run says so (its lines up to the checkpoint are skipped), while a
// plain rerun over the same file does not.
func TestReplacedInputFileIsReported(t *testing.T) {
	in := t.TempDir()
	p := writeFile(t, in, "in.jsonl", strings.Join([]string{ordersMeta, dml("1", ""), dml("2", ""), dml("3", "")}, "\n")+"\n")
	dir := t.TempDir()
	runLogged := func() string {
		var logs strings.Builder
		if _, err := export(t, dir, func(c *pipeline.Config) { c.Logger = slog.New(slog.NewTextHandler(&logs, nil)) }, p); err != nil {
			t.Fatal(err)
		}
		return logs.String()
	}
	runLogged()
	if logs := runLogged(); strings.Contains(logs, "replaced or truncated") {
		t.Errorf("a rerun over the same file warned:\n%s", logs)
	}
	writeFile(t, in, "in.jsonl", strings.Join([]string{ordersMeta, dml("7", "")}, "\n")+"\n")
	if logs := runLogged(); !strings.Contains(logs, "replaced or truncated") || !strings.Contains(logs, "checkpoint_offset=4") {
		t.Errorf("a file shorter than its checkpoint was not reported:\n%s", logs)
	}
	writeFile(t, in, "in.jsonl", "")
	if logs := runLogged(); !strings.Contains(logs, "replaced or truncated") {
		t.Errorf("a file emptied since the last run was not reported:\n%s", logs)
	}
}

// TestRerunDoesNotDeadLetterAgain: running again over an input whose
// rejects are already in the dead letters writes none of them again: no
// second copy, no file replacing the first run's, nothing counted against
// --max-rejects. A reject appended later is dead-lettered once.
func TestRerunDoesNotDeadLetterAgain(t *testing.T) {
	in := t.TempDir()
	noOpTS := `{"qual_table":"S.T","op_type":"INSERT","xid":"x","pos":"p9","after":{"ID":9}}`
	lines := []string{ordersMeta, dml("1", ""), noOpTS, dml("2", `,"NOPE":1`), `{"qual_table":`, dml("3", "")}
	p := writeFile(t, in, "in.jsonl", strings.Join(lines, "\n")+"\n")
	dir := t.TempDir()
	first, err := export(t, dir, nil, p)
	if err != nil {
		t.Fatal(err)
	}
	if first.Rejected != 3 {
		t.Fatalf("first run rejected %d records, want 3", first.Rejected)
	}
	offsets := func() []int64 {
		var out []int64
		for _, l := range readDLQ(t, dir) {
			out = append(out, l.Offset)
		}
		return out
	}
	want := fmt.Sprint(offsets())
	if want != "[3 4 5]" {
		t.Fatalf("dead letters at lines %s after the first run, want [3 4 5]", want)
	}
	second, err := export(t, dir, func(c *pipeline.Config) { c.MaxRejects = 0 }, p)
	if err != nil {
		t.Fatalf("second run over the same input, --max-rejects 0: %v", err)
	}
	if second.Rejected != 0 {
		t.Errorf("second run rejected %d records again", second.Rejected)
	}
	if got := fmt.Sprint(offsets()); got != want {
		t.Errorf("dead letters at lines %s after the second run, want %s", got, want)
	}
	f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"qual_table":` + "\n")
	f.Close()
	if _, err := export(t, dir, nil, p); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(offsets()); got != "[3 4 5 7]" {
		t.Errorf("dead letters at lines %s after a reject was appended, want [3 4 5 7]", got)
	}
	rows := query(t, openDuck(t), `SELECT string_agg(ID::BIGINT::VARCHAR, ',' ORDER BY ID) FROM `+lakeGlob(dir, "S.T"))
	if got := rowStrings(rows)[0]; got != "1,3" {
		t.Errorf("IDs after three runs: %s, want 1,3", got)
	}
}

// TestDMLWaitsForMetadata: DML that arrives before its table's metadata,
// or after a DDL the exporter cannot parse, waits for the metadata
// instead of being dropped, and keeps its order.
func TestDMLWaitsForMetadata(t *testing.T) {
	lines := []string{
		dml("1", ""), // before any metadata
		ordersMeta,
		dml("2", `,"N":2`),
		`{"op_type":"DDL","op_ts":"2026-07-13T05:00:00Z","pos":"d1","ddl":{"object":{"catalog":"","schema":"S","object":"T"},"statement":"ALTER TABLE S.T SOMETHING UNPARSEABLE"}}`,
		dml("3", `,"EXTRA":"x"`), // needs the new metadata
		`{"op_type":"OBJECT_METADATA","qual_table":"S.T","columns":{"ID":{"type":"number","null":false,"key":true},"N":{"type":"number","null":true,"key":false},"FLAG":{"type":"boolean","null":true,"key":false},"D":{"type":"number","null":true,"key":false},"NAME":{"type":"string","null":true,"key":false},"EXTRA":{"type":"string","null":true,"key":false}}}`,
		dml("4", `,"EXTRA":"y"`),
	}
	in := t.TempDir()
	p := writeFile(t, in, "in.jsonl", strings.Join(lines, "\n"))
	dir := t.TempDir()
	sum, err := export(t, dir, nil, p)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rejected != 0 {
		t.Fatalf("%d rejected", sum.Rejected)
	}
	rows := query(t, openDuck(t), `SELECT ID, schema_version, EXTRA FROM `+lakeGlob(dir, "S.T")+` ORDER BY ID`)
	equalLines(t, "rows", rowStrings(rows), []string{"1|1|NULL", "2|1|NULL", "3|2|x", "4|2|y"})
}

// TestPrettyPrintedInput reads records spread over several lines, as the
// format reference prints them.
func TestPrettyPrintedInput(t *testing.T) {
	in := t.TempDir()
	p := writeFile(t, in, "pretty.json", `{
"op_type": "OBJECT_METADATA",
"qual_table": "SALES.ORDERS",
"columns": {
"ORDER_ID": {"type": "number", "null": false, "key": true},
"STATUS": {"type": "string", "null": false, "key": false}
}
}
{
"qual_table": "SALES.ORDERS",
"op_type": "INSERT",
"op_ts": "2026-07-13T04:01:01.123456Z",
"xid": "example-transaction-1001",
"pos": "G-1001",
"after": {
"ORDER_ID": 1001,
"STATUS": "NEW {with braces}"
}
}
`)
	dir := t.TempDir()
	if _, err := export(t, dir, nil, p); err != nil {
		t.Fatal(err)
	}
	rows := query(t, openDuck(t), `SELECT ORDER_ID, STATUS FROM `+lakeGlob(dir, "SALES.ORDERS"))
	equalLines(t, "rows", rowStrings(rows), []string{"1001|NEW {with braces}"})
}

// Records are decoded ahead, in batches, while the buffers' goroutine
// still appends under the version their table had; the rows behind new
// metadata (in its batch and the batches decoded with it) belong to the
// new version, whose first column is new, and must land there with every
// value in its own column. The first thousand rows keep the decoders ahead.
func TestRowsDecodedAheadOfNewMetadataLandInTheirVersion(t *testing.T) {
	meta := func(cols string) string {
		return `{"op_type":"OBJECT_METADATA","qual_table":"S.M","columns":{` + cols + `"ID":{"type":"number","null":false,"key":true},"NAME":{"type":"string","null":true,"key":false}}}`
	}
	row := func(i int, extra string) string {
		return fmt.Sprintf(`{"qual_table":"S.M","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","pos":"p%d","after":{"ID":%d,"NAME":"n\"%d"%s}}`, i, i, i, extra)
	}
	lines := []string{meta("")}
	var want []string
	for i := range 1000 {
		lines = append(lines, row(i, ""))
		want = append(want, fmt.Sprintf("%d|1|NULL|n\"%d", i, i))
	}
	lines = append(lines, meta(`"A_NOTE":{"type":"string","null":true,"key":false},`))
	for i := 1000; i < 1300; i++ {
		note, extra := "NULL", ""
		if i%2 == 0 {
			note, extra = fmt.Sprintf("note %d", i), fmt.Sprintf(`,"A_NOTE":"note %d"`, i)
		}
		lines = append(lines, row(i, extra))
		want = append(want, fmt.Sprintf("%d|2|%s|n\"%d", i, note, i))
	}
	dir := t.TempDir()
	sum, err := export(t, dir, nil, writeFile(t, t.TempDir(), "in.jsonl", strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rejected != 0 {
		t.Fatalf("%d rejected", sum.Rejected)
	}
	rows := query(t, openDuck(t), `SELECT ID, schema_version, A_NOTE, NAME FROM `+lakeGlob(dir, "S.M")+` ORDER BY ID`)
	equalLines(t, "rows", rowStrings(rows), want)
}

// TestIntervalCommitOutlastsEndlessHolds: tables whose metadata never
// comes refill the hold as fast as its age limit empties it; two of them
// on different cycles keep it from ever being empty. The commit rounds
// still come, at most a hold's age late.
func TestIntervalCommitOutlastsEndlessHolds(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a stream slowly for about five seconds")
	}
	lines := []string{ordersMeta}
	for i := 1; i <= 4500; i++ {
		lines = append(lines, dml(strconv.Itoa(i), ""))
		if i%50 == 0 {
			lines = append(lines, strings.Replace(dml(strconv.Itoa(100000+i), ""), `"S.T"`, `"S.U"`, 1))
		}
		if i > 1500 && i%50 == 25 {
			lines = append(lines, strings.Replace(dml(strconv.Itoa(200000+i), ""), `"S.T"`, `"S.V"`, 1))
		}
	}
	p := writeFile(t, t.TempDir(), "in.jsonl", strings.Join(lines, "\n")+"\n")
	obs := &checkpointCounter{}
	sum, err := export(t, t.TempDir(), func(c *pipeline.Config) {
		steadyLoad(c)
		c.HoldMaxAge = 1500 * time.Millisecond
		c.Observer = obs
	}, p)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Elapsed < 3*time.Second {
		t.Skipf("the stream was read in %s, too fast for the holds to overlap", sum.Elapsed)
	}
	if got := obs.n.Load(); got < 3 {
		t.Errorf("%d checkpoints in a %s run whose hold never emptied, want one at least every 2 s (--file-max-age + --hold-max-age)", got, sum.Elapsed.Round(time.Millisecond))
	}
	if sum.RowsByTable["S.T"] != 4500 {
		t.Errorf("rows %v", sum.RowsByTable)
	}
}

// steadyLoad makes a run read its input at about a record a millisecond,
// like a busy database's stream, rolling files by rows (100) long before
// they reach their age (500 ms), so that commit rounds fall due while it
// reads.
func steadyLoad(c *pipeline.Config) {
	c.Source = &slowSource{Source: c.Source, delay: time.Millisecond}
	c.Writer.MaxRows = 100
	c.Writer.MaxAge = 500 * time.Millisecond
}

// slowSource hands out its source's records no faster than one per delay.
type slowSource struct {
	source.Source
	delay time.Duration
}

func (s *slowSource) Next(ctx context.Context) (*source.Message, error) {
	time.Sleep(s.delay)
	return s.Source.Next(ctx)
}

type checkpointCounter struct {
	pipeline.NopObserver
	n atomic.Int64
}

func (c *checkpointCounter) Checkpointed(time.Time) { c.n.Add(1) }

// TestSteadyLoadIsCheckpointedAsItGoes: when files roll by rows long
// before any is --file-max-age old, a commit round still runs once that
// long has passed since the last, so a crash does not re-read the whole
// run (and Kafka offsets are committed as it goes, not only at shutdown).
func TestSteadyLoadIsCheckpointedAsItGoes(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a stream slowly for about three seconds")
	}
	in := filepath.Join(t.TempDir(), "steady.jsonl")
	st := generate(t, in, gen.Options{Records: 3000, Tables: 2, Seed: 9})
	dir := t.TempDir()
	obs := &checkpointCounter{}
	sum, err := export(t, dir, func(c *pipeline.Config) {
		steadyLoad(c)
		c.Observer = obs
	}, in)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Elapsed < 1500*time.Millisecond {
		t.Skipf("the stream was read in %s, too fast for a commit round to fall due", sum.Elapsed)
	}
	// rounds during the run (checked about once a second), then the last
	if got := obs.n.Load(); got < 2 {
		t.Errorf("%d checkpoints in a %s run with --file-max-age 500ms, want one at least every second or so", got, sum.Elapsed.Round(time.Millisecond))
	}
	if got := countRows(t, dir); got != st.DML {
		t.Errorf("%d rows, want %d", got, st.DML)
	}
}

// TestHeldDMLOutlastsTheIntervalCommit: DML that waits for its table's
// metadata keeps waiting (within the hold limits) while the commit
// rounds of a steady load fall due, by interval (files roll by rows) or
// by age (files roll by --file-max-age): a round would release it early,
// rejecting it as no_metadata.
func TestHeldDMLOutlastsTheIntervalCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a stream slowly for about three seconds")
	}
	waiting := strings.Replace(dml("900", ""), `"S.T"`, `"S.U"`, 1)
	lines := []string{ordersMeta, waiting}
	for i := 1; i <= 3000; i++ {
		lines = append(lines, dml(strconv.Itoa(i), ""))
	}
	lines = append(lines, strings.Replace(ordersMeta, `"S.T"`, `"S.U"`, 1))
	p := writeFile(t, t.TempDir(), "in.jsonl", strings.Join(lines, "\n")+"\n")
	for _, byAge := range []bool{false, true} {
		sum, err := export(t, t.TempDir(), func(c *pipeline.Config) {
			steadyLoad(c)
			if byAge {
				c.Writer.MaxRows = 1 << 20
			}
		}, p)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Rejected != 0 || sum.RowsByTable["S.U"] != 1 || sum.RowsByTable["S.T"] != 3000 {
			t.Errorf("by age %v: rejected %v, rows %v: want S.U's waiting row written once its metadata came", byAge, sum.RejectedBy, sum.RowsByTable)
		}
	}
}

// TestRecordBeingAppendedIsReadWhenComplete: a file that ends inside a
// record (no line ending, brackets open) is most likely being appended
// to. That record is left unread, with a warning, so that the next run
// reads it whole: dead-lettered as malformed, it would have been skipped
// as already read once complete, and lost. A final record that is
// complete is read without its line ending; on stdin, which cannot be
// read again, a cut record is a dead letter.
func TestRecordBeingAppendedIsReadWhenComplete(t *testing.T) {
	in := t.TempDir()
	third := dml("3", `,"NAME":"x"`)
	p := writeFile(t, in, "in.jsonl", strings.Join([]string{ordersMeta, dml("1", ""), dml("2", ""), third[:40]}, "\n"))
	dir := t.TempDir()
	var logs strings.Builder
	sum, err := export(t, dir, func(c *pipeline.Config) { c.Logger = slog.New(slog.NewTextHandler(&logs, nil)) }, p)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rejected != 0 || sum.RowsByTable["S.T"] != 2 || !strings.Contains(logs.String(), "ends inside a record") || !strings.Contains(logs.String(), "line=4") {
		t.Fatalf("first run: %d rejected, rows %v, logs:\n%s", sum.Rejected, sum.RowsByTable, logs.String())
	}
	writeFile(t, in, "in.jsonl", strings.Join([]string{ordersMeta, dml("1", ""), dml("2", ""), third, dml("4", "")}, "\n"))
	if sum, err = export(t, dir, nil, p); err != nil || sum.Rejected != 0 || sum.RowsByTable["S.T"] != 2 {
		t.Fatalf("second run: %+v %v, want records 3 and 4 written", sum, err)
	}
	rows := query(t, openDuck(t), `SELECT ID, NAME FROM `+lakeGlob(dir, "S.T")+` ORDER BY ID`)
	equalLines(t, "rows", rowStrings(rows), []string{"1|NULL", "2|NULL", "3|x", "4|NULL"})
	if n := len(readDLQ(t, dir)); n != 0 {
		t.Errorf("%d dead letters, want none", n)
	}

	// Pretty-printed records, written line by line: the file ends after a
	// whole line, inside the record.
	pretty := func(id string) string {
		return "{\n  \"qual_table\": \"S.T\",\n  \"op_type\": \"INSERT\",\n  \"op_ts\": \"2026-07-13T04:01:01Z\",\n  \"pos\": \"p" + id + "\",\n  \"after\": {\"ID\": " + id + "}\n}\n"
	}
	full := pretty("3")
	meta := "{\n" + ordersMeta[1:] + "\n"
	pp := writeFile(t, in, "pretty.json", meta+pretty("1")+full[:strings.Index(full, "  \"pos\"")])
	dir = t.TempDir()
	if sum, err = export(t, dir, nil, pp); err != nil || sum.Rejected != 0 || sum.RowsByTable["S.T"] != 1 {
		t.Fatalf("pretty-printed, first run: %+v %v", sum, err)
	}
	writeFile(t, in, "pretty.json", meta+pretty("1")+full+pretty("4"))
	if sum, err = export(t, dir, nil, pp); err != nil || sum.Rejected != 0 || sum.RowsByTable["S.T"] != 2 {
		t.Fatalf("pretty-printed, second run: %+v %v, want records 3 and 4 written", sum, err)
	}

	dir = t.TempDir()
	sum, err = export(t, dir, func(c *pipeline.Config) {
		src, err := source.NewFiles([]string{"-"}, 1<<20, strings.NewReader(ordersMeta+"\n"+third[:40]))
		if err != nil {
			t.Fatal(err)
		}
		c.Source = src
	}, p)
	if err != nil || sum.RejectedBy[cdc.ReasonMalformedJSON] != 1 {
		t.Errorf("stdin: %+v %v, want the cut record dead-lettered", sum, err)
	}
}

// TestSecondInstanceFencesTheFirst: a second run over the same input while
// the first is still exporting it claims its partitions: the first fails
// at its next checkpoint, and what it wrote after the claim (files under
// its own run's names, beside the second run's) it deletes, for every
// partition it lost, so the lake holds every record exactly once, and
// still does after a third run.
func TestSecondInstanceFencesTheFirst(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a stream slowly for a few seconds")
	}
	in1, in2 := filepath.Join(t.TempDir(), "a.jsonl"), filepath.Join(t.TempDir(), "b.jsonl")
	st1 := generate(t, in1, gen.Options{Records: 1500, Tables: 2, Seed: 11})
	st2 := generate(t, in2, gen.Options{Records: 1500, Tables: 2, Seed: 12})
	for _, inputs := range [][]string{{in1}, {in1, in2}} {
		want := int64(st1.DML)
		if len(inputs) == 2 {
			want += int64(st2.DML)
		}
		dir := t.TempDir()
		obs := &readObserver{last: source.PartitionName(inputs[len(inputs)-1])}
		firstDone := make(chan error, 1)
		go func() {
			_, err := export(t, dir, func(c *pipeline.Config) {
				steadyLoad(c)
				// Twice as slow: the last input's checkpoint, which the
				// second run waits for, comes well before its end.
				c.Source = &slowSource{Source: c.Source, delay: time.Millisecond}
				c.Observer = obs
			}, inputs...)
			firstDone <- err
		}()
		// Until the first run has checkpointed every partition and reads
		// its last input, so that it holds every partition when the second
		// run claims them. A partition it has not checkpointed yet is
		// claimed by whichever run writes its checkpoint first, and that
		// may be the first run (the second is then the one fenced).
		checkpointed := func() bool {
			for _, in := range inputs {
				if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(checkpoint.Key(source.PartitionName(in))))); err != nil {
					return false
				}
			}
			return true
		}
		for deadline := time.Now().Add(10 * time.Second); !checkpointed() || !obs.readLast.Load(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the first run did not checkpoint every partition or did not reach its last input in 10 s")
			}
		}
		if _, err := export(t, dir, nil, inputs...); err != nil {
			t.Fatalf("second run: %v", err)
		}
		if err := <-firstDone; !errors.Is(err, checkpoint.ErrFenced) {
			t.Fatalf("first run: %v, want it fenced", err)
		}
		check := func(when string) {
			rows := query(t, openDuck(t), `SELECT count(*), count(DISTINCT (src_partition, pos)) FROM `+lakeGlob(dir, ""))
			if n, distinct := rows[0][0].(int64), rows[0][1].(int64); n != want || distinct != n {
				t.Errorf("%d inputs, %s: %d rows, %d distinct positions; want %d once each", len(inputs), when, n, distinct, want)
			}
		}
		check("once the first run is fenced")
		if _, err := export(t, dir, nil, inputs...); err != nil {
			t.Fatalf("third run: %v", err)
		}
		check("after a third run")
	}
}

// readObserver counts checkpoints and notes when a record of partition
// last is read.
type readObserver struct {
	checkpointCounter
	last     string
	readLast atomic.Bool
}

func (o *readObserver) RecordRead(partition string) {
	if partition == o.last {
		o.readLast.Store(true)
	}
}

// lostResponse: the first conditional write of a checkpoint lands in
// storage but reports an unknown outcome, as the S3 store does when a
// retried If-Match finds the ETag its lost first attempt wrote.
type lostResponse struct {
	pipeline.Store
	hit atomic.Bool
}

func (s *lostResponse) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	if strings.HasPrefix(key, "_checkpoints/partitions/") && s.hit.CompareAndSwap(false, true) {
		if _, err := s.Store.PutIfMatch(ctx, key, data, etag); err != nil {
			return "", err
		}
		return "", fmt.Errorf("put %s: %w", key, store.ErrOutcomeUnknown)
	}
	return s.Store.PutIfMatch(ctx, key, data, etag)
}

// TestCheckpointOfUnknownOutcomeIsNotWithdrawn: a checkpoint write whose
// outcome is unknown stops the run without deleting what it may cover (it
// did land here), and the next run exports the rest: every record once.
func TestCheckpointOfUnknownOutcomeIsNotWithdrawn(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in.jsonl")
	st := generate(t, in, gen.Options{Records: 2000, Tables: 2, Seed: 3})
	dir := t.TempDir()
	local, _ := store.NewLocal(dir)
	lr := &lostResponse{Store: local}
	_, err := export(t, dir, func(c *pipeline.Config) { c.Store = lr }, in)
	if !errors.Is(err, store.ErrOutcomeUnknown) || errors.Is(err, checkpoint.ErrFenced) {
		t.Fatalf("first run: %v, want the unknown outcome, not a fence", err)
	}
	if _, err := export(t, dir, nil, in); err != nil {
		t.Fatal(err)
	}
	rows := query(t, openDuck(t), `SELECT count(*), count(DISTINCT pos) FROM `+lakeGlob(dir, ""))
	if n, distinct := rows[0][0].(int64), rows[0][1].(int64); n != int64(st.DML) || distinct != n {
		t.Errorf("%d rows, %d distinct pos; want %d once each", n, distinct, st.DML)
	}
}

// A source that does not know its size (Kafka) still gets its progress
// logged: records read and their rate, at every --progress-every.
func TestProgressIsLoggedForSourcesWithoutASize(t *testing.T) {
	in := filepath.Join(t.TempDir(), "slow.jsonl")
	generate(t, in, gen.Options{Records: 300, Tables: 2, Seed: 3})
	var logs syncbuf.Buffer
	_, err := export(t, t.TempDir(), func(c *pipeline.Config) {
		c.Source = &slowSource{Source: c.Source, delay: time.Millisecond} // its method set hides Progress
		c.ProgressEvery = 40 * time.Millisecond
		c.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	}, in)
	if err != nil {
		t.Fatal(err)
	}
	var lines, withRecords int
	for _, l := range strings.Split(logs.String(), "\n") {
		var e struct {
			Msg     string `json:"msg"`
			Records *int64 `json:"records_read"`
			Rate    *int64 `json:"records_per_second"`
			Bytes   *int64 `json:"bytes_read"`
		}
		if json.Unmarshal([]byte(l), &e) != nil || e.Msg != "progress" {
			continue
		}
		lines++
		if e.Records != nil && e.Rate != nil && e.Bytes == nil && *e.Records > 0 {
			withRecords++
		}
	}
	if lines < 2 || withRecords == 0 {
		t.Errorf("%d progress lines, %d with records read and a rate and no bytes: want several over a run of about 300 ms", lines, withRecords)
	}
}

// idleAfter hands out its source's first n records, then says it is idle
// a few times (as Kafka and stdin do between records), then goes on.
type idleAfter struct {
	source.Source
	n, idle int
}

func (s *idleAfter) Next(ctx context.Context) (*source.Message, error) {
	if s.n == 0 && s.idle > 0 {
		s.idle--
		time.Sleep(time.Millisecond)
		return nil, source.ErrIdle
	}
	s.n--
	return s.Source.Next(ctx)
}

type bufferedGauge struct {
	pipeline.NopObserver
	mu            sync.Mutex
	bytes, budget int64
}

func (g *bufferedGauge) Buffered(bytes, budget int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.bytes, g.budget = max(g.bytes, bytes), budget
}

// A few records buffered, then an idle source: the memory gauges show
// them and the budget, as they do every 1,024 records of a busy one.
func TestMemoryGaugesMoveWithATrickleOfRecords(t *testing.T) {
	in := filepath.Join(t.TempDir(), "few.jsonl")
	generate(t, in, gen.Options{Records: 12, Tables: 1, Seed: 4})
	g := &bufferedGauge{}
	_, err := export(t, t.TempDir(), func(c *pipeline.Config) {
		c.Source = &idleAfter{Source: c.Source, n: 8, idle: 5}
		c.Observer = g
		c.MaxBufferBytes = 64 << 20
	}, in)
	if err != nil {
		t.Fatal(err)
	}
	if g.budget != 64<<20 || g.bytes == 0 {
		t.Errorf("gauges saw %d bytes buffered and a budget of %d, want some bytes and %d", g.bytes, g.budget, 64<<20)
	}
}

// clockedSource moves a fake clock on by step at every record it hands
// out: a source that is slow but never idle for a second.
type clockedSource struct {
	source.Source
	now  *time.Time
	step time.Duration
}

func (s *clockedSource) Next(ctx context.Context) (*source.Message, error) {
	*s.now = s.now.Add(s.step)
	return s.Source.Next(ctx)
}

// TestSlowSteadySourceIsCommittedByAge: records that come 25 ms apart,
// never a second apart (so the source never reports idle), still get
// their age flushes and commit rounds (checked about once a second): 400
// of them span 10 s, twenty times --file-max-age.
func TestSlowSteadySourceIsCommittedByAge(t *testing.T) {
	in := filepath.Join(t.TempDir(), "slow.jsonl")
	st := generate(t, in, gen.Options{Records: 400, Tables: 1, Seed: 5})
	dir := t.TempDir()
	obs := &checkpointCounter{}
	now := time.Date(2026, 7, 13, 4, 0, 0, 0, time.UTC)
	_, err := export(t, dir, func(c *pipeline.Config) {
		c.Source = &clockedSource{Source: c.Source, now: &now, step: 25 * time.Millisecond}
		c.Now = func() time.Time { return now }
		c.Writer.MaxAge = 500 * time.Millisecond
		c.Observer = obs
		c.DecodeWorkers = -1 // one goroutine reads the clock
	}, in)
	if err != nil {
		t.Fatal(err)
	}
	if got := obs.n.Load(); got < 5 {
		t.Errorf("%d checkpoints over 10 s of records with --file-max-age 500ms, want one about every second", got)
	}
	if got := countRows(t, dir); got != st.DML {
		t.Errorf("%d rows, want %d", got, st.DML)
	}
}
