package writer

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
)

// column holds one column's values (a table column, a before-image field
// or a metacolumn) as Arrow lays them out: a validity bitmap, offsets for
// variable-length values, the values. It is appended to directly. arrow-go's builders cost, per value, a call
// through an interface, capacity checks on three buffers and the builder
// objects' own cache lines; with hundreds of tables every one of those is
// a cache miss. The buffers come from the writer's allocator, so the
// memory budget sees them as it saw the builders'.
type column struct {
	kind    arrowschema.Kind
	dtype   arrow.DataType
	width   int // bytes per value of a fixed-width kind
	n       int // values appended
	nulls   int // the validity bitmap is kept only from the first null on
	capRows int // values the bitmap and the offsets or fixed-width values hold
	valid   *memory.Buffer
	offsets *memory.Buffer // int32, capRows+1 (string, binary)
	data    *memory.Buffer // fixed-width values, or the bytes of strings
	dataLen int
}

func newColumn(mem memory.Allocator, t arrowschema.Type) *column {
	c := &column{kind: t.Kind, dtype: t.Arrow(), valid: memory.NewResizableBuffer(mem), data: memory.NewResizableBuffer(mem)}
	switch t.Kind {
	case arrowschema.KindString, arrowschema.KindBinary:
		c.offsets = memory.NewResizableBuffer(mem)
	case arrowschema.KindDecimal:
		c.width = 16
	case arrowschema.KindDate:
		c.width = 4
	case arrowschema.KindBoolean:
		c.width = 0 // a bitmap, sized with the validity
	default:
		c.width = 8
	}
	return c
}

// reserve makes room for rows values and dataBytes bytes of strings.
func (c *column) reserve(rows, dataBytes int) {
	if rows > c.capRows {
		c.capRows = rows
		if c.nulls > 0 {
			c.valid.Reserve(bitmapBytes(rows))
		}
		switch {
		case c.offsets != nil:
			c.offsets.Reserve(4 * (rows + 1))
		case c.kind == arrowschema.KindBoolean:
			c.data.Reserve(bitmapBytes(rows))
		default:
			c.data.Reserve(c.width * rows)
		}
	}
	if c.offsets != nil && dataBytes > c.data.Cap() {
		c.data.Reserve(dataBytes)
	}
}

func bitmapBytes(rows int) int { return (rows + 7) / 8 }

// grow makes room for one more value, doubling as builders do.
func (c *column) grow() {
	c.reserve(max(2*c.capRows, 32), 0)
}

// setValid records whether value i is present. Until the first null
// there is no bitmap to keep: most columns never hold one.
func (c *column) setValid(i int, ok bool) {
	if c.nulls == 0 {
		if ok {
			return
		}
		c.startBitmap(i)
	}
	bitutil.SetBitTo(c.valid.Buf(), i, ok)
}

// startBitmap makes the bitmap at the first null, value i: every value
// before it was present.
func (c *column) startBitmap(i int) {
	c.valid.Reserve(bitmapBytes(c.capRows))
	bitutil.SetBitsTo(c.valid.Buf(), 0, int64(i), true)
}

// appendNulls appends k nulls.
func (c *column) appendNulls(k int) {
	if c.n+k > c.capRows {
		c.reserve(max(2*c.capRows, c.n+k, 32), 0)
	}
	if c.nulls == 0 && k > 0 {
		c.startBitmap(c.n)
	}
	bitutil.SetBitsTo(c.valid.Buf(), int64(c.n), int64(k), false)
	if c.offsets != nil {
		offs := c.offsetsSlice()
		for i := c.n; i < c.n+k; i++ {
			offs[i+1] = int32(c.dataLen)
		}
	}
	c.n += k
	c.nulls += k
}

func (c *column) offsetsSlice() []int32 {
	b := c.offsets.Buf()
	return unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4)
}

