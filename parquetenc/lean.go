package parquetenc

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// The lean encoder writes the pages of the columns the exporter produces
// (flat primitives, a struct of primitives, a list of primitives) itself,
// and leaves the file's schema to arrow-go: pqarrow.ToParquet derives the
// Parquet schema, and the footer is written as metadata's builders would
// write it (footer.go), so a file differs from pqarrow's own only in how
// its pages were built.
// The profile showed arrow-go's generic column writers costing more than
// the compression they feed (levels for every shape, per-value visitors,
// a page writer per column with its own buffers) and about 5 ms per file
// of set-up, which dominated with hundreds of tables. Anything outside
// these shapes goes through pqarrow as before, and a differential test
// reads both encoders' files back and compares them.

// errLeanUnsupported means the batch has a shape the lean encoder does not
// write; the caller falls back to pqarrow.
var errLeanUnsupported = errors.New("not supported by the lean encoder")

type leafKind uint8

const (
	leafFlat   leafKind = iota // a top-level primitive column
	leafStruct                 // a primitive field of a top-level struct
	leafList                   // the primitive elements of a top-level list
)

// leafColumn is what encoding takes from a Parquet leaf column, kept
// instead of the schema: with hundreds of tables, arrow-go's schema trees
// (nodes, per-group name maps, column descriptors) were a third of the
// live heap objects, which the collector marks at every cycle.
type leafColumn struct {
	path           string
	physical       parquet.Type
	typeLength     int
	maxDef, maxRep int16
}

func leafColumns(sc *schema.Schema) []leafColumn {
	out := make([]leafColumn, sc.NumColumns())
	for i := range out {
		c := sc.Column(i)
		out[i] = leafColumn{path: c.Path(), physical: c.PhysicalType(), typeLength: c.TypeLength(),
			maxDef: c.MaxDefinitionLevel(), maxRep: c.MaxRepetitionLevel()}
	}
	return out
}

func (c *leafColumn) Path() string               { return c.path }
func (c *leafColumn) PhysicalType() parquet.Type { return c.physical }
func (c *leafColumn) TypeLength() int            { return c.typeLength }
func (c *leafColumn) MaxDefinitionLevel() int16  { return c.maxDef }
func (c *leafColumn) MaxRepetitionLevel() int16  { return c.maxRep }

// leaf is one Parquet leaf column and the Arrow arrays that hold it.
type leaf struct {
	col    *leafColumn
	kind   leafKind
	values arrow.Array // the primitive array holding the leaf's values
	parent arrow.Array // the struct or list, for leafStruct and leafList
	// parentOpt and valueOpt say whether the parent (struct or list) and
	// the value are OPTIONAL, each adding a definition level.
	parentOpt, valueOpt bool
	// plain is set when a sample spread over a large column found its
	// values mostly distinct: its chunks skip the dictionary.
	plain bool
}

// planLeaves matches the batch's arrays to the leaf columns cols, or
// reports errLeanUnsupported.
func planLeaves(cols []leafColumn, rec arrow.RecordBatch) ([]leaf, error) {
	var leaves []leaf
	for i, c := range rec.Columns() {
		f := rec.Schema().Field(i)
		switch a := c.(type) {
		case *array.Struct:
			st := f.Type.(*arrow.StructType)
			for j := range a.NumField() {
				leaves = append(leaves, leaf{kind: leafStruct, values: a.Field(j), parent: a,
					parentOpt: f.Nullable, valueOpt: st.Field(j).Nullable})
			}
		case *array.List:
			lt := f.Type.(*arrow.ListType)
			leaves = append(leaves, leaf{kind: leafList, values: a.ListValues(), parent: a,
				parentOpt: f.Nullable, valueOpt: lt.ElemField().Nullable})
		default:
			leaves = append(leaves, leaf{kind: leafFlat, values: c, valueOpt: f.Nullable})
		}
	}
	if len(leaves) != len(cols) || rec.NumRows() == 0 {
		return nil, errLeanUnsupported
	}
	for i := range leaves {
		l := &leaves[i]
		l.col = &cols[i]
		if !physicalMatches(l.values, l.col) {
			return nil, errLeanUnsupported
		}
		var wantDef, wantRep int16
		switch l.kind {
		case leafFlat:
			wantDef = b2i(l.valueOpt)
		case leafStruct:
			wantDef = b2i(l.parentOpt) + b2i(l.valueOpt)
		case leafList:
			wantDef, wantRep = b2i(l.parentOpt)+1+b2i(l.valueOpt), 1
		}
		if l.col.MaxDefinitionLevel() != wantDef || l.col.MaxRepetitionLevel() != wantRep {
			return nil, errLeanUnsupported
		}
		if l.kind != leafFlat && l.parent.Data().Offset() != 0 {
			return nil, errLeanUnsupported
		}
		if !l.valueOpt && l.values.NullN() > 0 {
			return nil, errLeanUnsupported // a REQUIRED field with nulls: pqarrow decides
		}
	}
	return leaves, nil
}

