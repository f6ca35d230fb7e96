package maintain_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/duckq"
	"github.com/lakehouse-exporter/lakehouse-exporter/lakeview"
	"github.com/lakehouse-exporter/lakehouse-exporter/maintain"
	"github.com/lakehouse-exporter/lakehouse-exporter/partition"
	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
	"github.com/lakehouse-exporter/lakehouse-exporter/writer"
)

// TestCompactionKeepsEveryRow: the sample (schema versions, a partial
// image, deletes) written a row per file and a generated stream (DDL,
// updates, deletes) a few rows per file; after a pass that commits each
// group as soon as it is written, every table reads
// the same rows through the catalog, each partition folder holds one
// file, and the compacted files carry the field IDs, sorted rows and the
// source ranges of what they replaced.
func TestCompactionKeepsEveryRow(t *testing.T) {
	l := newLake(t)
	l.export(t, 1, samplePath)
	l.export(t, 7, genStream(t, 240, 1, time.Date(2026, 7, 13, 23, 59, 0, 0, time.UTC)))
	p := l.open(t)
	names := l.names(t)
	if len(names) < 4 {
		t.Fatalf("tables %v: want the sample's two and the generated two", names)
	}
	before := map[string][]string{}
	multi := 0
	for _, n := range names {
		before[n] = rows(t, p, n)
		files, _ := liveFiles(t, p, n)
		for _, fs := range files {
			if len(fs) > 1 {
				multi++
			}
		}
	}
	if multi < 4 {
		t.Fatalf("only %d folders with several files: the test would prove nothing", multi)
	}
	cfg := l.config(t, p)
	cfg.CommitBytes = 1 // a commit per group: partial progress
	sum, err := maintain.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Allocator.(*memory.CheckedAllocator).AssertSize(t, 0)
	t.Log(sum)
	if sum.FilesRewritten == 0 || sum.FilesWritten >= sum.FilesRewritten || sum.Groups == 0 {
		t.Fatalf("summary %+v: nothing compacted", sum)
	}
	if sum.Commits != sum.Groups || sum.Groups <= len(names) {
		t.Errorf("%d commits for %d groups of %d tables, want a commit per group (and more groups than tables)", sum.Commits, sum.Groups, len(names))
	}
	for _, n := range names {
		if got := rows(t, p, n); !slices.Equal(got, before[n]) {
			t.Errorf("%s: %d rows after compaction, %d before, or different ones\nbefore %q\nafter  %q", n, len(got), len(before[n]), before[n], got)
		}
		files, _ := liveFiles(t, p, n)
		for dir, fs := range files {
			if len(fs) != 1 {
				t.Errorf("%s: %d files in %s after compaction, want 1", n, len(fs), dir)
			}
			checkCompacted(t, strings.TrimPrefix(fs[0], "file://"))
		}
	}
	// A second pass finds nothing to do.
	again, err := maintain.Run(context.Background(), l.config(t, p))
	if err != nil || again.FilesRewritten != 0 {
		t.Fatalf("second pass: %+v, %v", again, err)
	}
}