// append adds s; slotBytes is what it adds to the writer's estimate.
func (c *column) append(s *slot) {
	if s.state != slotSet {
		c.appendNulls(1)
		return
	}
	switch c.kind {
	case arrowschema.KindString, arrowschema.KindBinary:
		c.appendString(unsafe.String(unsafe.SliceData(s.bytes), len(s.bytes)))
		return
	case arrowschema.KindInt64, arrowschema.KindTimestamp:
		c.appendInt64(s.i64)
		return
	}
	i := c.nextPresent()
	data := c.data.Buf()
	switch c.kind {
	case arrowschema.KindFloat64:
		*(*float64)(unsafe.Pointer(&data[8*i])) = s.f64()
	case arrowschema.KindDecimal:
		*(*decimal128.Num)(unsafe.Pointer(&data[16*i])) = s.dec()
	case arrowschema.KindBoolean:
		bitutil.SetBitTo(data, i, s.bool())
	case arrowschema.KindDate:
		*(*int32)(unsafe.Pointer(&data[4*i])) = int32(s.i64)
	}
}

// appendString appends a present string (or binary) value.
func (c *column) appendString(v string) {
	i := c.nextPresent()
	data := c.data.Buf()
	end := c.dataLen + len(v)
	if end > len(data) {
		c.data.Reserve(max(2*len(data), end, 64))
		data = c.data.Buf()
	}
	copy(data[c.dataLen:], v)
	c.dataLen = end
	c.offsetsSlice()[i+1] = int32(end)
}

// appendSpliced appends a present string made of the first pre bytes of
// the value ref holds at [from, to), then mid, then its last suf bytes:
// a value staged against another (stageText). ref may be c.
func (c *column) appendSpliced(ref *column, from, to, pre, suf int, mid []byte) {
	i := c.nextPresent()
	start := c.dataLen
	end := start + pre + len(mid) + suf
	if end > len(c.data.Buf()) {
		c.data.Reserve(max(2*len(c.data.Buf()), end, 64))
	}
	data, r := c.data.Buf(), ref.data.Buf() // after the reserve, which may move c's
	copy(data[start:start+pre], r[from:])
	copy(data[start+pre:end-suf], mid)
	copy(data[end-suf:end], r[to-suf:])
	c.dataLen = end
	c.offsetsSlice()[i+1] = int32(end)
}

// appendInt64 appends a present 64-bit value (int64 or timestamp).
func (c *column) appendInt64(v int64) {
	i := c.nextPresent()
	*(*int64)(unsafe.Pointer(&c.data.Buf()[8*i])) = v
}

// nextPresent makes room for a present value and returns its index.
// Every value appended, straight or drained, goes through it, and most
// need neither room nor a bitmap: those make no further call.
func (c *column) nextPresent() int {
	i := c.n
	if i == c.capRows || c.nulls != 0 {
		c.makePresent(i)
	}
	c.n = i + 1
	return i
}

// makePresent grows the column for value i and marks it present in the
// bitmap, when there is one.
func (c *column) makePresent(i int) {
	if i == c.capRows {
		c.grow()
	}
	c.setValid(i, true)
}

// newArray hands the values over as an Arrow array; the column is empty
// afterwards and must not be appended to again.
func (c *column) newArray() arrow.Array {
	if c.nulls > 0 {
		c.valid.ResizeNoShrink(bitmapBytes(c.n))
	}
	bufs := []*memory.Buffer{c.valid, nil}
	switch {
	case c.offsets != nil:
		if c.capRows == 0 {
			c.reserve(1, 0)
		}
		c.offsetsSlice()[0] = 0
		c.offsets.ResizeNoShrink(4 * (c.n + 1))
		c.data.ResizeNoShrink(c.dataLen)
		bufs = []*memory.Buffer{c.valid, c.offsets, c.data}
	case c.kind == arrowschema.KindBoolean:
		c.data.ResizeNoShrink(bitmapBytes(c.n))
		bufs[1] = c.data
	default:
		c.data.ResizeNoShrink(c.width * c.n)
		bufs[1] = c.data
	}
	if c.nulls == 0 {
		bufs[0] = nil
	}
	d := array.NewData(c.dtype, c.n, bufs, nil, c.nulls, 0)
	defer d.Release()
	c.release()
	return array.MakeFromData(d)
}

// memBytes is the memory the column's buffers hold.
func (c *column) memBytes() int64 {
	var n int64
	for _, b := range []*memory.Buffer{c.valid, c.offsets, c.data} {
		if b != nil {
			n += int64(b.Cap())
		}
	}
	return n
}