func b2i(b bool) int16 {
	if b {
		return 1
	}
	return 0
}

func physicalMatches(a arrow.Array, col *leafColumn) bool {
	pt := col.PhysicalType()
	switch t := a.DataType().(type) {
	case *arrow.StringType, *arrow.BinaryType:
		return pt == parquet.Types.ByteArray
	case *arrow.Int64Type:
		return pt == parquet.Types.Int64
	case *arrow.TimestampType:
		return pt == parquet.Types.Int64 && t.Unit == arrow.Microsecond
	case *arrow.Float64Type:
		return pt == parquet.Types.Double
	case *arrow.BooleanType:
		return pt == parquet.Types.Boolean
	case *arrow.Date32Type, *arrow.Int32Type:
		return pt == parquet.Types.Int32
	case *arrow.Decimal128Type:
		return pt == parquet.Types.FixedLenByteArray && col.TypeLength() >= 1 && col.TypeLength() <= 16
	}
	return false
}

// leanScratch is the memory one encoding reuses from page to page.
type leanScratch struct {
	out    bytes.Buffer // the file being built
	seen   map[uint64]struct{}
	page   bytes.Buffer // levels and values of one page, uncompressed
	values []byte
	comp   []byte
	defs   []uint8
	reps   []uint8
	idx    []int32 // indices of the present values in the values array
	ints   []int64 // a page's present values gathered, for DELTA_BINARY_PACKED
	dict   []int32 // dictionary indices of the present values
	hdr    []byte
	footer []byte
	rle    rleEncoder

	strDict map[string]int32
	numDict map[uint64]int32
	decDict map[decimal128.Num]int32
	order   []int32 // value index of each dictionary entry, in entry order
	// zstd is the encoder this scratch's pages are compressed with, kept
	// with the scratch.
	zstd heldEncoder
}

func (e *Encoder) getScratch() *leanScratch {
	if s, ok := e.scratches.get(); ok {
		return s
	}
	return &leanScratch{seen: make(map[uint64]struct{}, dictionarySample), strDict: map[string]int32{},
		numDict: map[uint64]int32{}, decDict: map[decimal128.Num]int32{}}
}

func (e *Encoder) putScratch(s *leanScratch) {
	// A scratch grown by a huge column is not worth keeping.
	if s.out.Cap() > 32<<20 || s.page.Cap() > 16<<20 || cap(s.values) > 16<<20 || !e.scratches.put(s) {
		s.zstd.release() // the encoder outlives the scratch
	}
}

// leanFile is one encoding in progress, or one of its chunk workers.
type leanFile struct {
	enc   *Encoder      // whose scratches, helpers and codec it uses
	out   *bytes.Buffer // where this worker's column chunks are written
	props *parquet.WriterProperties
	codec compress.Codec // nil for uncompressed
	level int
	s     *leanScratch
	rows  int
	// workers, when set, is how many goroutines encode the file's chunks
	// whatever its size; tests set it. Unset, the file decides (chunkWorkers).
	workers int
	// footer appends the footer: appendFooter, or arrow-go's builders in
	// the test that holds the two to the same bytes.
	footer func(fs *footerShape, b []byte, rowGroups []rowGroupMeta, kv metadata.KeyValueMetadata) []byte
}

