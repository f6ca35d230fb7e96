package maintain_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/lakehouse-exporter/lakehouse-exporter/maintain"
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
	idx := tbl.Schema().FieldIndices("op_ts")
	var prev arrow.Timestamp
	for _, chunk := range tbl.Column(idx[0]).Data().Chunks() {
		ts := chunk.(*array.Timestamp)
		for i := range ts.Len() {
			if ts.Value(i) < prev {
				t.Fatalf("%s: op_ts %v after %v: rows not sorted", path, ts.Value(i), prev)
			}
			prev = ts.Value(i)
		}
	}
}
