package parquetenc

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/parquet"
)

// chunkState accumulates one column chunk's pages and statistics.
type chunkState struct {
	numValues       int64
	nulls           int64
	compressed      int64
	uncompressed    int64
	dataPageOffset  int64
	dictPageOffset  int64
	pages           int32
	stats           statsAcc
	dictBitWidth    int
	usingDictionary bool
	encoding        parquet.Encoding // of pages without a dictionary
	packed          packedVerdict    // of the chunk's bit-packed pages (zstd.go)
}

func (f *leanFile) writeChunk(cm *chunkMeta, col *footerColumn, l *leaf, start, end int) error {
	st := chunkState{encoding: parquet.Encoding(col.encoding)}
	// Levels and the present values are found once for the chunk; pages
	// are slices of them.
	nLevels := f.levels(l, start, end)
	chunk := f.pageSelection(l, start, end)
	if !l.plain && f.props.DictionaryEnabledFor(l.col.Path()) {
		ok, err := f.writeDictionary(l, chunk, &st)
		if err != nil {
			return err
		}
		st.usingDictionary = ok
	}
	s := f.s
	maxDef := uint8(l.col.MaxDefinitionLevel())
	pageRows := f.pageRows(l, start, end)
	lv, vv := 0, 0 // the next page's first level and first present value
	for p := start; p < end; p += pageRows {
		pe := min(p+pageRows, end)
		pg := page{levels: pe - p}
		switch {
		case contiguous(l):
			pg.values = selection{all: true, start: p, end: pe}
			pg.present = pe - p
		default:
			le := lv + (pe - p)
			if l.kind == leafList {
				// A row starts at each repetition level 0.
				le, rows := lv, 0
				for le < nLevels && (s.reps[le] != 0 || rows < pe-p) {
					if s.reps[le] == 0 {
						rows++
					}
					le++
				}
				pg.reps = s.reps[lv:le]
				pg.levels = le - lv
				pg.defs = s.defs[lv:le]
			} else {
				pg.defs = s.defs[lv:le]
			}
			for _, d := range pg.defs {
				if d == maxDef {
					pg.present++
				}
			}
			pg.values = selection{idx: s.idx[vv : vv+pg.present]}
		}
		if st.usingDictionary {
			pg.dict = s.dict[vv : vv+pg.present]
		}
		if err := f.writeDataPage(l, &pg, &st); err != nil {
			return err
		}
		lv += pg.levels
		vv += pg.present
	}
	enc := st.stats.encode(l, st.nulls)
	enc.ApplyStatSizeLimits(col.maxStats)
	*cm = chunkMeta{
		numValues:      st.numValues,
		dataPageOffset: st.dataPageOffset,
		compressed:     st.compressed,
		uncompressed:   st.uncompressed,
		dataPages:      st.pages,
		stats:          enc,
	}
	if st.usingDictionary {
		cm.dictionary, cm.dictPageOffset = true, st.dictPageOffset
	}
	return nil
}

// pageRows splits a chunk into pages of about the configured page size.
func (f *leanFile) pageRows(l *leaf, start, end int) int {
	rows := end - start
	if rows == 0 {
		return 1
	}
	target := f.props.DataPageSize()
	var perRow int64 = 9
	switch a := l.values.(type) {
	case *array.String:
		perRow = int64(len(a.ValueBytes()))/int64(max(a.Len(), 1)) + 5
	case *array.Binary:
		perRow = int64(len(a.ValueBytes()))/int64(max(a.Len(), 1)) + 5
	case *array.Decimal128:
		perRow = int64(l.col.TypeLength()) + 1
	}
	if l.kind == leafList {
		perRow = perRow*int64(l.values.Len())/int64(max(l.parent.Len(), 1)) + 2
	}
	n := int(target / max(perRow, 1))
	n = max(n, 1024)
	n = (n + 7) &^ 7
	return min(n, rows)
}