// encodeLean returns rec as a Parquet file with the footer shape fs, and
// its row groups' chunk metadata.
func (e *Encoder) encodeLean(fs *footerShape, leaves []leaf, rec arrow.RecordBatch, props *parquet.WriterProperties,
	kv metadata.KeyValueMetadata) ([]byte, []rowGroupMeta, error) {
	f := &leanFile{enc: e, props: props, level: props.CompressionLevel(), rows: int(rec.NumRows()), footer: (*footerShape).appendFooter}
	return f.encodeBatch(fs, leaves, rec, kv)
}

func (f *leanFile) encodeBatch(fs *footerShape, leaves []leaf, rec arrow.RecordBatch, kv metadata.KeyValueMetadata) ([]byte, []rowGroupMeta, error) {
	props := f.props
	switch codecType := props.Compression(); codecType {
	case compress.Codecs.Uncompressed:
	case compress.Codecs.Zstd:
		f.codec = f.enc.zstd
	default:
		c, err := compress.GetCodec(codecType)
		if err != nil {
			return nil, nil, err
		}
		f.codec = c
	}
	f.s = f.enc.getScratch()
	defer f.enc.putScratch(f.s)
	for i := range leaves {
		// Values that repeat only locally (a transaction's rows share its
		// xid) fool a judgement on consecutive values, so a large column
		// is judged first on a sample spread over it, as pqarrow's files
		// are; a small one is judged on its values as the dictionary is
		// built, which costs nothing extra.
		if v := leaves[i].values; v.Len()-v.NullN() >= 4*dictionarySample {
			leaves[i].plain = mostlyDistinct(v, f.s.seen, f.enc.seed)
		}
	}
	return f.encode(fs, leaves, props.MaxRowGroupLength(), kv)
}

// chunkPlace is where a worker wrote one column chunk: out[start:end].
type chunkPlace struct {
	out        *bytes.Buffer
	start, end int
}

// encode writes the column chunks on several goroutines, each into its own
// buffer, and then copies them in file order into a file of exact size
// behind the footer's offsets. A file's chunks are independent until the
// footer, and the trace showed a single file's encoding running alone for
// a third of the run while reading waited for its memory: with one
// goroutine per file, the other core was idle then. The bytes are those of
// a serial encoding; only the order chunks are built in changes.
func (f *leanFile) encode(fs *footerShape, leaves []leaf, rowGroupRows int64, kv metadata.KeyValueMetadata) ([]byte, []rowGroupMeta, error) {
	rgRows := int(rowGroupRows)
	if rgRows <= 0 {
		rgRows = f.rows
	}
	workers := []*leanFile{f}
	for range f.chunkWorkers(len(leaves)) - 1 {
		if f.workers == 0 {
			// Helpers are shared by the files encoding at once: a file
			// takes the ones free, so no more than a helper per CPU run
			// beside the files, and the pools keep what they need.
			select {
			case f.enc.helpers <- struct{}{}:
				defer func() { <-f.enc.helpers }()
			default:
				continue
			}
		}
		w := &leanFile{enc: f.enc, props: f.props, codec: f.codec, level: f.level, rows: f.rows, s: f.enc.getScratch()}
		defer f.enc.putScratch(w.s)
		workers = append(workers, w)
	}
	for _, w := range workers {
		w.out = &w.s.out
		w.out.Reset()
	}
	var rowGroups []rowGroupMeta
	var places []chunkPlace
	for start := 0; start < f.rows; start += rgRows {
		end := min(start+rgRows, f.rows)
		rg := rowGroupMeta{rows: int64(end - start), chunks: make([]chunkMeta, len(leaves))}
		at := len(places)
		places = append(places, make([]chunkPlace, len(leaves))...)
		if err := encodeChunks(workers, fs, leaves, &rg, places[at:], start, end); err != nil {
			return nil, nil, err
		}
		rowGroups = append(rowGroups, rg)
	}
	// The chunks' offsets are within their workers' buffers until here.
	size := int64(len("PAR1"))
	for g := range rowGroups {
		for i := range rowGroups[g].chunks {
			c, p := &rowGroups[g].chunks[i], &places[g*len(leaves)+i]
			shift := size - int64(p.start)
			c.dataPageOffset += shift
			if c.dictionary {
				c.dictPageOffset += shift
			}
			size += int64(p.end - p.start)
		}
	}
	s := f.s
	s.footer = f.footer(fs, s.footer[:0], rowGroups, kv)
	file := make([]byte, 0, int(size)+len(s.footer)+8)
	file = append(file, "PAR1"...)
	for _, p := range places {
		file = append(file, p.out.Bytes()[p.start:p.end]...)
	}
	file = append(file, s.footer...)
	file = binary.LittleEndian.AppendUint32(file, uint32(len(s.footer)))
	return append(file, "PAR1"...), rowGroups, nil
}

