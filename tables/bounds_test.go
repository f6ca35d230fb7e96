package tables

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/iceberg-go"
	"github.com/lakehouse-exporter/lakehouse-exporter/parquetenc"
)

// TestBoundsHoldEveryRowGroup: a file with several row groups, one of
// which has no min and max for a column while the others have them (the
// lean encoder leaves them out of a chunk holding NaN, and both encoders
// out of one whose values pass Parquet's statistics size limit).
// iceberg-go (v0.7.0) makes the file's bounds of the row groups that have
// them, so they leave out the other row group's values, and engines skip
// the file for queries those values answer (F > 50 here). Such a column
// must get no bounds, and the counts of every row group; a float column
// its NaN count, which the footer does not hold.
func TestBoundsHoldEveryRowGroup(t *testing.T) {
	for _, encoder := range []string{"lean", "arrow"} {
		t.Run(encoder, func(t *testing.T) {
			dir := t.TempDir()
			ctx := context.Background()
			p, err := Open(ctx, Config{Kind: Hadoop, Warehouse: "file://" + filepath.Join(dir, "_iceberg")}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			sc := arrow.NewSchema([]arrow.Field{
				{Name: "op_ts", Type: tsType},
				{Name: "F", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
				{Name: "S", Type: arrow.BinaryTypes.String, Nullable: true},
			}, nil)
			prep, err := p.PrepareVersion(ctx, TableVersion{Table: "S.T", Version: 1, Schema: sc})
			if err != nil {
				t.Fatal(err)
			}
			// Row groups of two rows: {NaN, 100} and {1, 2}; {a long
			// string, "y"} and {"a", "b"}.
			floats := []float64{math.NaN(), 100, 1, 2}
			long := strings.Repeat("z", 5000)
			strs := []string{long, "y", "a", "b"}
			b := array.NewRecordBuilder(memory.DefaultAllocator, prep.Schema)
			defer b.Release()
			day := time.Date(2026, 7, 13, 1, 0, 0, 0, time.UTC)
			for i := range floats {
				b.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(day.Add(time.Duration(i) * time.Minute).UnixMicro()))
				b.Field(1).(*array.Float64Builder).Append(floats[i])
				b.Field(2).(*array.StringBuilder).Append(strs[i])
			}
			rec := b.NewRecordBatch()
			defer rec.Release()
			enc, err := parquetenc.New(parquetenc.Options{RowGroupRows: 2, PqarrowOnly: encoder == "arrow"})
			if err != nil {
				t.Fatal(err)
			}
			res, err := enc.Encode(enc.NewShape(prep.Schema, "S.T", 1), rec, nil)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "S.T", "f.parquet")
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, res.Data, 0o644); err != nil {
				t.Fatal(err)
			}
			rd, err := file.NewParquetReader(bytes.NewReader(res.Data))
			if err != nil {
				t.Fatal(err)
			}
			if rd.NumRowGroups() != 2 {
				t.Fatalf("%d row groups, want 2", rd.NumRowGroups())
			}
			tbl, err := p.Catalog().LoadTable(ctx, prep.Identifier)
			if err != nil {
				t.Fatal(err)
			}
			dfs, err := dataFiles(tbl, []DataFile{{Table: "S.T", Version: 1, Location: "file://" + path,
				SizeBytes: int64(len(res.Data)), Footer: rd.MetaData(), NaNs: nanCounts(res.Columns)}})
			if err != nil {
				t.Fatal(err)
			}
			df := dfs[0]
			ids := fieldIDs(t, prep.Schema)
			if got, ok := df.NaNValueCounts()[ids["F"]]; !ok || got != 1 {
				t.Errorf("F: NaN count %d (given: %v), want 1", got, ok)
			}
			for _, c := range []struct {
				col                  string
				typ                  iceberg.Type
				least, most          any
				lessThan, beyondMost func(lo, hi iceberg.Literal) bool
			}{
				{"F", iceberg.PrimitiveTypes.Float64, 1.0, 100.0,
					func(lo, _ iceberg.Literal) bool { return float64(lo.(iceberg.Float64Literal)) > 1 },
					func(_, hi iceberg.Literal) bool { return float64(hi.(iceberg.Float64Literal)) < 100 }},
				{"S", iceberg.PrimitiveTypes.String, "a", long,
					func(lo, _ iceberg.Literal) bool { return string(lo.(iceberg.StringLiteral)) > "a" },
					func(_, hi iceberg.Literal) bool { return string(hi.(iceberg.StringLiteral)) < long }},
			} {
				id := ids[c.col]
				if got := df.ValueCounts()[id]; got != 4 {
					t.Errorf("%s: value count %d, want 4", c.col, got)
				}
				lo, hasLo := df.LowerBoundValues()[id]
				hi, hasHi := df.UpperBoundValues()[id]
				if hasLo {
					l, err := iceberg.LiteralFromBytes(c.typ, lo)
					if err != nil {
						t.Fatal(err)
					}
					if c.lessThan(l, nil) {
						t.Errorf("%s: lower bound %v is above the file's smallest value %v", c.col, l, c.least)
					}
				}
				if hasHi {
					h, err := iceberg.LiteralFromBytes(c.typ, hi)
					if err != nil {
						t.Fatal(err)
					}
					if c.beyondMost(nil, h) {
						t.Errorf("%s: upper bound %.20v is below the file's largest value %.20v", c.col, h, c.most)
					}
				}
			}
		})
	}
}

// nanCounts are the encoder's NaN counts by field ID, as the pipeline
// hands them over.
func nanCounts(cols []parquetenc.ColumnStats) map[int]int64 {
	out := map[int]int64{}
	for _, c := range cols {
		if c.NaNs > 0 {
			out[int(c.FieldID)] += c.NaNs
		}
	}
	return out
}

// TestNaNsByFieldID: the encoder's NaN counts are summed per field ID
// (a field's leaves, or its chunks, may come as several columns); a
// column without a field ID or without NaN adds nothing.
func TestNaNsByFieldID(t *testing.T) {
	got := NaNs([]parquetenc.ColumnStats{{FieldID: 3, NaNs: 2}, {FieldID: 3, NaNs: 1}, {FieldID: 4}, {FieldID: -1, NaNs: 5}, {FieldID: 7, NaNs: 4}})
	if fmt.Sprint(got) != "map[3:3 7:4]" {
		t.Errorf("NaNs = %v, want map[3:3 7:4]", got)
	}
}