// release drops the column's hold on its buffers.
func (c *column) release() {
	for _, b := range []*memory.Buffer{c.valid, c.offsets, c.data} {
		if b != nil {
			b.Release()
		}
	}
	c.valid, c.offsets, c.data = nil, nil, nil
}

// stringList is a list<string> column (changed_columns), appended a
// row's list at a time: the strings go to a column of their own, each
// row's end to the offsets.
type stringList struct {
	dtype   arrow.DataType
	n       int
	nulls   int // the validity bitmap is kept only from the first null on
	capRows int
	valid   *memory.Buffer
	offsets *memory.Buffer // int32, capRows+1
	values  *column
}

func newStringList(mem memory.Allocator, dtype arrow.DataType) *stringList {
	return &stringList{dtype: dtype, valid: memory.NewResizableBuffer(mem), offsets: memory.NewResizableBuffer(mem),
		values: newColumn(mem, arrowschema.Type{Kind: arrowschema.KindString})}
}

// reserve makes room for rows lists.
func (l *stringList) reserve(rows int) {
	if rows > l.capRows {
		l.capRows = rows
		l.offsets.Reserve(4 * (rows + 1))
		if l.nulls > 0 {
			l.valid.Reserve(bitmapBytes(rows))
		}
	}
}

// next makes room for one more row and returns its offsets.
func (l *stringList) next() []int32 {
	if l.n == l.capRows {
		l.reserve(max(2*l.capRows, 32))
	}
	b := l.offsets.Buf()
	return unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4)
}

// append appends a present list.
func (l *stringList) append(names []string) {
	offs := l.next()
	for _, s := range names {
		l.values.appendString(s)
	}
	if l.nulls > 0 {
		bitutil.SetBit(l.valid.Buf(), l.n)
	}
	l.n++
	offs[l.n] = int32(l.values.n)
}

// appendNull appends a null list.
func (l *stringList) appendNull() {
	offs := l.next()
	if l.nulls == 0 {
		l.valid.Reserve(bitmapBytes(l.capRows))
		bitutil.SetBitsTo(l.valid.Buf(), 0, int64(l.n), true)
	}
	bitutil.ClearBit(l.valid.Buf(), l.n)
	l.n++
	l.nulls++
	offs[l.n] = int32(l.values.n)
}

// newArray hands the lists over as an Arrow array, as column.newArray.
func (l *stringList) newArray() arrow.Array {
	l.next()[0] = 0
	l.offsets.ResizeNoShrink(4 * (l.n + 1))
	bufs := []*memory.Buffer{nil, l.offsets}
	if l.nulls > 0 {
		l.valid.ResizeNoShrink(bitmapBytes(l.n))
		bufs[0] = l.valid
	}
	values := l.values.newArray()
	defer values.Release()
	d := array.NewData(l.dtype, l.n, bufs, []arrow.ArrayData{values.Data()}, l.nulls, 0)
	defer d.Release()
	l.release()
	return array.MakeFromData(d)
}

// memBytes is the memory the lists hold, but for their values, which
// the buffer counts among its columns.
func (l *stringList) memBytes() int64 {
	if l.offsets == nil {
		return 0
	}
	return int64(l.valid.Cap() + l.offsets.Cap())
}

// release drops the list's hold on its buffers.
func (l *stringList) release() {
	if l.offsets == nil {
		return
	}
	l.valid.Release()
	l.offsets.Release()
	l.values.release()
	l.valid, l.offsets = nil, nil
}

// structColumn is the before image: a struct of columns. Its fields hold
// values only for the rows that have an image, most rows have none
// (inserts), and Arrow's layout, which gives every row a slot in every
// field, is made only when the buffer is flushed (spread). Held that way a
// before image of fixed-width fields took 8 bytes per field for every
// row: with 30% updates, a sixth of a buffer's memory was empty slots.
type structColumn struct {
	mem     memory.Allocator
	dtype   arrow.DataType
	fields  []*column // the present images' values, in order
	n       int
	nulls   int
	valid   *memory.Buffer
	capRows int
}

