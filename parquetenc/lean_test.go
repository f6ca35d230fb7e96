package parquetenc

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// leanShapes is every column shape the exporter writes: the metacolumns,
// each table column type, the lists and the before-image struct.
func leanShapes() []arrow.Field {
	prims := []arrow.Field{
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "t", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "bo", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "d5", Type: &arrow.Decimal128Type{Precision: 5, Scale: 2}, Nullable: true},
		{Name: "d18", Type: &arrow.Decimal128Type{Precision: 18, Scale: 4}, Nullable: true},
		{Name: "d38", Type: &arrow.Decimal128Type{Precision: 38, Scale: 10}, Nullable: true},
	}
	fields := []arrow.Field{
		{Name: "req_s", Type: arrow.BinaryTypes.String},
		{Name: "req_i", Type: arrow.PrimitiveTypes.Int64},
		{Name: "req_t", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
	}
	fields = append(fields, prims...)
	fields = append(fields,
		arrow.Field{Name: "list", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		arrow.Field{Name: "before", Type: arrow.StructOf(prims...), Nullable: true})
	return fields
}

// randomBatch fills the shapes with values drawn so that every file mixes
// nulls, repeats (dictionaries), distinct values, extremes and page
// boundaries; nullRatio 0 and 1 give columns without and with only nulls.
func randomBatch(t *testing.T, r *rand.Rand, rows int, nullRatio float64, distinct int) arrow.RecordBatch {
	t.Helper()
	md := arrow.NewMetadata([]string{"table"}, []string{"APP.T"})
	sc := arrow.NewSchema(leanShapes(), &md)
	rb := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer rb.Release()
	pick := func() int { return r.IntN(distinct) }
	var fill func(b array.Builder, nullable bool)
	fill = func(b array.Builder, nullable bool) {
		if nullable && r.Float64() < nullRatio {
			b.AppendNull()
			return
		}
		k := pick()
		switch b := b.(type) {
		case *array.StringBuilder:
			if k%97 == 96 {
				// longer than the statistics limit: no min/max is kept
				b.Append(fmt.Sprintf("%05d%s", k, bytes.Repeat([]byte("L"), 5000)))
				return
			}
			if k%11 == 10 {
				b.Append("") // the smallest string: a minimum all the same
				return
			}
			b.Append(fmt.Sprintf("v%d-%s", k, []string{"", "é", "zz", "\x00"}[k%4]))
		case *array.BinaryBuilder:
			if k%11 == 10 {
				b.Append([]byte{})
				return
			}
			b.Append([]byte{byte(k), byte(k >> 8), 0xff})
		case *array.Int64Builder:
			b.Append([]int64{math.MinInt64, math.MaxInt64, 0, -1}[k%4] + int64(k%4*0) + int64(k)*int64(1-2*(k%2)))
		case *array.Float64Builder:
			b.Append([]float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0, 1.5, -2.25}[k%7] * float64(1+k/7))
		case *array.TimestampBuilder:
			b.Append(arrow.Timestamp(int64(k)*1_000_003 - 5_000_000))
		case *array.Date32Builder:
			b.Append(arrow.Date32(k - 700))
		case *array.BooleanBuilder:
			b.Append(k%3 == 0)
		case *array.Decimal128Builder:
			p := b.Type().(*arrow.Decimal128Type).Precision
			v := decimal128.FromI64(int64(k) * 37)
			if k%2 == 1 {
				v = v.Negate()
			}
			if k%5 == 0 {
				v, _ = decimal128.FromString(fmt.Sprintf("-%s", bigDigits(int(p))), p, 0)
			}
			b.Append(v)
		case *array.ListBuilder:
			n := k % 4
			b.Append(true)
			vb := b.ValueBuilder().(*array.StringBuilder)
			for j := range n {
				if j == 1 && k%3 == 0 {
					vb.AppendNull()
					continue
				}
				vb.Append(fmt.Sprintf("c%d", (k+j)%distinct))
			}
		case *array.StructBuilder:
			b.Append(true)
			for j := range b.NumField() {
				fill(b.FieldBuilder(j), true)
			}
		default:
			t.Fatalf("no filler for %T", b)
		}
	}
	for range rows {
		for i, f := range sc.Fields() {
			fill(rb.Field(i), f.Nullable)
		}
	}
	return rb.NewRecordBatch()
}

func bigDigits(n int) string { return string(bytes.Repeat([]byte("9"), n)) }

