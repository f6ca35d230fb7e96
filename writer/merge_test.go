package writer

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// Files of one buffer key merge into one file with their row groups in
// offset order: every row and value as in a file written whole, readable
// by arrow-go and DuckDB, with the first file's key and first offset and
// the last one's last offset.
func TestMergeFilesKeepsEveryRow(t *testing.T) {
	v, recs := benchRecords(t, 900, 10)
	encodeAll := func(maxRows int) []*File {
		w := newWriter(t, Config{DeferEncode: true, MaxRows: maxRows})
		var files []*File
		for i, r := range recs {
			files = append(files, mustAppend(t, w, v, r, Source{Partition: "p0", Offset: int64(100 + i)})...)
		}
		files = append(files, mustFlushAll(t, w)...)
		for _, f := range files {
			if err := f.Encode(); err != nil {
				t.Fatal(err)
			}
		}
		return files
	}
	whole := encodeAll(len(recs) + 1)
	parts := encodeAll(300)
	if len(whole) != 1 || len(parts) != 3 {
		t.Fatalf("%d and %d files; the stream should have one table and day", len(whole), len(parts))
	}
	for _, f := range parts[1:] {
		if !parts[0].CanMerge(f) {
			t.Fatalf("%s and %s cannot merge", parts[0].Key, f.Key)
		}
	}
	// The later file first on purpose: the merge orders by offset.
	m, err := MergeFiles(parts[1], parts[0])
	if err != nil {
		t.Fatal(err)
	}
	if m, err = MergeFiles(m, parts[2]); err != nil {
		t.Fatal(err)
	}
	if m.Key != parts[0].Key || m.FirstOffset != 100 || m.LastOffset != int64(100+len(recs)-1) || m.Rows != len(recs) {
		t.Fatalf("merged file %s holds offsets %d-%d, %d rows; want %s, 100-%d, %d", m.Key, m.FirstOffset, m.LastOffset, m.Rows,
			parts[0].Key, 100+len(recs)-1, len(recs))
	}
	got, want := readParquet(t, m.Data), readParquet(t, whole[0].Data)
	if n := got.rdr.NumRowGroups(); n != 3 {
		t.Errorf("merged file has %d row groups, want one per file", n)
	}
	for _, k := range []string{"lakehouse.first_offset", "lakehouse.last_offset", "lakehouse.first_pos", "lakehouse.last_pos"} {
		if g, w := got.kv(k), want.kv(k); g != w {
			t.Errorf("%s = %q, the file written whole has %q", k, g, w)
		}
	}
	if got.rows() != want.rows() {
		t.Fatalf("merged file has %d rows, want %d", got.rows(), want.rows())
	}
	for _, f := range want.schema.Fields() {
		if g, w := got.col(f.Name).String(), want.col(f.Name).String(); g != w {
			t.Errorf("column %s differs from the file written whole", f.Name)
		}
	}
	if got.kv("lakehouse.last_offset") != strconv.Itoa(100+len(recs)-1) {
		t.Errorf("last_offset %s, want %d", got.kv("lakehouse.last_offset"), 100+len(recs)-1)
	}

	other := encodeAll(300)
	other[0].group.Partition = "p1"
	if _, err := MergeFiles(parts[0], other[0]); err == nil {
		t.Error("files of two source partitions merged")
	}

	if testing.Short() {
		return
	}
	dir := t.TempDir()
	mp, wp := filepath.Join(dir, "merged.parquet"), filepath.Join(dir, "whole.parquet")
	if err := os.WriteFile(mp, m.Data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wp, whole[0].Data, 0o644); err != nil {
		t.Fatal(err)
	}
	count := duckCounter(t)
	for _, pair := range [][2]string{{mp, wp}, {wp, mp}} {
		if n := count(`SELECT count(*) FROM (SELECT * FROM read_parquet(?) EXCEPT ALL SELECT * FROM read_parquet(?))`, pair[0], pair[1]); n != 0 {
			t.Errorf("%d rows of %s are not in %s", n, filepath.Base(pair[0]), filepath.Base(pair[1]))
		}
	}
	// A filter on the last row group's values prunes by its statistics.
	if n := count(`SELECT count(*) FROM read_parquet(?) WHERE src_offset = ?`, mp, 100+len(recs)-1); n != 1 {
		t.Errorf("DuckDB finds %d rows at the last offset of the merged file, want 1", n)
	}
}