// chunkWorkers is how many goroutines encode a file of n leaves: one per
// CPU, never more than its leaves, and one for a file too small to share.
func (f *leanFile) chunkWorkers(n int) int {
	w := f.workers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
		if f.rows*n < minSharedValues {
			w = 1
		}
	}
	return max(1, min(w, n))
}

// minSharedValues is the size (rows times leaves) from which a file's
// chunks are shared between goroutines; below it, handing chunks over
// costs more than it saves.
const minSharedValues = 4096

// encodeChunks encodes one row group's chunks, each worker taking the next
// unencoded column until none is left. It reports the failure of the
// first column that failed, as a serial encoding would.
func encodeChunks(workers []*leanFile, fs *footerShape, leaves []leaf, rg *rowGroupMeta, places []chunkPlace, start, end int) error {
	errs := make([]error, len(leaves))
	var next atomic.Int64
	work := func(w *leanFile) {
		for {
			i := int(next.Add(1) - 1)
			if i >= len(leaves) {
				return
			}
			from := w.out.Len()
			errs[i] = w.writeChunk(&rg.chunks[i], &fs.columns[i], &leaves[i], start, end)
			places[i] = chunkPlace{out: w.out, start: from, end: w.out.Len()}
		}
	}
	var wg sync.WaitGroup
	for _, w := range workers[1:] {
		wg.Go(func() { work(w) })
	}
	work(workers[0])
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("column %s: %w", leaves[i].col.Path(), err)
		}
	}
	return nil
}

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

// Page types (PageHeader field 1).
const (
	dataPage       = 0
	dictionaryPage = 2
)

// pageHeader writes a data page's or dictionary page's PageHeader.
func pageHeader(b []byte, pageType int32, uncompressed, compressed, numValues int, enc parquet.Encoding) []byte {
	w := thriftWriter{b: b}
	w.i32(1, pageType)
	w.i32(2, int32(uncompressed))
	w.i32(3, int32(compressed))
	if pageType == dataPage {
		w.field(5, thriftStruct) // data_page_header
	} else {
		w.field(7, thriftStruct) // dictionary_page_header
	}
	outer := w.begin()
	w.i32(1, int32(numValues))
	w.i32(2, int32(enc))
	if pageType == dataPage {
		w.i32(3, int32(parquet.Encodings.RLE)) // definition levels
		w.i32(4, int32(parquet.Encodings.RLE)) // repetition levels
	} else {
		w.field(3, thriftFalse) // is_sorted
	}
	w.end(outer)
	return append(w.b, 0)
}

// rleEncoder writes Parquet's RLE/bit-packing hybrid: a run of eight or
// more equal values becomes one RLE run, anything else groups of eight
// bit-packed values.
type rleEncoder struct {
	out     *bytes.Buffer
	width   int
	lit     []uint64 // values of the literal run being collected, a multiple of 8
	scratch []byte
}

func (e *rleEncoder) reset(out *bytes.Buffer, width int) {
	e.out, e.width, e.lit = out, width, e.lit[:0]
}

