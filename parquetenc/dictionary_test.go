package parquetenc

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Where a dictionary is chosen, it is the smaller file: on 20,000 random
// strings and int64s drawn from 3,000 values the lean file carries
// dictionaries and is no larger than pqarrow's (which always tries one);
// drawn from 12,000 (half of them distinct) it is written plain, and
// smaller than pqarrow's. 1,000 rows drawn from 400 values (37% distinct)
// keep theirs: judged on the first 64 values' repeats taken as they came,
// such chunks lost it about half the time.
func TestDictionaryWhereItIsSmaller(t *testing.T) {
	for _, c := range []struct {
		rows, values int
		wantDict     bool
		maxRatio     float64 // lean bytes / pqarrow bytes
	}{{20000, 3000, true, 1.02}, {20000, 12000, false, 0.95}, {1000, 400, true, 1.05}} {
		r := rand.New(rand.NewPCG(1, 2))
		vals := make([]string, c.values)
		for i := range vals {
			vals[i] = fmt.Sprintf("v%08x", r.Uint32())
		}
		sc := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
			{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for range c.rows {
			b.Field(0).(*array.StringBuilder).Append(vals[r.IntN(c.values)])
			b.Field(1).(*array.Int64Builder).Append(int64(r.IntN(c.values)) * 7919)
		}
		rec := b.NewRecordBatch()
		b.Release()
		props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithCompressionLevel(1))
		lean, ref, fr := leanAndPqarrow(t, rec, props)
		rec.Release()
		for col := range 2 {
			cc, err := fr.MetaData().RowGroup(0).ColumnChunk(col)
			if err != nil {
				t.Fatal(err)
			}
			if cc.HasDictionaryPage() != c.wantDict {
				t.Errorf("%d rows of %d values, column %d: dictionary %v, want %v", c.rows, c.values, col, cc.HasDictionaryPage(), c.wantDict)
			}
		}
		if ratio := float64(len(lean)) / float64(len(ref)); ratio > c.maxRatio {
			t.Errorf("%d rows of %d values: lean file %d bytes, pqarrow's %d (%.2f, want at most %.2f)", c.rows, c.values, len(lean), len(ref), ratio, c.maxRatio)
		}
	}
}

// 64-bit integers spread over their whole range (random keys, hashes) cost
// nearly 64 bits a value as deltas or PLAIN, so a dictionary pays for
// them up to about 80% distinct, not 40%: columns half distinct keep it,
// and the file is about the size of pqarrow's.
func TestDictionaryForWideIntegers(t *testing.T) {
	for _, c := range []struct{ rows, values int }{{20000, 15000}, {1000, 1000}} {
		r := rand.New(rand.NewPCG(5, 6))
		pool := make([]int64, c.values)
		for i := range pool {
			pool[i] = int64(r.Uint64())
		}
		sc := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for range c.rows {
			b.Field(0).(*array.Int64Builder).Append(pool[r.IntN(c.values)])
		}
		rec := b.NewRecordBatch()
		b.Release()
		props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithCompressionLevel(1),
			parquet.WithEncodingFor("k", parquet.Encodings.DeltaBinaryPacked))
		lean, ref, fr := leanAndPqarrow(t, rec, props)
		rec.Release()
		cc, err := fr.MetaData().RowGroup(0).ColumnChunk(0)
		if err != nil {
			t.Fatal(err)
		}
		if !cc.HasDictionaryPage() {
			t.Errorf("%d rows of %d wide values: no dictionary", c.rows, c.values)
		}
		if ratio := float64(len(lean)) / float64(len(ref)); ratio > 1.05 {
			t.Errorf("%d rows of %d wide values: lean file %d bytes, pqarrow's %d (%.2f)", c.rows, c.values, len(lean), len(ref), ratio)
		}
	}
	// Narrow integers keep the 40%: their deltas are cheap.
	small := array.NewInt64Builder(memory.DefaultAllocator)
	for i := range 200 {
		small.Append(int64(i * 7919 % 100000))
	}
	a := small.NewInt64Array()
	defer a.Release()
	var deltas deltaRange
	for i := 1; i < 200; i++ {
		deltas.add(a.Value(i) - a.Value(i-1))
	}
	if got := deltas.dictionaryShare(200); got != dictionaryMaxEstimated {
		t.Errorf("share for integers below 100,000: %.2f, want %.2f", got, dictionaryMaxEstimated)
	}
}

// The judgement of a chunk's first values, against the chunk's size.
func TestMostlyDistinctChunk(t *testing.T) {
	for _, c := range []struct {
		seen, distinct, total int
		want                  bool
	}{
		{64, 64, 1000, true},        // no repeat in 64: ~1,000 values at least, most of the chunk
		{64, 64, 20000, false},      // no repeat yet says nothing about a chunk of 20,000
		{256, 256, 20000, true},     // nor a repeat in 256: ~16,000 values at least
		{256, 245, 20000, false},    // 11 repeats in 256: about 3,000 values
		{64, 20, 100, false},        // 20 of 64: about 20 values, in a chunk of 100
		{64, 40, 100, false},        // 40 of 64: about 60 values, but the repeats vary: kept
		{64, 64, 64, true},          // all distinct, the whole chunk
		{1024, 1000, 1100, true},    // already past the share
		{16384, 16000, 20000, true}, // repeats stopped: ~330,000 values
	} {
		if got := mostlyDistinctChunk(c.seen, c.distinct, c.total, dictionaryMaxEstimated); got != c.want {
			t.Errorf("mostlyDistinctChunk(%d, %d, %d) = %v, want %v", c.seen, c.distinct, c.total, got, c.want)
		}
	}
	// The estimate itself: the expected distinct count of 3,000 values drawn
	// from 5,000 is 5000·(1-(1-1/5000)^3000) ≈ 2,256.
	if k := drawnFrom(3000, 2256); k < 4900 || k > 5100 {
		t.Errorf("drawnFrom(3000, 2256) = %.0f, want about 5,000", k)
	}
}

// leanAndPqarrow encodes rec with the lean encoder and with pqarrow under
// the same properties, and opens the lean file's metadata.
func leanAndPqarrow(t *testing.T, rec arrow.RecordBatch, props *parquet.WriterProperties) (lean, ref []byte, fr *file.Reader) {
	t.Helper()
	lean = encodeLeanWith(t, rec, props)
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(rec.Schema(), &buf, props, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	fr, err = file.NewParquetReader(bytes.NewReader(lean))
	if err != nil {
		t.Fatal(err)
	}
	return lean, buf.Bytes(), fr
}