// encodeBoth writes rec with the lean encoder and with pqarrow under the
// same properties.
// With ints intsDelta, both write 64-bit integers as the writer
// does by default.
func encodeBoth(t *testing.T, rec arrow.RecordBatch, codec compress.Compression, pageSize int64, rowGroup int64, ints string) (lean, ref []byte) {
	t.Helper()
	mem := memory.DefaultAllocator
	kv := [][2]string{{"lakehouse.table", "APP.T"}}
	opts := []parquet.WriterProperty{parquet.WithCompression(codec), parquet.WithStats(true),
		parquet.WithDataPageSize(pageSize), parquet.WithMaxRowGroupLength(rowGroup), parquet.WithCreatedBy("lakehouse-exporter")}
	props := parquet.NewWriterProperties(opts...)
	arrProps := pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())
	sc, err := pqarrow.ToParquet(rec.Schema(), props, arrProps)
	if err != nil {
		t.Fatal(err)
	}
	if ints == intsDelta {
		props = parquet.NewWriterProperties(append(opts, deltaEncodings(sc)...)...)
	}
	leaves, err := planLeaves(leafColumns(sc), rec)
	if err != nil {
		t.Fatalf("the lean encoder refused the exporter's shapes: %v", err)
	}
	md := leanKeyValues(rec.Schema(), mem)
	md.Append(kv[0][0], kv[0][1])
	out := encodeLeanChecked(t, sc, leaves, rec, props, md)
	var refOut bytes.Buffer
	fw, err := pqarrow.NewFileWriter(rec.Schema(), &refOut, props, arrProps)
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.AppendKeyValueMetadata(kv[0][0], kv[0][1]); err != nil {
		t.Fatal(err)
	}
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	return out, refOut.Bytes()
}

