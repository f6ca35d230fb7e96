package parquetenc

import (
	"bytes"
	"encoding/binary"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/compress"
)

// fallbacks counts the files the encoder left to pqarrow, by reason.
type fallbacks map[string]int

func (f fallbacks) EncoderFallback(reason string) { f[reason]++ }

// A file the lean encoder does not take (here: no rows) goes to pqarrow,
// which needs the Parquet schema that a lean shape no longer keeps; each
// such file is counted, and logged once per table version.
func TestLeanShapeFallsBackToPqarrow(t *testing.T) {
	var log bytes.Buffer
	seen := fallbacks{}
	e, err := New(Options{Compression: compress.Codecs.Zstd, Observer: seen,
		Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	rec := randomBatch(t, rand.New(rand.NewPCG(1, 1)), 10, 0.2, 5)
	defer rec.Release()
	sh := e.NewShape(rec.Schema(), "APP.T", 3)
	if sh.footer == nil || sh.pq != nil {
		t.Fatalf("the shape is not a lean one without its Parquet schema (footer %v, schema %v)", sh.footer != nil, sh.pq != nil)
	}
	empty := rec.NewSlice(0, 0)
	defer empty.Release()
	for range 2 {
		res, err := e.Encode(sh, empty, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Fallback != FallbackBatch {
			t.Fatalf("fallback %q, want %q", res.Fallback, FallbackBatch)
		}
		_, tbl := readBack(t, res.Data)
		var got, want []string
		for _, f := range tbl.Schema().Fields() {
			got = append(got, f.Name)
		}
		for _, f := range rec.Schema().Fields() {
			want = append(want, f.Name)
		}
		if tbl.NumRows() != 0 || !slices.Equal(got, want) {
			t.Errorf("pqarrow's file: %d rows of %v; want 0 rows of %v", tbl.NumRows(), got, want)
		}
	}
	if res, err := e.Encode(sh, rec, nil); err != nil || res.Fallback != "" {
		t.Fatalf("a file of rows: fallback %q, %v; want the lean encoder's", res.Fallback, err)
	}
	if seen[FallbackBatch] != 2 || len(seen) != 1 {
		t.Errorf("fallbacks counted %v, want 2 %s", seen, FallbackBatch)
	}
	if n := strings.Count(log.String(), "pqarrow writes them"); n != 1 || !strings.Contains(log.String(), "table=APP.T version=3 reason=batch") {
		t.Errorf("logged %d times, want once with the table version and reason:\n%s", n, log.String())
	}
}

// doubles is a file of one nullable DOUBLE column "F" holding vals,
// encoded as the writer encodes (with pqarrow when arrow is set), with
// row groups of rowGroup rows.
func doubles(t *testing.T, vals []float64, arrow_ bool, rowGroup int64) (Result, []byte) {
	t.Helper()
	e, err := New(Options{Compression: compress.Codecs.Zstd, PqarrowOnly: arrow_, RowGroupRows: rowGroup})
	if err != nil {
		t.Fatal(err)
	}
	sc := arrow.NewSchema([]arrow.Field{{Name: "F", Type: arrow.PrimitiveTypes.Float64, Nullable: true}}, nil)
	b := array.NewFloat64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(vals, nil)
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(sc, []arrow.Array{col}, int64(len(vals)))
	defer rec.Release()
	res, err := e.Encode(e.NewShape(sc, "T", 1), rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res, res.Data
}

// A DOUBLE chunk holding NaN carries no min and max, in either encoder:
// DuckDB prunes on them and would skip the row 3 for F > 2 (its issue
// 25521; parquet-mr leaves them out too, PARQUET-1246). A chunk without
// NaN keeps its own.
func TestNaNLeavesChunkWithoutMinMax(t *testing.T) {
	for _, viaArrow := range []bool{false, true} {
		res, data := doubles(t, []float64{1, math.NaN(), 3}, viaArrow, 0)
		rdr, _ := readBack(t, data)
		cc, err := rdr.MetaData().RowGroup(0).ColumnChunk(0)
		if err != nil {
			t.Fatal(err)
		}
		if st, err := cc.Statistics(); err != nil || (st != nil && st.HasMinMax()) {
			t.Errorf("arrow %v: the chunk holding NaN has min/max (%v, %v)", viaArrow, st, err)
		}
		c := res.Columns[0]
		if c.Min != nil || c.Max != nil || c.NaNs != 1 || c.Values != 3 {
			t.Errorf("arrow %v: statistics %+v, want no bounds, 1 NaN, 3 values", viaArrow, c)
		}
		if !testing.Short() {
			path := filepath.Join(t.TempDir(), "nan.parquet")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			// DuckDB orders NaN above every number: F > 2 finds 3 and NaN,
			// F > 3 the NaN alone, which a max of 3 would prune.
			count := duckCounter(t)
			for q, want := range map[string]int64{"F > 2": 2, "F > 3": 1} {
				filtered := count(`SELECT count(*) FROM read_parquet(?) WHERE `+q, path)
				unfiltered := count(`SELECT count(*) FILTER (WHERE `+q+`) FROM read_parquet(?)`, path)
				if filtered != want || unfiltered != want {
					t.Errorf("arrow %v: DuckDB finds %d rows where %s, %d counting every row; want %d", viaArrow, filtered, q, unfiltered, want)
				}
			}
		}
	}
	// Row groups of two rows: the first holds the NaN, the second not.
	res, data := doubles(t, []float64{1, math.NaN(), 3, 5}, false, 2)
	rdr, _ := readBack(t, data)
	for g, want := range []bool{false, true} {
		cc, _ := rdr.MetaData().RowGroup(g).ColumnChunk(0)
		st, err := cc.Statistics()
		if err != nil || st == nil || st.HasMinMax() != want {
			t.Errorf("row group %d: statistics %v (%v), want min/max %v", g, st, err, want)
		}
	}
	if c := res.Columns[0]; c.Min != nil || c.NaNs != 1 || c.Nulls != 0 {
		t.Errorf("file statistics %+v, want no bounds (a chunk has none), 1 NaN, 0 nulls", c)
	}
}

// The file's statistics per column are the chunks' added up, the same
// from both encoders: bounds over every row group, nulls, values and the
// chunks' sizes, each column known by its field ID.
func TestColumnStatistics(t *testing.T) {
	ids := func(id string) arrow.Metadata { return arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{id}) }
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true, Metadata: ids("7")},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: ids("8")},
		{Name: "d", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true, Metadata: ids("10")}),
			Nullable: true, Metadata: ids("9")},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	ints := []int64{5, -3, 9, 0, 12, -40, 7}
	for k, v := range ints {
		b.Field(0).(*array.Int64Builder).Append(v)
		b.Field(1).(*array.StringBuilder).Append(string(rune('m' - k)))
		if k == 3 {
			b.Field(0).(*array.Int64Builder).AppendNull()
			b.Field(1).(*array.StringBuilder).AppendNull()
		}
	}
	for k := range 8 {
		b.Field(2).(*array.Decimal128Builder).Append(decimalOf(int64(k*37 - 150)))
		sb := b.Field(3).(*array.StructBuilder)
		sb.Append(true)
		sb.FieldBuilder(0).(*array.Float64Builder).Append(float64(k) - 2.5)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var got [2][]ColumnStats
	for k, viaArrow := range []bool{false, true} {
		e, err := New(Options{Compression: compress.Codecs.Snappy, PqarrowOnly: viaArrow, RowGroupRows: 3})
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.Encode(e.NewShape(sc, "T", 1), rec, nil)
		if err != nil {
			t.Fatal(err)
		}
		got[k] = res.Columns
		rdr, _ := readBack(t, res.Data)
		md := rdr.MetaData()
		for i, c := range res.Columns {
			var comp, uncomp int64
			for g := range md.NumRowGroups() {
				cc, _ := md.RowGroup(g).ColumnChunk(i)
				comp, uncomp = comp+cc.TotalCompressedSize(), uncomp+cc.TotalUncompressedSize()
			}
			if c.Compressed != comp || c.Uncompressed != uncomp || c.Values != 8 || c.Nulls != 0 && c.Path != "i" && c.Path != "s" {
				t.Errorf("arrow %v column %s: %+v; the footer's sizes %d %d, 8 values", viaArrow, c.Path, c, comp, uncomp)
			}
		}
	}
	le := func(b []byte) int64 { return int64(binary.LittleEndian.Uint64(b)) }
	for k, cols := range got {
		want := []struct {
			id   int32
			path string
		}{{7, "i"}, {8, "s"}, {-1, "d"}, {10, "st.x"}}
		for i, w := range want {
			if cols[i].FieldID != w.id || cols[i].Path != w.path {
				t.Errorf("encoder %d column %d: field ID %d path %s, want %d %s", k, i, cols[i].FieldID, cols[i].Path, w.id, w.path)
			}
		}
		if i := cols[0]; i.Nulls != 1 || le(i.Min) != -40 || le(i.Max) != 12 {
			t.Errorf("encoder %d column i: nulls %d min %x max %x, want 1, -40, 12", k, i.Nulls, i.Min, i.Max)
		}
		if s := cols[1]; s.Nulls != 1 || string(s.Min) != "g" || string(s.Max) != "m" {
			t.Errorf("encoder %d column s: nulls %d min %q max %q, want 1, g, m", k, s.Nulls, s.Min, s.Max)
		}
		if d := cols[2]; len(d.Min) == 0 || !bytes.Equal(d.Min, decimalBytes(-150, len(d.Min))) || !bytes.Equal(d.Max, decimalBytes(7*37-150, len(d.Max))) {
			t.Errorf("encoder %d column d: min %x max %x, want -1.50 and 1.09", k, d.Min, d.Max)
		}
		if x := cols[3]; math.Float64frombits(uint64(le(x.Min))) != -2.5 || math.Float64frombits(uint64(le(x.Max))) != 4.5 {
			t.Errorf("encoder %d column st.x: min %x max %x, want -2.5 and 4.5", k, x.Min, x.Max)
		}
	}
}

