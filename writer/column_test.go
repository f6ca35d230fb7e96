package writer

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
)

// A column builds the same Arrow array as arrow-go's builder given the
// same values, for every kind, with nulls, absent values and growth.
func TestColumnMatchesArrowBuilders(t *testing.T) {
	kinds := []arrowschema.Type{
		{Kind: arrowschema.KindString}, {Kind: arrowschema.KindBinary}, {Kind: arrowschema.KindInt64},
		{Kind: arrowschema.KindFloat64}, {Kind: arrowschema.KindDecimal, Precision: 20, Scale: 3},
		{Kind: arrowschema.KindBoolean}, {Kind: arrowschema.KindTimestamp}, {Kind: arrowschema.KindDate},
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(9, 9))
	for _, typ := range kinds {
		for _, rows := range []int{0, 1, 31, 33, 1000} {
			c := newColumn(mem, typ)
			if rows == 1000 {
				c.reserve(100, 10) // a hint smaller than the rows
			}
			bld := array.NewBuilder(mem, typ.Arrow())
			for i := range rows {
				s := slot{state: slotState(r.IntN(3))}
				setRandom(r, typ.Kind, &s)
				s.bytes = []byte{byte(i), byte(i >> 8), 'x'}[:r.IntN(4)]
				if i%50 == 0 {
					c.appendNulls(3)
					bld.AppendNulls(3)
				}
				c.append(&s)
				appendToBuilder(bld, &s)
			}
			got, want := c.newArray(), bld.NewArray()
			if !array.Equal(got, want) || got.NullN() != want.NullN() {
				t.Fatalf("%s, %d rows: column built\n%v\nbuilder built\n%v", typ, rows, got, want)
			}
			got.Release()
			want.Release()
			bld.Release()
		}
	}
}

// Buffers given back unflushed and files encoded free every byte they
// took from the allocator.
func TestWriterReturnsEveryByte(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	v, recs := benchRecords(t, 700, 10)
	w := newWriter(t, Config{Allocator: mem, DeferEncode: true, MaxRows: 300})
	var files []*File
	for i, r := range recs {
		fs, err := w.Append(v, r, Source{Partition: "p0", Offset: int64(i)})
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fs...)
	}
	if err := files[0].Encode(); err != nil {
		t.Fatal(err)
	}
	files[1].Release()
	w.Close() // the third file's rows, never flushed
}

// A before image built from compact fields (values only for the rows with
// an image) is the struct arrow-go's builder makes appending a null to
// every field for a row without one: the same validity, the same fields.
func TestStructColumnMatchesArrowBuilder(t *testing.T) {
	v := convVersion(t, "S", "string", "B", "binary", "I", "int64", "F", "float64", "D", "decimal(20,3)",
		"L", "boolean", "T", "timestamp", "A", "date")
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(7, 7))
	dtype := arrow.StructOf(func() []arrow.Field {
		var fs []arrow.Field
		for _, c := range v.Columns {
			fs = append(fs, arrow.Field{Name: c.Name, Type: c.Type.Arrow(), Nullable: true})
		}
		return fs
	}()...)
	for _, rows := range []int{0, 1, 40, 1000} {
		for _, imageRatio := range []float64{0, 0.3, 1} {
			s := newStructColumn(mem, v, dtype)
			bld := array.NewStructBuilder(mem, dtype)
			for range rows {
				if r.Float64() >= imageRatio {
					s.appendNull()
					bld.AppendNull()
					continue
				}
				slots := make([]slot, len(v.Columns))
				bld.Append(true)
				for i := range slots {
					sl := &slots[i]
					sl.state = slotState(1 + r.IntN(2))
					setRandom(r, v.Columns[i].Type.Kind, sl)
					sl.bytes = []byte("abcdef")[:r.IntN(7)]
					appendToBuilder(bld.FieldBuilder(i), sl)
				}
				s.appendImage(slots)
			}
			got, want := s.newArray().(*array.Struct), bld.NewArray().(*array.Struct)
			if !array.Equal(got, want) || got.NullN() != want.NullN() {
				t.Fatalf("%d rows, %.0f%% images: column built\n%v\nbuilder built\n%v", rows, 100*imageRatio, got, want)
			}
			for i := range v.Columns {
				g, w := got.Field(i), want.Field(i)
				if !array.Equal(g, w) || g.NullN() != w.NullN() {
					t.Fatalf("%d rows, %.0f%% images: field %s\n%v\nbuilder built\n%v", rows, 100*imageRatio, v.Columns[i].Name, g, w)
				}
			}
			got.Release()
			want.Release()
			bld.Release()
		}
	}
}

// appendToBuilder appends s to an arrow-go builder of its kind.
func appendToBuilder(bld array.Builder, s *slot) {
	if s.state != slotSet {
		bld.AppendNull()
		return
	}
	switch b := bld.(type) {
	case *array.StringBuilder:
		b.BinaryBuilder.Append(s.bytes)
	case *array.BinaryBuilder:
		b.Append(s.bytes)
	case *array.Int64Builder:
		b.Append(s.i64)
	case *array.Float64Builder:
		b.Append(s.f64())
	case *array.Decimal128Builder:
		b.Append(s.dec())
	case *array.BooleanBuilder:
		b.Append(s.bool())
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(s.i64))
	case *array.Date32Builder:
		b.Append(arrow.Date32(s.i64))
	}
}

// setRandom gives s a random value of kind (strings are the callers').
func setRandom(r *rand.Rand, kind arrowschema.Kind, s *slot) {
	switch kind {
	case arrowschema.KindFloat64:
		s.setF64(r.NormFloat64())
	case arrowschema.KindDecimal:
		s.setDec(decimal128.New(r.Int64N(1e6)-5e5, r.Uint64()))
	case arrowschema.KindBoolean:
		s.setBool(r.IntN(2) == 0)
	default:
		s.i64 = r.Int64N(1e12) - 5e11
	}
}