func (e *rleEncoder) putAll(vals []uint8) { rleEncode(e, vals) }

func (e *rleEncoder) putAll32(vals []int32) { rleEncode(e, vals) }

// rleEncode is generic rather than reading values through a function:
// levels and indices pass through it value by value.
func rleEncode[T uint8 | int32](e *rleEncoder, vals []T) {
	n := len(vals)
	i := 0
	for i < n {
		v := vals[i]
		j := i + 1
		for j < n && j-i < 8 && vals[j] == v {
			j++
		}
		if j-i == 8 || (j == n && len(e.lit) == 0) {
			for j < n && vals[j] == v {
				j++
			}
			e.flushLiteral()
			e.run(j-i, uint64(uint32(v)))
			i = j
			continue
		}
		end := min(i+8, n)
		for _, x := range vals[i:end] {
			e.lit = append(e.lit, uint64(uint32(x)))
		}
		for len(e.lit)%8 != 0 {
			e.lit = append(e.lit, 0) // padding past the last value; readers stop at the count
		}
		i = end
	}
	e.flushLiteral()
}

// run writes count repetitions of v.
func (e *rleEncoder) run(count int, v uint64) {
	e.scratch = binary.AppendUvarint(e.scratch[:0], uint64(count)<<1)
	for k := 0; k < (e.width+7)/8; k++ {
		e.scratch = append(e.scratch, byte(v>>(8*k)))
	}
	e.out.Write(e.scratch)
}

func (e *rleEncoder) flushLiteral() {
	if len(e.lit) == 0 {
		return
	}
	groups := len(e.lit) / 8
	e.scratch = binary.AppendUvarint(e.scratch[:0], uint64(groups)<<1|1)
	var acc uint64
	nbits := 0
	for _, v := range e.lit {
		acc |= v << nbits
		nbits += e.width
		for nbits >= 8 {
			e.scratch = append(e.scratch, byte(acc))
			acc >>= 8
			nbits -= 8
		}
	}
	e.out.Write(e.scratch)
	e.lit = e.lit[:0]
}

// statsAcc is a column chunk's running minimum and maximum, compared as
// Parquet orders the column's type.
type statsAcc struct {
	has              bool
	nan              bool // a NaN was seen: the chunk gets no min and max
	minI, maxI       int64
	minF, maxF       float64
	minB, maxB       []byte
	minD, maxD       decimal128.Num
	minBool, maxBool bool
}

func (a *statsAcc) int(v int64) {
	if !a.has {
		a.has, a.minI, a.maxI = true, v, v
		return
	}
	a.minI, a.maxI = min(a.minI, v), max(a.maxI, v)
}

func (a *statsAcc) ints(v []int64) {
	for _, x := range v {
		a.int(x)
	}
}

// float skips NaN, which has no place in an order, as the format requires,
// but remembers it: encode then leaves min and max out.
func (a *statsAcc) float(v float64) {
	if math.IsNaN(v) {
		a.nan = true
		return
	}
	if !a.has {
		a.has, a.minF, a.maxF = true, v, v
		return
	}
	a.minF, a.maxF = math.Min(a.minF, v), math.Max(a.maxF, v)
}

func (a *statsAcc) bool(v bool) {
	if !a.has {
		a.has, a.minBool, a.maxBool = true, v, v
		return
	}
	a.minBool = a.minBool && v
	a.maxBool = a.maxBool || v
}

// bytes keeps its own copies: the chunk's values are only borrowed.
func (a *statsAcc) bytes(v []byte) {
	if !a.has {
		a.has = true
		a.minB, a.maxB = append(a.minB[:0], v...), append(a.maxB[:0], v...)
		return
	}
	if bytes.Compare(v, a.minB) < 0 {
		a.minB = append(a.minB[:0], v...)
	} else if bytes.Compare(v, a.maxB) > 0 {
		a.maxB = append(a.maxB[:0], v...)
	}
}

func (a *statsAcc) decimal(v decimal128.Num) {
	if !a.has {
		a.has, a.minD, a.maxD = true, v, v
		return
	}
	if v.Less(a.minD) {
		a.minD = v
	}
	if a.maxD.Less(v) {
		a.maxD = v
	}
}

