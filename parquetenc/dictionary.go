package parquetenc

import (
	"hash/maphash"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// Dictionary encoding pays off for columns that repeat values (status
// codes, names, foreign keys) and costs double for columns that do not
// (keys, positions, timestamps): every value is hashed, the dictionary
// page holds all the values anyway and zstd then compresses both. The
// profile of the benchmark showed the dictionary pages of unique columns
// taking most of the encoding time, so each file decides per column from a
// sample of its values.
const (
	dictionarySample = 1024
	// A chunk whose dictionary, once built, holds more than this share of
	// its values is written plain. Samples are judged on the share they
	// suggest for the whole chunk (mostlyDistinctChunk), not on their own:
	// a sample of 1,024 values drawn from 5,000 is 90% distinct, while a
	// chunk of 20,000 of them is a quarter.
	dictionaryMaxDistinct = 0.9
)

// dictionaryProperties returns one WithDictionaryFor per leaf column of
// the Parquet schema sc that should be written plain. Leaves are matched
// to arrays in schema order; if the shapes disagree (a type this function
// does not walk), it returns nothing and the writer's default applies.
func dictionaryProperties(sc *schema.Schema, rec arrow.RecordBatch, seed maphash.Seed) []parquet.WriterProperty {
	var leaves []arrow.Array
	for _, col := range rec.Columns() {
		leaves = leafArrays(col, leaves)
	}
	if len(leaves) != sc.NumColumns() {
		return nil
	}
	seen := make(map[uint64]struct{}, dictionarySample)
	var props []parquet.WriterProperty
	for i, a := range leaves {
		if !mostlyDistinct(a, seen, seed) {
			continue
		}
		props = append(props, parquet.WithDictionaryFor(sc.Column(i).ColumnPath().String(), false))
	}
	return props
}

// leafArrays appends the arrays holding arr's leaf values, depth first, as
// pqarrow lays out Parquet leaf columns.
func leafArrays(arr arrow.Array, out []arrow.Array) []arrow.Array {
	switch a := arr.(type) {
	case *array.Struct:
		for i := range a.NumField() {
			out = leafArrays(a.Field(i), out)
		}
	case array.ListLike:
		out = leafArrays(a.ListValues(), out)
	default:
		out = append(out, arr)
	}
	return out
}

// mostlyDistinct samples up to dictionarySample non-null values spread
// over a and reports whether the repeats among them put a's distinct
// share past what a dictionary pays for (mostlyDistinctChunk). Columns too
// small to matter, booleans (never dictionary encoded) and types it
// cannot hash cheaply keep the dictionary.
func mostlyDistinct(a arrow.Array, seen map[uint64]struct{}, seed maphash.Seed) bool {
	n := a.Len()
	if n-a.NullN() < 64 {
		return false
	}
	hash := valueHasher(a, seed)
	if hash == nil {
		return false
	}
	clear(seen)
	stride := max(1, n/dictionarySample)
	sampled := 0
	vals := int64Values(a)
	var deltas deltaRange // of the sampled values' next rows
	for i := 0; i < n && sampled < dictionarySample; i += stride {
		if a.IsNull(i) {
			continue
		}
		seen[hash(i)] = struct{}{}
		sampled++
		if vals != nil && deltas.n < minDictionaryJudged && i+1 < n && !a.IsNull(i+1) {
			deltas.add(vals[i+1] - vals[i])
		}
	}
	return sampled >= 64 && mostlyDistinctChunk(sampled, len(seen), n-a.NullN(), deltas.dictionaryShare(n-a.NullN()))
}

// valueHasher returns a hash of each value of arr, or nil for types it
// does not hash. For integer, float, timestamp and date arrays the hash is
// the value's own bits, exact: the lean encoder keys dictionaries on it.
func valueHasher(arr arrow.Array, seed maphash.Seed) func(int) uint64 {
	switch a := arr.(type) {
	case *array.String:
		return func(i int) uint64 { return maphash.String(seed, a.Value(i)) }
	case *array.LargeString:
		return func(i int) uint64 { return maphash.String(seed, a.Value(i)) }
	case *array.Binary:
		return func(i int) uint64 { return maphash.Bytes(seed, a.Value(i)) }
	case *array.Int64:
		return func(i int) uint64 { return uint64(a.Value(i)) }
	case *array.Int32:
		return func(i int) uint64 { return uint64(a.Value(i)) }
	case *array.Int16:
		return func(i int) uint64 { return uint64(a.Value(i)) }
	case *array.Int8:
		return func(i int) uint64 { return uint64(a.Value(i)) }
	case *array.Uint64:
		return func(i int) uint64 { return a.Value(i) }
	case *array.Float64:
		return func(i int) uint64 { return math.Float64bits(a.Value(i)) }
	case *array.Float32:
		return func(i int) uint64 { return uint64(math.Float32bits(a.Value(i))) }
	case *array.Timestamp:
		return func(i int) uint64 { return uint64(a.Value(i)) }
	case *array.Date32:
		return func(i int) uint64 { return uint64(a.Value(i)) }
	case *array.Time64:
		return func(i int) uint64 { return uint64(a.Value(i)) }
	case *array.Decimal128:
		return func(i int) uint64 { v := a.Value(i); return v.LowBits() ^ uint64(v.HighBits())*0x9e3779b97f4a7c15 }
	}
	return nil
}