// levels fills s.defs, s.reps and s.idx (the indices of the present
// values) for rows [start, end) and returns the number of level entries.
func (f *leanFile) levels(l *leaf, start, end int) int {
	s := f.s
	s.defs, s.reps, s.idx = s.defs[:0], s.reps[:0], s.idx[:0]
	v := l.values
	maxDef := uint8(l.col.MaxDefinitionLevel())
	switch l.kind {
	case leafFlat:
		if v.NullN() == 0 {
			return end - start // all present: no per-row work
		}
		valid := validBits(v)
		defs, idx := grow(s.defs, end-start), grow(s.idx, end-start)
		k := 0
		for j := range defs {
			// Without branches: which rows are null follows no pattern, and
			// a mispredicted branch per row was most of this loop's time.
			i := start + j
			d := valid.at(i)
			defs[j] = d
			idx[k] = int32(i)
			k += int(d)
		}
		s.defs, s.idx = defs, idx[:k]
		return end - start
	case leafStruct:
		parent, valid := validBits(l.parent), validBits(v)
		parentOpt, valueOpt := uint8(b2i(l.parentOpt)), uint8(b2i(l.valueOpt))
		defs, idx := grow(s.defs, end-start), grow(s.idx, end-start)
		k := 0
		for j := range defs {
			i := start + j
			// The parent's level when it is present, the value's when both are.
			p := parent.at(i) | (1 - parentOpt)
			d := p*parentOpt + p*(valid.at(i)|(1-valueOpt))*valueOpt
			defs[j] = d
			idx[k] = int32(i)
			k += int(b2i(d == maxDef))
		}
		s.defs, s.idx = defs, idx[:k]
		return end - start
	}
	list := l.parent.(*array.List)
	offsets := list.Offsets()
	base := uint8(b2i(l.parentOpt))
	for i := start; i < end; i++ {
		if l.parentOpt && list.IsNull(i) {
			s.defs, s.reps = append(s.defs, 0), append(s.reps, 0)
			continue
		}
		lo, hi := int(offsets[i]), int(offsets[i+1])
		if lo == hi {
			s.defs, s.reps = append(s.defs, base), append(s.reps, 0)
			continue
		}
		for j := lo; j < hi; j++ {
			d := base + 1
			if l.valueOpt && v.IsValid(j) {
				d++
			}
			rep := uint8(1)
			if j == lo {
				rep = 0
			}
			s.defs, s.reps = append(s.defs, d), append(s.reps, rep)
			if d == maxDef {
				s.idx = append(s.idx, int32(j))
			}
		}
	}
	return len(s.defs)
}

// bitsOf is an array's validity bitmap, read a row at a time.
type bitsOf struct {
	bitmap []byte // nil when every row is valid
	offset int
}

func validBits(a arrow.Array) bitsOf {
	if a.NullN() == 0 {
		return bitsOf{}
	}
	return bitsOf{bitmap: a.NullBitmapBytes(), offset: a.Data().Offset()}
}

// at is 1 when row i is valid, else 0.
func (b bitsOf) at(i int) uint8 {
	if b.bitmap == nil {
		return 1
	}
	i += b.offset
	return b.bitmap[i>>3] >> (i & 7) & 1
}

// grow returns s emptied and resized to n, reusing its memory.
func grow[T any](s []T, n int) []T { return slices.Grow(s[:0], n)[:n] }

// contiguous reports whether the present values of rows [start, end) are
// exactly values[start:end] (a flat column without nulls).
func contiguous(l *leaf) bool { return l.kind == leafFlat && l.values.NullN() == 0 }

// page is one data page's share of its chunk: its levels (none for a
// column without nulls), its present values and their dictionary indices.
type page struct {
	levels     int
	defs, reps []uint8
	present    int
	values     selection
	dict       []int32
}