func (a *statsAcc) encode(l *leaf, nulls int64) metadata.EncodedStatistics {
	var enc metadata.EncodedStatistics
	enc.SetNullCount(nulls)
	if !a.has {
		enc.AllNullValue = true
		return enc
	}
	if a.nan {
		// The format lets a chunk's min and max skip its NaNs, but
		// readers that prune on them (DuckDB) then skip the chunk for a
		// filter a NaN row passes, or a NaN row for one it fails: as
		// parquet-mr (PARQUET-1246), a chunk holding NaN has none.
		return enc
	}
	switch l.values.(type) {
	case *array.Int64, *array.Timestamp:
		enc.SetMin(binary.LittleEndian.AppendUint64(nil, uint64(a.minI)))
		enc.SetMax(binary.LittleEndian.AppendUint64(nil, uint64(a.maxI)))
	case *array.Date32, *array.Int32:
		enc.SetMin(binary.LittleEndian.AppendUint32(nil, uint32(int32(a.minI))))
		enc.SetMax(binary.LittleEndian.AppendUint32(nil, uint32(int32(a.maxI))))
	case *array.Float64:
		lo, hi := a.minF, a.maxF
		if lo == 0 {
			lo = math.Copysign(0, -1) // the format asks for -0 as a zero minimum
		}
		if hi == 0 {
			hi = 0
		}
		enc.SetMin(binary.LittleEndian.AppendUint64(nil, math.Float64bits(lo)))
		enc.SetMax(binary.LittleEndian.AppendUint64(nil, math.Float64bits(hi)))
	case *array.Boolean:
		enc.SetMin([]byte{byte(b2i(a.minBool))})
		enc.SetMax([]byte{byte(b2i(a.maxBool))})
	case *array.String, *array.Binary:
		// Not nil when empty: the footer leaves out a nil value, and ""
		// is a minimum like any other.
		enc.SetMin(append([]byte{}, a.minB...))
		enc.SetMax(append([]byte{}, a.maxB...))
	case *array.Decimal128:
		w := l.col.TypeLength()
		enc.SetMin(appendDecimal(nil, a.minD, w))
		enc.SetMax(appendDecimal(nil, a.maxD, w))
	}
	return enc
}

// leanKeyValues is the start of a file's key/value metadata as pqarrow
// writes it: the Arrow schema's own, then the serialized Arrow schema
// (with list elements named as the Parquet columns are). The file's own
// pairs follow.
func leanKeyValues(sc *arrow.Schema, mem memory.Allocator) metadata.KeyValueMetadata {
	md := sc.Metadata()
	kv := make(metadata.KeyValueMetadata, 0, md.Len()+1)
	for i := range md.Len() {
		kv.Append(md.Keys()[i], md.Values()[i])
	}
	fields := make([]arrow.Field, sc.NumFields())
	for i, fld := range sc.Fields() {
		fields[i] = elementNamed(fld)
	}
	stored := arrow.NewSchema(fields, &md)
	kv.Append("ARROW:schema", base64.StdEncoding.EncodeToString(flight.SerializeSchema(stored, mem)))
	return kv
}

// elementNamed renames list elements "element", as pqarrow does before it
// stores the schema, for the shapes the lean encoder writes.
func elementNamed(f arrow.Field) arrow.Field {
	switch t := f.Type.(type) {
	case *arrow.ListType:
		elem := elementNamed(t.ElemField())
		elem.Name = "element"
		return arrow.Field{Name: f.Name, Type: arrow.ListOfField(elem), Nullable: f.Nullable, Metadata: f.Metadata}
	case *arrow.StructType:
		fields := make([]arrow.Field, t.NumFields())
		for i := range fields {
			fields[i] = elementNamed(t.Field(i))
		}
		return arrow.Field{Name: f.Name, Type: arrow.StructOf(fields...), Nullable: f.Nullable, Metadata: f.Metadata}
	}
	return f
}