// checkCompacted checks a compacted file: field IDs on every column,
// rows in op_ts order, and its source ranges.
func checkCompacted(t *testing.T, path string) {
	t.Helper()
	if !strings.HasPrefix(filepath.Base(path), "compact-") {
		return // a folder that had one file
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sc := r.MetaData().Schema
	for i := range sc.Root().NumFields() {
		if f := sc.Root().Field(i); f.FieldID() < 0 {
			t.Errorf("%s: column %s has no field ID", path, f.Name())
		}
	}
	kv := r.MetaData().KeyValueMetadata()
	ranges, ok, err := maintain.SourceRanges(kv)
	if !ok || err != nil || len(ranges) == 0 {
		t.Errorf("%s: source ranges %v, %v, %v", path, ranges, ok, err)
	}
	if kv.FindValue("lakehouse.source_partition") != nil {
		t.Errorf("%s names one source partition: the rebuild would take it for an exporter's file", path)
	}
	fr, err := pqarrow.NewFileReader(r, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	// Rows in order of op_ts, then src_partition, src_offset.
	type key struct {
		ts   arrow.Timestamp
		part string
		off  int64
	}
	col := func(name string) arrow.Array {
		c, err := array.Concatenate(tbl.Column(tbl.Schema().FieldIndices(name)[0]).Data().Chunks(), memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ts, part, off := col("op_ts").(*array.Timestamp), col("src_partition").(*array.String), col("src_offset").(*array.Int64)
	defer ts.Release()
	defer part.Release()
	defer off.Release()
	var prev key
	for i := range ts.Len() {
		k := key{ts.Value(i), part.Value(i), off.Value(i)}
		if i > 0 && (k.ts < prev.ts || (k.ts == prev.ts && (k.part < prev.part || (k.part == prev.part && k.off < prev.off)))) {
			t.Fatalf("%s: row %d %v after %v: rows not sorted by op_ts, src_partition, src_offset", path, i, k, prev)
		}
		prev = k
	}
}

// TestCompactedFilesCountNaNs: the manifest entry of a compacted file
// counts the NaNs of a float column (the footer's statistics do not hold
// them), so engines that prune on column metrics still find those rows.
func TestCompactedFilesCountNaNs(t *testing.T) {
	l := newLake(t)
	var in strings.Builder
	in.WriteString(`{"$schema":"http://json-schema.org/draft-04/schema#","id":"S.F","title":"S.F","type":"object","definitions":{"row":{"type":"object","properties":{"ID":{"type":"integer"},"X":{"type":["number","null"]}}}},"properties":{"qual_table":{"type":"string"},"op_type":{"type":"string"},"op_ts":{"type":"string"},"xid":{"type":"string"},"pos":{"type":"string"},"before":{"$ref":"#/definitions/row"},"after":{"$ref":"#/definitions/row"}},"required":["qual_table","op_type"],"additionalProperties":false}` + "\n")
	in.WriteString(`{"op_type":"OBJECT_METADATA","qual_table":"S.F","columns":{"ID":{"type":"integer","null":false,"key":true},"X":{"type":"number","null":true,"key":false}}}` + "\n")
	values := []string{`"NaN"`, `1.5`, `"NaN"`, `null`, `-2`, `"NaN"`}
	for i, v := range values {
		fmt.Fprintf(&in, `{"qual_table":"S.F","op_type":"INSERT","op_ts":"2026-07-13T04:01:%02d.000000Z","xid":"x%d","pos":"%020d","after":{"ID":%d,"X":%s}}`+"\n", i, i, i, i, v)
	}
	path := filepath.Join(t.TempDir(), "nan.jsonl")
	if err := os.WriteFile(path, []byte(in.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	l.export(t, 1, path)
	p := l.open(t)
	if sum, err := maintain.Run(context.Background(), l.config(t, p)); err != nil || sum.FilesWritten != 1 || sum.FilesRewritten != len(values) {
		t.Fatalf("pass: %+v, %v: want the %d files compacted into one", sum, err, len(values))
	}
	tbl, err := p.LoadTable(context.Background(), "S.F")
	if err != nil {
		t.Fatal(err)
	}
	live, err := tables.LiveFiles(context.Background(), tbl)
	if err != nil {
		t.Fatal(err)
	}
	field, ok := tbl.Schema().FindFieldByName("X")
	if len(live) != 1 || !ok {
		t.Fatalf("%d live files, column X found: %v", len(live), ok)
	}
	df := live[0].File
	if got, ok := df.NaNValueCounts()[field.ID]; !ok || got != 3 {
		t.Errorf("compacted file %s: NaN count of X %d (given: %v), want 3", df.FilePath(), got, ok)
	}
	if got := df.NullValueCounts()[field.ID]; got != 1 {
		t.Errorf("compacted file %s: null count of X %d, want 1", df.FilePath(), got)
	}
}

// TestBinSplitByArrowSize: rows whose Parquet is tiny (one long string
// repeated, dictionary-encoded) but whose Arrow size passes
// BinArrowBytes are compacted into several files, each within it, every
// row kept. The full parts are left alone by later passes; the rest is
// compacted again with newer files, so at most one file of the folder is
// short of full, however many passes split it.
func TestBinSplitByArrowSize(t *testing.T) {
	l := newLake(t)
	long := strings.Repeat("x", 20_000)
	round := func(first, n int) {
		var in strings.Builder
		in.WriteString(`{"op_type":"OBJECT_METADATA","qual_table":"S.W","columns":{"ID":{"type":"integer","null":false,"key":true},"TXT":{"type":"string","null":true,"key":false}}}` + "\n")
		for i := first; i < first+n; i++ {
			fmt.Fprintf(&in, `{"qual_table":"S.W","op_type":"INSERT","op_ts":"2026-07-13T04:01:%02d.000000Z","xid":"x%d","pos":"%020d","after":{"ID":%d,"TXT":"%s"}}`+"\n", i, i, i, i, long)
		}
		path := filepath.Join(t.TempDir(), fmt.Sprintf("wide-%d.jsonl", first))
		if err := os.WriteFile(path, []byte(in.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		l.export(t, 1, path)
	}
	round(0, 12)
	p := l.open(t)
	cfg := l.config(t, p)
	cfg.BinArrowBytes = 100_000 // four rows of 20 KB and a little
	check := func(pass string, rowsIn int) {
		t.Helper()
		files, _ := liveFiles(t, p, "S.W")
		total, notFull := int64(0), 0
		for _, fs := range files {
			for _, f := range fs {
				local := strings.TrimPrefix(f, "file://")
				checkCompacted(t, local)
				at := readParquet(t, local)
				n := at.NumRows()
				at.Release()
				if n > 4 {
					t.Errorf("%s: %s: %d rows (%d bytes of them in Arrow at least), want at most 4", pass, local, n, n*20_000)
				}
				if n < 4 {
					notFull++
				}
				total += n
			}
		}
		if total != int64(rowsIn) || notFull > 1 {
			t.Errorf("%s: %d rows in the live files, %d files of fewer than 4; want %d rows and at most one such file", pass, total, notFull, rowsIn)
		}
	}
	before := rows(t, p, "S.W")
	sum, err := maintain.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Allocator.(*memory.CheckedAllocator).AssertSize(t, 0)
	if sum.FilesRewritten != 12 || sum.FilesWritten < 3 {
		t.Fatalf("pass %+v: want the 12 files rewritten into at least 3", sum)
	}
	if got := rows(t, p, "S.W"); !slices.Equal(got, before) {
		t.Errorf("%d rows after compaction, %d before, or different ones", len(got), len(before))
	}
	check("first pass", 12)
	if again, err := maintain.Run(context.Background(), cfg); err != nil || again.FilesRewritten != 0 {
		t.Fatalf("second pass: %+v, %v: want nothing rewritten", again, err)
	}
	for r := 1; r <= 3; r++ { // five more rows, a pass after each
		round(12+5*(r-1), 5)
		if _, err := maintain.Run(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("pass after round %d", r), 12+5*r)
	}
}

// TestCurrentStateViewsSameAfterCompaction: the current-state views over
// the folders (exporter views) give the same rows before compaction,
// after a pass that leaves the replaced files in place (no expiry: the
// folders then hold every row twice), and after one that expires them.
func TestCurrentStateViewsSameAfterCompaction(t *testing.T) {
	l := newLake(t)
	l.export(t, 1, samplePath)
	l.export(t, 7, genStream(t, 240, 3, time.Date(2026, 7, 13, 23, 59, 0, 0, time.UTC)))
	p := l.open(t)
	ctx := context.Background()
	current := func() map[string][]string {
		t.Helper()
		script, err := lakeview.Generate(ctx, l.st, l.dir, lakeview.DuckDB)
		if err != nil {
			t.Fatal(err)
		}
		db := duckq.OpenTB(t)
		if _, err := db.Exec(script); err != nil {
			t.Fatalf("running the views: %v", err)
		}
		tbls, err := lakeview.Tables(ctx, l.st)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][]string{}
		for _, tb := range tbls {
			if len(tb.Keys()) == 0 {
				continue
			}
			_, rows, err := duckq.Rows(db, `SELECT * FROM "`+tb.Name+`__current"`)
			if err != nil {
				t.Fatal(err)
			}
			lines := duckq.Lines(rows)
			slices.Sort(lines)
			out[tb.Name] = lines
		}
		return out
	}
	parquetFiles := func() int {
		n := 0
		filepath.WalkDir(l.dir, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".parquet") && !strings.Contains(path, "/_") {
				n++
			}
			return nil
		})
		return n
	}
	before, filesBefore := current(), parquetFiles()
	if len(before) < 3 {
		t.Fatalf("current states of %d tables: the test would prove little", len(before))
	}
	cfg := l.config(t, p)
	if sum, err := maintain.Run(ctx, cfg); err != nil || sum.FilesRewritten == 0 {
		t.Fatalf("pass without expiry: %+v, %v", sum, err)
	}
	if got := current(); !reflect.DeepEqual(got, before) {
		t.Errorf("current state with the replaced files still in the folders:\n%v\nwant\n%v", got, before)
	}
	cfg.ExpireAfter, cfg.KeepSnapshots = time.Nanosecond, 1
	if _, err := maintain.Run(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if n := parquetFiles(); n >= filesBefore {
		t.Fatalf("%d data files after expiry, %d before compaction: the replaced files were not deleted", n, filesBefore)
	}
	if got := current(); !reflect.DeepEqual(got, before) {
		t.Errorf("current state after expiry:\n%v\nwant\n%v", got, before)
	}
}

// TestCompactionKeepsHoursApart: with hourly partitions (hour(op_ts) and
// hr= folders) a pass compacts each hour's files into one file of its
// own folder, never rows of two hours into one file.
func TestCompactionKeepsHoursApart(t *testing.T) {
	l := newLake(t)
	l.cat.Partitioning = tables.ByHour
	var in strings.Builder
	in.WriteString(`{"op_type":"OBJECT_METADATA","qual_table":"S.H","columns":{"ID":{"type":"integer","null":false,"key":true},"X":{"type":"string","null":true,"key":false}}}` + "\n")
	for i := range 6 {
		fmt.Fprintf(&in, `{"qual_table":"S.H","op_type":"INSERT","op_ts":"2026-07-13T0%d:%02d:00.000000Z","pos":"%020d","after":{"ID":%d,"X":"x%d"}}`+"\n", 1+i%2, i, i, i, i)
	}
	path := filepath.Join(t.TempDir(), "hours.jsonl")
	if err := os.WriteFile(path, []byte(in.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	l.exportWith(t, writer.Config{MaxRows: 1, Granularity: partition.Hourly}, path)
	p := l.open(t)
	before := rows(t, p, "S.H")
	sum, err := maintain.Run(context.Background(), l.config(t, p))
	if err != nil || sum.FilesRewritten != 6 || sum.FilesWritten != 2 {
		t.Fatalf("pass %+v, %v: want the 6 files of two hours rewritten into 2", sum, err)
	}
	if got := rows(t, p, "S.H"); !slices.Equal(got, before) {
		t.Errorf("rows after compaction %q, before %q", got, before)
	}
	files, tbl := liveFiles(t, p, "S.H")
	if spec := tbl.Spec(); spec.Field(0).Transform.String() != "hour" {
		t.Fatalf("partition spec %v, want hour(op_ts)", spec)
	}
	for dir, fs := range files {
		if len(fs) != 1 || !strings.Contains(dir, "/hr=") {
			t.Errorf("%s: %d files, want one, in an hr= folder", dir, len(fs))
			continue
		}
		local := strings.TrimPrefix(fs[0], "file://")
		checkCompacted(t, local)
		at := readParquet(t, local)
		hours := map[int]bool{}
		for _, c := range at.Column(at.Schema().FieldIndices("op_ts")[0]).Data().Chunks() {
			ts := c.(*array.Timestamp)
			for i := range ts.Len() {
				hours[ts.Value(i).ToTime(arrow.Microsecond).Hour()] = true
			}
		}
		n := at.NumRows()
		at.Release()
		if len(hours) != 1 || n != 3 {
			t.Errorf("%s: %d rows of hours %v, want the 3 rows of one hour", local, n, hours)
		}
	}
}

// readParquet reads a local Parquet file whole; the caller releases it.
func readParquet(t *testing.T, path string) arrow.Table {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	fr, err := pqarrow.NewFileReader(r, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	at, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return at
}