func decimalOf(v int64) decimal128.Num { return decimal128.FromI64(v) }

// decimalBytes is v as an n-byte big-endian two's complement number, as
// Parquet stores a decimal in a FIXED_LEN_BYTE_ARRAY.
func decimalBytes(v int64, n int) []byte {
	b := make([]byte, n)
	for i := n - 1; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
	return b
}

// An Arrow field's PARQUET:field_id becomes its Parquet schema element's
// field_id in the lean encoder's files as in pqarrow's (Iceberg finds
// columns by it), nested fields and the list's element included.
func TestFieldIDsReachTheParquetSchema(t *testing.T) {
	id := func(v string) arrow.Metadata { return arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{v}) }
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int64, Metadata: id("1")},
		{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "x", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: id("4")}),
			Nullable: true, Metadata: id("3")},
		{Name: "l", Type: arrow.ListOfField(arrow.Field{Name: "element", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: id("6")}),
			Nullable: true, Metadata: id("5")},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).Append(1)
	b.Field(1).(*array.StringBuilder).Append("x")
	b.Field(2).(*array.StructBuilder).Append(true)
	b.Field(2).(*array.StructBuilder).FieldBuilder(0).(*array.StringBuilder).Append("y")
	b.Field(3).(*array.ListBuilder).Append(true)
	b.Field(3).(*array.ListBuilder).ValueBuilder().(*array.StringBuilder).Append("z")
	rec := b.NewRecordBatch()
	defer rec.Release()
	for _, viaArrow := range []bool{false, true} {
		e, err := New(Options{PqarrowOnly: viaArrow})
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.Encode(e.NewShape(sc, "T", 1), rec, nil)
		if err != nil || res.Fallback != "" {
			t.Fatalf("arrow %v: %v, fallback %q", viaArrow, err, res.Fallback)
		}
		rdr, _ := readBack(t, res.Data)
		pq := rdr.MetaData().Schema
		got := map[string]int32{}
		for i := range pq.Root().NumFields() {
			n := pq.Root().Field(i)
			got[n.Name()] = n.FieldID()
		}
		for i := range pq.NumColumns() {
			got[pq.Column(i).Path()] = pq.Column(i).SchemaNode().FieldID()
		}
		want := map[string]int32{"a": 1, "b": -1, "st": 3, "st.x": 4, "l": 5, "l.list.element": 6}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("arrow %v: %s has field_id %d, want %d (all: %v)", viaArrow, k, got[k], v, got)
			}
		}
		for i, c := range res.Columns {
			if c.FieldID != got[c.Path] {
				t.Errorf("arrow %v: column %d (%s) statistics carry field ID %d, the file %d", viaArrow, i, c.Path, c.FieldID, got[c.Path])
			}
		}
	}
}