func (f *leanFile) writeDataPage(l *leaf, pg *page, st *chunkState) error {
	s := f.s
	n := pg.levels
	s.page.Reset()
	var lenAt int
	if l.col.MaxRepetitionLevel() > 0 {
		lenAt = s.page.Len()
		s.page.Write([]byte{0, 0, 0, 0})
		s.rle.reset(&s.page, bits.Len(uint(l.col.MaxRepetitionLevel())))
		s.rle.putAll(pg.reps)
		binary.LittleEndian.PutUint32(s.page.Bytes()[lenAt:], uint32(s.page.Len()-lenAt-4))
	}
	if maxDef := l.col.MaxDefinitionLevel(); maxDef > 0 {
		lenAt = s.page.Len()
		s.page.Write([]byte{0, 0, 0, 0})
		s.rle.reset(&s.page, bits.Len(uint(maxDef)))
		if pg.defs == nil {
			s.rle.run(n, uint64(maxDef))
		} else {
			s.rle.putAll(pg.defs)
		}
		binary.LittleEndian.PutUint32(s.page.Bytes()[lenAt:], uint32(s.page.Len()-lenAt-4))
	}
	nulls := n - pg.present
	encoding := st.encoding
	switch {
	case st.usingDictionary:
		encoding = f.props.DictionaryIndexEncoding()
		s.page.WriteByte(byte(st.dictBitWidth))
		s.rle.reset(&s.page, st.dictBitWidth)
		s.rle.putAll32(pg.dict)
	case encoding == parquet.Encodings.DeltaBinaryPacked:
		vals := selectedInt64s(int64s(l.values), pg.values, &s.ints)
		st.stats.ints(vals)
		s.values = appendDeltaBinaryPacked(s.values[:0], vals)
		s.page.Write(s.values)
	default:
		s.values = plainValues(l, pg.values, s.values[:0], &st.stats)
		s.page.Write(s.values)
	}
	offset := f.writePage(st, s.page.Bytes(), dataPage, n, encoding)
	if st.pages == 0 {
		st.dataPageOffset = offset
	}
	st.pages++
	st.numValues += int64(n)
	st.nulls += int64(nulls)
	return nil
}

// writePage compresses body and writes it behind its page header, adds
// both to the chunk's sizes, and returns the offset the page starts at.
func (f *leanFile) writePage(st *chunkState, body []byte, pageType int32, numValues int, enc parquet.Encoding) int64 {
	s := f.s
	offset := int64(f.out.Len())
	data := body
	if f.codec != nil {
		bound := int(f.codec.CompressBound(int64(len(body))))
		if cap(s.comp) < bound {
			s.comp = make([]byte, 0, bound)
		}
		z, ok := f.codec.(*zstdCodec)
		store, judge := false, false
		if ok && storesPages(f.level) {
			store, judge = st.packed.store(pageType, enc, len(body))
		}
		switch {
		case store:
			data = appendStoredFrame(s.comp[:0], body)
		case ok:
			// One encoder for all the pages this scratch compresses: its
			// match tables stay in this core's cache from page to page.
			if s.zstd.enc == nil || s.zstd.level != f.level {
				s.zstd.release()
				s.zstd = z.encoder(f.level)
			}
			data = s.zstd.EncodeAll(body, s.comp[:0])
			if judge {
				st.packed.judge(len(body), len(data))
			}
		default:
			data = f.codec.EncodeLevel(s.comp[:0], body, f.level)
		}
		if cap(data) > cap(s.comp) {
			s.comp = data[:0]
		}
	}
	s.hdr = pageHeader(s.hdr[:0], pageType, len(body), len(data), numValues, enc)
	f.out.Write(s.hdr)
	f.out.Write(data)
	st.compressed += int64(len(s.hdr) + len(data))
	st.uncompressed += int64(len(s.hdr) + len(body))
	return offset
}

// selection names the present values to encode: values[start:end] when
// all is set, else the indices idx.
type selection struct {
	all        bool
	start, end int
	idx        []int32
}

// each calls fn with every selected value index, in order.
func (sel selection) each(fn func(i int)) {
	if sel.all {
		for i := sel.start; i < sel.end; i++ {
			fn(i)
		}
		return
	}
	for _, i := range sel.idx {
		fn(int(i))
	}
}

// len is the number of selected values.
func (sel selection) len() int {
	if sel.all {
		return sel.end - sel.start
	}
	return len(sel.idx)
}

// eachWhile calls fn with the selected value indices, in order, until fn
// returns false; it reports whether it saw them all.
func (sel selection) eachWhile(fn func(i int) bool) bool {
	if sel.all {
		for i := sel.start; i < sel.end; i++ {
			if !fn(i) {
				return false
			}
		}
		return true
	}
	for _, i := range sel.idx {
		if !fn(int(i)) {
			return false
		}
	}
	return true
}