// sameFile checks that the lean file reads back as the input batch and
// carries the reference file's schema, metadata and statistics.
func sameFile(t *testing.T, rec arrow.RecordBatch, lean, ref []byte) {
	t.Helper()
	lr, lt := readBack(t, lean)
	rr, rt := readBack(t, ref)
	if !lt.Schema().Equal(rt.Schema()) {
		t.Fatalf("schema read back:\n%v\nreference:\n%v", lt.Schema(), rt.Schema())
	}
	if lt.NumRows() != rec.NumRows() {
		t.Fatalf("%d rows read back, wrote %d", lt.NumRows(), rec.NumRows())
	}
	for i := range int(rec.NumCols()) {
		got, err := array.Concatenate(lt.Column(i).Data().Chunks(), memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		want, err := array.Concatenate(rt.Column(i).Data().Chunks(), memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		// NaN is not equal to itself: compare with NaNs equal.
		if !array.ApproxEqual(got, want, array.WithNaNsEqual(true), array.WithAbsTolerance(0)) {
			t.Fatalf("column %s differs from pqarrow's file", rec.Schema().Field(i).Name)
		}
		if !array.ApproxEqual(got, rec.Column(i), array.WithNaNsEqual(true), array.WithAbsTolerance(0)) {
			t.Fatalf("column %s does not read back as written", rec.Schema().Field(i).Name)
		}
		got.Release()
		want.Release()
	}
	lm, rm := lr.MetaData(), rr.MetaData()
	if lm.NumRowGroups() != rm.NumRowGroups() {
		t.Fatalf("%d row groups, reference %d", lm.NumRowGroups(), rm.NumRowGroups())
	}
	for _, key := range []string{"ARROW:schema", "table", "lakehouse.table"} {
		lv, rv := lm.KeyValueMetadata().FindValue(key), rm.KeyValueMetadata().FindValue(key)
		if lv == nil || rv == nil || *lv != *rv {
			t.Fatalf("key/value %s: %v, reference %v", key, lv, rv)
		}
	}
	for g := range lm.NumRowGroups() {
		if lm.RowGroup(g).NumRows() != rm.RowGroup(g).NumRows() {
			t.Fatalf("row group %d: %d rows, reference %d", g, lm.RowGroup(g).NumRows(), rm.RowGroup(g).NumRows())
		}
		for c := range lm.Schema.NumColumns() {
			lc, _ := lm.RowGroup(g).ColumnChunk(c)
			rc, _ := rm.RowGroup(g).ColumnChunk(c)
			if lc.NumValues() != rc.NumValues() {
				t.Errorf("row group %d column %s: %d values, reference %d", g, lc.PathInSchema(), lc.NumValues(), rc.NumValues())
			}
			ls, err := lc.Statistics()
			if err != nil {
				t.Fatal(err)
			}
			rs, _ := rc.Statistics()
			if ls == nil || rs == nil {
				t.Fatalf("row group %d column %s: statistics %v, reference %v", g, lc.PathInSchema(), ls, rs)
			}
			if lc.PathInSchema().String() == "list.list.element" {
				// arrow-go's min and max of a list's elements are not
				// always those of the row group (FuzzLeanEncoder found it
				// leaving them out, and reporting a min larger than one
				// present): the lean file's are held to the data itself.
				checkListStats(t, rec, g, int(lm.RowGroup(0).NumRows()), ls)
				if ls.NullCount() != rs.NullCount() {
					t.Errorf("row group %d column %s: nulls %d, reference %d", g, lc.PathInSchema(), ls.NullCount(), rs.NullCount())
				}
				continue
			}
			if lc.Type() == parquet.Types.Double && chunkHoldsNaN(rec, lc.PathInSchema(), g, int(lm.RowGroup(0).NumRows())) {
				// No min and max where the chunk holds NaN (statsAcc.encode),
				// while arrow-go's skip the NaNs.
				if ls.HasMinMax() || ls.NullCount() != rs.NullCount() {
					t.Errorf("row group %d column %s holds NaN: nulls %d min/max %v, want %d and none", g, lc.PathInSchema(),
						ls.NullCount(), ls.HasMinMax(), rs.NullCount())
				}
				continue
			}
			if ls.NullCount() != rs.NullCount() || ls.HasMinMax() != rs.HasMinMax() {
				t.Errorf("row group %d column %s: nulls %d min/max %v, reference %d %v", g, lc.PathInSchema(),
					ls.NullCount(), ls.HasMinMax(), rs.NullCount(), rs.HasMinMax())
				continue
			}
			if rs.HasMinMax() && (!bytes.Equal(ls.EncodeMin(), rs.EncodeMin()) || !bytes.Equal(ls.EncodeMax(), rs.EncodeMax())) {
				t.Errorf("row group %d column %s: min %x max %x, reference %x %x", g, lc.PathInSchema(),
					ls.EncodeMin(), ls.EncodeMax(), rs.EncodeMin(), rs.EncodeMax())
			}
		}
	}
}

// checkListStats holds the statistics of the list column's elements in
// row group g (of rowGroup rows each) to the smallest and largest string
// the batch holds there.
func checkListStats(t *testing.T, rec arrow.RecordBatch, g, rowGroup int, st metadata.TypedStatistics) {
	t.Helper()
	l := rec.Column(rec.Schema().FieldIndices("list")[0]).(*array.List)
	vals := l.ListValues().(*array.String)
	var lo, hi string
	found := false
	for row := g * rowGroup; row < min((g+1)*rowGroup, l.Len()); row++ {
		if l.IsNull(row) {
			continue
		}
		start, end := l.ValueOffsets(row)
		for j := int(start); j < int(end); j++ {
			if vals.IsNull(j) {
				continue
			}
			v := vals.Value(j)
			if !found || v < lo {
				lo = v
			}
			if !found || v > hi {
				hi = v
			}
			found = true
		}
	}
	if st.HasMinMax() != found {
		t.Fatalf("row group %d list elements: min/max %v, but %v present", g, st.HasMinMax(), found)
	}
	if found && (string(st.EncodeMin()) != lo || string(st.EncodeMax()) != hi) {
		t.Fatalf("row group %d list elements: min %q max %q, the data's %q %q", g, st.EncodeMin(), st.EncodeMax(), lo, hi)
	}
}

func TestLeanEncoderMatchesPqarrow(t *testing.T) {
	cases := []struct {
		rows      int
		nulls     float64
		distinct  int
		pageSize  int64
		rowGroup  int64
		codec     compress.Compression
		seed      uint64
		rowGroups int
	}{
		{rows: 1, nulls: 0, distinct: 1, pageSize: 1 << 20, rowGroup: 1 << 17, codec: compress.Codecs.Zstd},
		{rows: 7, nulls: 1, distinct: 3, pageSize: 1 << 20, rowGroup: 1 << 17, codec: compress.Codecs.Zstd},
		{rows: 3000, nulls: 0.2, distinct: 5, pageSize: 1 << 20, rowGroup: 1 << 17, codec: compress.Codecs.Zstd},
		{rows: 3000, nulls: 0.5, distinct: 100000, pageSize: 1 << 20, rowGroup: 1000, codec: compress.Codecs.Snappy},
		{rows: 5000, nulls: 0.05, distinct: 40, pageSize: 512, rowGroup: 1700, codec: compress.Codecs.Uncompressed},
		{rows: 20000, nulls: 0.1, distinct: 3000, pageSize: 4096, rowGroup: 1 << 17, codec: compress.Codecs.Gzip},
		{rows: 2000, nulls: 0, distinct: 2000, pageSize: 1 << 20, rowGroup: 333, codec: compress.Codecs.Zstd},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%d-rows%d-nulls%v-distinct%d", i, c.rows, c.nulls, c.distinct), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i), 7))
			rec := randomBatch(t, r, c.rows, c.nulls, c.distinct)
			defer rec.Release()
			for _, ints := range []string{intsDelta, intsPlain} {
				lean, ref := encodeBoth(t, rec, c.codec, c.pageSize, c.rowGroup, ints)
				sameFile(t, rec, lean, ref)
			}
		})
	}
}