func newStructColumn(mem memory.Allocator, v *arrowschema.Version, dtype arrow.DataType) *structColumn {
	s := &structColumn{mem: mem, dtype: dtype, valid: memory.NewResizableBuffer(mem)}
	for i := range v.Columns {
		s.fields = append(s.fields, newColumn(mem, v.Columns[i].Type))
	}
	return s
}

func (s *structColumn) setValid(i int, ok bool) {
	if i >= s.capRows {
		s.capRows = max(2*s.capRows, i+1, 32)
		s.valid.Reserve(bitmapBytes(s.capRows))
	}
	bitutil.SetBitTo(s.valid.Buf(), i, ok)
}

func (s *structColumn) appendNull() {
	s.setValid(s.n, false)
	s.n++
	s.nulls++
}

// appendImage adds a present image.
func (s *structColumn) appendImage(slots []slot) {
	s.setValid(s.n, true)
	s.n++
	for i := range slots {
		s.fields[i].append(&slots[i])
	}
}

func (s *structColumn) newArray() arrow.Array {
	if s.capRows == 0 {
		s.setValid(0, false)
	}
	children := make([]arrow.ArrayData, len(s.fields))
	for i, f := range s.fields {
		if s.nulls > 0 {
			f = f.spread(s.mem, s.valid.Buf(), s.n)
			s.fields[i].release()
			s.fields[i] = f
		}
		a := f.newArray()
		children[i] = a.Data()
		defer a.Release()
	}
	s.valid.ResizeNoShrink(bitmapBytes(s.n))
	valid := s.valid
	if s.nulls == 0 {
		valid = nil
	}
	d := array.NewData(s.dtype, s.n, []*memory.Buffer{valid}, children, s.nulls, 0)
	defer d.Release()
	s.release()
	return array.MakeFromData(d)
}

func (s *structColumn) release() {
	for _, f := range s.fields {
		if f.valid != nil {
			f.release()
		}
	}
	if s.valid != nil {
		s.valid.Release()
		s.valid = nil
	}
}

// spread returns a column of rows values: c's values, in order, at the
// rows present marks, and nulls at the others, as Arrow lays out a
// struct's field.
func (c *column) spread(mem memory.Allocator, present []byte, rows int) *column {
	out := &column{kind: c.kind, dtype: c.dtype, width: c.width, valid: memory.NewResizableBuffer(mem), data: memory.NewResizableBuffer(mem)}
	if c.offsets != nil {
		out.offsets = memory.NewResizableBuffer(mem)
	}
	out.reserve(rows, c.dataLen)
	j := 0
	for i := 0; i < rows; {
		if !bitutil.BitIsSet(present, i) {
			run := 1
			for i+run < rows && !bitutil.BitIsSet(present, i+run) {
				run++
			}
			out.appendNulls(run)
			i += run
			continue
		}
		out.appendFrom(c, j)
		j++
		i++
	}
	return out
}

// valueBounds is where the bytes of value j of a string or binary column
// are in its data.
func (c *column) valueBounds(j int) (int, int) {
	offs := c.offsetsSlice()
	start := int32(0) // offsets[0] is written by newArray
	if j > 0 {
		start = offs[j]
	}
	return int(start), int(offs[j+1])
}

// appendFrom appends value j of src, a column of the same kind.
func (c *column) appendFrom(src *column, j int) {
	if src.nulls > 0 && !bitutil.BitIsSet(src.valid.Buf(), j) {
		c.appendNulls(1)
		return
	}
	switch {
	case src.offsets != nil:
		from, to := src.valueBounds(j)
		v := src.data.Buf()[from:to]
		c.appendString(unsafe.String(unsafe.SliceData(v), len(v)))
	case c.kind == arrowschema.KindBoolean:
		v := bitutil.BitIsSet(src.data.Buf(), j)
		i := c.nextPresent() // before Buf: it may grow the bitmap
		bitutil.SetBitTo(c.data.Buf(), i, v)
	default:
		i := c.nextPresent()
		copy(c.data.Buf()[i*c.width:(i+1)*c.width], src.data.Buf()[j*c.width:(j+1)*c.width])
	}
}
