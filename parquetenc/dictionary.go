package parquetenc

import (
	"hash/maphash"
	"math"
	"math/bits"
	"unsafe"

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

// writeDictionary builds the chunk's dictionary from rows [start, end)
// and writes its page. It reports false, writing nothing, when the
// dictionary would pass the configured page size limit: the chunk is then
// written plain.
func (f *leanFile) writeDictionary(l *leaf, chunk selection, st *chunkState) (bool, error) {
	s := f.s
	if !f.buildDictionary(l, chunk) {
		return false, nil
	}
	// Every entry appears in the chunk, so the entries give its
	// statistics; its data pages then only hold indices.
	s.values = plainValues(l, selection{idx: s.order}, s.values[:0], &st.stats)
	n := len(s.order)
	st.dictPageOffset = f.writePage(st, s.values, dictionaryPage, n, f.props.DictionaryPageEncoding())
	st.dictBitWidth = max(1, bits.Len(uint(n-1)))
	return true, nil
}

// buildDictionary numbers the distinct selected values in order of first
// appearance into s.order (value indices), and the entry of each selected
// value into s.dict. It reports false when the
// chunk should be written plain: booleans, an empty chunk, a dictionary
// past the configured page size limit, or values that hardly repeat.
// Whether they repeat is judged on the first dictionarySample values and
// again at each doubling: hashing them is work the dictionary needs anyway, where a separate
// sample cost a hash map per column of every file (17% of encoding with
// hundreds of small files).
func (f *leanFile) buildDictionary(l *leaf, sel selection) bool {
	s := f.s
	clear(s.strDict)
	clear(s.numDict)
	clear(s.decDict)
	s.order, s.dict = s.order[:0], s.dict[:0]
	limit := int(f.props.DictionaryPageSizeLimit())
	size, seen := 0, 0
	// keep is called after each value; false stops the build. The
	// judgement is made from the 64th value on and again at each
	// doubling, so that distinct values are found out early (with
	// hundreds of tables most chunks are a few hundred values, and
	// building their whole dictionary for nothing was 15% of encoding)
	// and values that stop repeating later do not fill one.
	next := minDictionaryJudged
	total := sel.len()
	share := dictionaryMaxEstimated
	if vals := int64Values(l.values); vals != nil && total >= minDictionaryJudged {
		// The first values' neighbours, as the chunk's delta page holds them.
		var r deltaRange
		prev := -1
		sel.eachWhile(func(i int) bool {
			if prev >= 0 {
				r.add(vals[i] - vals[prev])
			}
			prev = i
			return r.n < minDictionaryJudged-1
		})
		share = r.dictionaryShare(total)
	}
	keep := func() bool {
		seen++
		if seen == next {
			next *= 2
			if mostlyDistinctChunk(seen, len(s.order), total, share) {
				return false
			}
		}
		return size <= limit
	}
	var done bool
	switch a := l.values.(type) {
	case *array.String, *array.Binary:
		offs, data := binaryParts(a)
		done = sel.eachWhile(func(i int) bool {
			v := unsafe.String(unsafe.SliceData(data[offs[i]:]), int(offs[i+1]-offs[i]))
			size += addToDictionary(s, s.strDict, v, i, len(v)+4)
			return keep()
		})
	case *array.Decimal128:
		width := l.col.TypeLength()
		done = sel.eachWhile(func(i int) bool {
			size += addToDictionary(s, s.decDict, a.Value(i), i, width)
			return keep()
		})
	default:
		width := 8
		switch l.values.(type) {
		case *array.Date32, *array.Int32:
			width = 4
		}
		// For the numeric types left here the "hash" is the value's own
		// bits: exact, so it can key the dictionary.
		key := valueHasher(l.values, f.enc.seed)
		if key == nil {
			return false // booleans: no dictionary
		}
		done = sel.eachWhile(func(i int) bool {
			size += addToDictionary(s, s.numDict, key(i), i, width)
			return keep()
		})
	}
	if !done || len(s.order) == 0 {
		return false
	}
	// A chunk is judged on all its values, unless it is too small for
	// the judgement to mean anything.
	return seen < minDictionaryJudged || float64(len(s.order)) <= dictionaryMaxDistinct*float64(seen)
}

// minDictionaryJudged is the fewest values whose repetition decides on a
// dictionary; fewer keep it, as arrow-go's default does.
const minDictionaryJudged = 64

// mostlyDistinctChunk reports whether a chunk of total values, whose
// first seen values hold distinct different ones, is likely to have more
// than maxShare of its values distinct, so that a dictionary would not
// pay and building it is work for nothing.
//
// The share of distinct values among the first few says little about a
// whole chunk: 64 values drawn from 3,000 are nearly all different, yet a
// chunk of 20,000 of them is 15% distinct, and judging it by that share
// wrote such columns plain, a half larger than with a dictionary. So the
// judgement estimates the number of distinct values the chunk draws from
// (the repeats among the first values, as in the birthday problem), and
// from it the chunk's own distinct share. With no repeat yet, the
// estimate is the fewest values for which one repeat was expected: a lower
// bound, so a unique column is still found out at 64 values in a small
// chunk, and within a few hundred in a large one.
func mostlyDistinctChunk(seen, distinct, total int, maxShare float64) bool {
	if total <= 0 {
		return false
	}
	// The repeats seen are few and vary from chunk to chunk: the estimate
	// takes more of them than were seen (about a 95% upper bound, were
	// they a Poisson count), so that it is a lower bound on the values
	// drawn from and a dictionary that pays is rarely given up. With
	// none seen yet, two: 64 unique values still stop the build in a
	// chunk of a thousand.
	repeats := float64(seen - distinct)
	repeats += 2*math.Sqrt(repeats) + 2
	from := drawnFrom(seen, max(1, seen-int(math.Ceil(repeats))))
	inChunk := from * -math.Expm1(float64(total)*math.Log1p(-1/from))
	return max(inChunk, float64(distinct)) > maxShare*float64(total)
}

// int64Values returns a's values when it holds 64-bit integers (int64 or
// timestamps), whose deltas deltaRange judges; nil otherwise.
func int64Values(a arrow.Array) []int64 {
	switch a := a.(type) {
	case *array.Int64:
		return a.Int64Values()
	case *array.Timestamp:
		ts := a.TimestampValues()
		return unsafe.Slice((*int64)(unsafe.SliceData(ts)), len(ts))
	}
	return nil
}

// deltaRange is the range of differences between neighbouring values of
// a 64-bit integer column, which a delta page spends bits.Len of on each
// value.
type deltaRange struct {
	lo, hi int64
	n      int
}

func (r *deltaRange) add(d int64) {
	if r.n == 0 {
		r.lo, r.hi = d, d
	}
	r.lo, r.hi, r.n = min(r.lo, d), max(r.hi, d), r.n+1
}

// dictionaryShare is the estimated distinct share up to which a
// dictionary pays for a chunk of total values with these deltas:
// dictionaryMaxEstimated, or more for integers whose neighbours differ by
// most of their range (random keys, hashes). Deltas or PLAIN store those
// in nearly 64 bits a value, where a dictionary stores each distinct value
// once and an index of about log2 of its entries a row: with deltas of 64
// bits a dictionary paid up to about 80% distinct.
func (r deltaRange) dictionaryShare(total int) float64 {
	if r.n < 2 {
		return dictionaryMaxEstimated
	}
	width := bits.Len64(uint64(r.hi - r.lo))
	share := float64(width-bits.Len(uint(total))) / 64
	return min(max(share, dictionaryMaxEstimated), dictionaryMaxWide)
}

// dictionaryMaxWide bounds deltaRange.dictionaryShare.
const dictionaryMaxWide = 0.8

// dictionaryMaxEstimated is the estimated share of distinct values past
// which a chunk is written plain. On 20,000 random 9-byte strings and as
// many int64s at zstd level 1, a dictionary was 7% smaller at 22% distinct,
// even at 37%, and 7% larger at 49% (TestDictionaryWhereItIsSmaller).
const dictionaryMaxEstimated = 0.4

// drawnFrom estimates from how many equally likely values seen draws
// were made that gave distinct different ones (distinct < seen): the k
// whose expected distinct count, k·(1-(1-1/k)^seen), is distinct.
func drawnFrom(seen, distinct int) float64 {
	n, d := float64(seen), float64(distinct)
	expected := func(k float64) float64 { return k * -math.Expm1(n*math.Log1p(-1/k)) }
	lo, hi := d, 2*d
	for expected(hi) < d {
		lo, hi = hi, 2*hi
	}
	// To a millionth: the estimate is compared with a share of the chunk,
	// and each step costs two logarithms (50 steps were 1% of the CPU
	// with hundreds of tables' small files).
	for hi-lo > 1e-6*hi {
		mid := (lo + hi) / 2
		if expected(mid) < d {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

func binaryParts(a arrow.Array) ([]int32, []byte) {
	switch a := a.(type) {
	case *array.String:
		return a.ValueOffsets(), stringData(a.Data())
	case *array.Binary:
		return a.ValueOffsets(), stringData(a.Data())
	}
	return nil, nil
}

// addToDictionary records the entry of value i (keyed by key) in s.dict,
// adding it when new; it returns the bytes a new entry adds to the
// dictionary page.
func addToDictionary[K comparable](s *leanScratch, m map[K]int32, key K, i, width int) int {
	k, ok := m[key]
	added := 0
	if !ok {
		k = int32(len(s.order))
		m[key] = k
		s.order = append(s.order, int32(i))
		added = width
	}
	s.dict = append(s.dict, k)
	return added
}