// The lean encoder must be worth its keep: files no larger than pqarrow's
// (dictionaries where values repeat).
func TestLeanFilesAreNotLarger(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	rec := randomBatch(t, r, 20000, 0.1, 50)
	defer rec.Release()
	lean, ref := encodeBoth(t, rec, compress.Codecs.Zstd, 1<<20, 1<<17, intsDelta)
	if float64(len(lean)) > 1.05*float64(len(ref)) {
		t.Fatalf("lean file %d bytes, pqarrow's %d", len(lean), len(ref))
	}
}

// FuzzLeanEncoder draws batches of every shape and checks each lean file
// against pqarrow's: go test ./writer -fuzz FuzzLeanEncoder
func FuzzLeanEncoder(f *testing.F) {
	f.Add(uint64(1), uint16(100), uint8(10), uint16(7), uint16(512), uint16(64))
	f.Add(uint64(2), uint16(3000), uint8(0), uint16(3000), uint16(4096), uint16(1000))
	f.Add(uint64(3), uint16(9), uint8(255), uint16(1), uint16(64), uint16(2))
	f.Fuzz(func(t *testing.T, seed uint64, rows uint16, nulls uint8, distinct, pageSize, rowGroup uint16) {
		if rows == 0 || distinct == 0 || rowGroup == 0 {
			return
		}
		r := rand.New(rand.NewPCG(seed, 11))
		rec := randomBatch(t, r, int(rows%5000)+1, float64(nulls)/255, int(distinct))
		defer rec.Release()
		ints := intsDelta
		if seed%2 == 1 {
			ints = intsPlain
		}
		lean, ref := encodeBoth(t, rec, compress.Codecs.Zstd, int64(pageSize)+1, int64(rowGroup), ints)
		sameFile(t, rec, lean, ref)
	})
}

// How encodeBoth writes 64-bit integers without a dictionary.
const (
	intsDelta = "delta"
	intsPlain = "plain"
)

// readBack opens a Parquet file and reads all its rows with arrow-go.
func readBack(t *testing.T, data []byte) (*file.Reader, arrow.Table) {
	t.Helper()
	rdr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("not a Parquet file: %v", err)
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tbl.Release)
	return rdr, tbl
}

// chunkHoldsNaN reports whether the DOUBLE leaf at path (a top-level
// column or a field of a top-level struct) holds a NaN in row group g, of
// rowGroup rows each.
func chunkHoldsNaN(rec arrow.RecordBatch, path parquet.ColumnPath, g, rowGroup int) bool {
	idx := rec.Schema().FieldIndices(path[0])
	if len(idx) != 1 {
		return false
	}
	a := rec.Column(idx[0])
	if st, ok := a.(*array.Struct); ok && len(path) == 2 {
		j, ok := st.DataType().(*arrow.StructType).FieldIdx(path[1])
		if !ok {
			return false
		}
		a = st.Field(j)
	}
	f, ok := a.(*array.Float64)
	if !ok {
		return false
	}
	for i := g * rowGroup; i < min(f.Len(), (g+1)*rowGroup); i++ {
		if f.IsValid(i) && math.IsNaN(f.Value(i)) {
			return true
		}
	}
	return false
}