// pageSelection is the present values of the rows that f.levels last
// walked.
func (f *leanFile) pageSelection(l *leaf, start, end int) selection {
	if contiguous(l) {
		return selection{all: true, start: start, end: end}
	}
	return selection{idx: f.s.idx}
}

// plainValues appends the PLAIN encoding of the selected values to dst and
// folds them into the statistics.
func plainValues(l *leaf, sel selection, dst []byte, acc *statsAcc) []byte {
	switch a := l.values.(type) {
	case *array.Int64, *array.Timestamp:
		return plainInt64(int64s(a), sel, dst, acc)
	case *array.Date32:
		vals := a.Date32Values()
		sel.each(func(i int) {
			acc.int(int64(vals[i]))
			dst = binary.LittleEndian.AppendUint32(dst, uint32(vals[i]))
		})
	case *array.Int32:
		vals := a.Int32Values()
		sel.each(func(i int) {
			acc.int(int64(vals[i]))
			dst = binary.LittleEndian.AppendUint32(dst, uint32(vals[i]))
		})
	case *array.Float64:
		vals := a.Float64Values()
		sel.each(func(i int) {
			acc.float(vals[i])
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(vals[i]))
		})
	case *array.Boolean:
		var cur byte
		k := 0
		sel.each(func(i int) {
			b := a.Value(i)
			acc.bool(b)
			if b {
				cur |= 1 << (k & 7)
			}
			k++
			if k&7 == 0 {
				dst = append(dst, cur)
				cur = 0
			}
		})
		if k&7 != 0 {
			dst = append(dst, cur)
		}
	case *array.String, *array.Binary:
		offs, data := binaryParts(a)
		sel.each(func(i int) {
			v := data[offs[i]:offs[i+1]]
			acc.bytes(v)
			dst = binary.LittleEndian.AppendUint32(dst, uint32(len(v)))
			dst = append(dst, v...)
		})
	case *array.Decimal128:
		width := l.col.TypeLength()
		sel.each(func(i int) {
			acc.decimal(a.Value(i))
			dst = appendDecimal(dst, a.Value(i), width)
		})
	}
	return dst
}

// plainInt64 is PLAIN for 64-bit integers: Arrow's little-endian values
// as they are.
func plainInt64(vals []int64, sel selection, dst []byte, acc *statsAcc) []byte {
	if sel.all {
		acc.ints(vals[sel.start:sel.end])
		return append(dst, arrow.Int64Traits.CastToBytes(vals[sel.start:sel.end])...)
	}
	sel.each(func(i int) {
		acc.int(vals[i])
		dst = binary.LittleEndian.AppendUint64(dst, uint64(vals[i]))
	})
	return dst
}

// int64s is the values of a 64-bit integer or timestamp array.
func int64s(a arrow.Array) []int64 {
	if ts, ok := a.(*array.Timestamp); ok {
		vals := ts.TimestampValues()
		return unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(vals))), len(vals))
	}
	return a.(*array.Int64).Int64Values()
}

// selectedInt64s returns the selected values: a slice of vals when they
// are contiguous, else gathered into scratch.
func selectedInt64s(vals []int64, sel selection, scratch *[]int64) []int64 {
	if sel.all {
		return vals[sel.start:sel.end]
	}
	out := (*scratch)[:0]
	sel.each(func(i int) { out = append(out, vals[i]) })
	*scratch = out
	return out
}

// stringData is the whole data buffer of a string or binary array; its
// value offsets index it directly.
func stringData(d arrow.ArrayData) []byte {
	if b := d.Buffers()[2]; b != nil {
		return b.Bytes()
	}
	return nil
}

// appendDecimal writes v as the big-endian two's complement that a
// FIXED_LEN_BYTE_ARRAY decimal of width bytes holds, as pqarrow does.
func appendDecimal(dst []byte, v decimal128.Num, width int) []byte {
	var be [16]byte
	binary.BigEndian.PutUint64(be[:8], uint64(v.HighBits()))
	binary.BigEndian.PutUint64(be[8:], v.LowBits())
	return append(dst, be[16-width:]...)
}
