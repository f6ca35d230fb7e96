package writer

import (
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
)

// buffer is one open file: the Arrow columns of one table version, time
// partition and source partition.
type buffer struct {
	key     Key
	closed  bool // flushed or released: no longer the Writer's
	seg     string
	version *arrowschema.Version
	// builders[i] builds field i when no column does: the lists and
	// Qlik's metacolumns.
	builders []array.Builder
	created  time.Time

	// fieldCols holds, per schema field, the column that buffers it; the
	// lists and the Qlik metacolumns (nil here) use arrow-go's builders.
	fieldCols              []*column
	opType, opTS, xid, pos *column
	// ops holds each row's op, a byte; op_type's strings (ten bytes a row
	// with their offsets) are written at the flush (fillOpType).
	ops                     *memory.Buffer
	opsBuf                  []byte // ops.Buf(), kept here: the Buffer's own fields were a cache miss a row
	nOps                    int
	cols                    []*column // the table's columns
	srcPartition, srcOffset *column
	before                  *structColumn // before_image, when the schema has it
	beforeIdx               int
	absent                  *array.ListBuilder
	absentNulls             int // null rows not yet appended to absent
	absentValues            *array.StringBuilder

	// Qlik tables only: appended a row at a time, staged or not. Through
	// arrow-go's builders, with a call and a capacity check per value and
	// changed_columns a value per name, they took 9% of the Qlik stream's
	// CPU.
	changeSeq, eventCounter, lastEvent *column
	changed                            *stringList
	changedIdx                         int

	// stage holds the rows not yet packed (or, with few buffers open,
	// drained into the columns), from rowStarts on
	// (stage.go); beforeCur and beforeTS are drainBefore's scratch.
	stage     []byte
	rowStarts []int32
	stagePrev stagePrev
	anchors   []stageAnchor // per column, then xid and pos
	beforeCur []int32
	beforeTS  []int64
	// beforeRows and beforeRefRows are drainBefore's scratch too.
	beforeRows, beforeRefRows []int32
	drainTS                   []int64            // drainRows' scratch: the rows' op_ts
	stageMem                  []byte             // the stage's own memory, from the allocator
	kinds                     []arrowschema.Kind // of each table column: read per row, and the columns are cold
	mem                       memory.Allocator
	colMem                    *fileArena // set while the file is encoded, when its columns are made then
	// packed holds the rows staged before, in order, after those in the
	// columns (stage.go).
	packed      []packedRows
	packedBytes int64
	hint        *sizeHint // reserved once the columns are made

	rows                    int
	bytes                   int64
	firstOffset, lastOffset int64
	firstPos                string
	lastPos                 []byte // reused: a string per row was an allocation per row
	newestOpTS              time.Time
}

// sizeHint is what the last file of a table version held. The next file
// of the version reserves that much up front instead of growing its
// builders by doubling, which copied each buffer several times over and
// left the copies to the collector. Capped, so that one big file does not
// make a trickle of rows reserve a lot of memory against the budget.
type sizeHint struct {
	rows    int
	data    []int // bytes of each variable-length builder, in binaryBuilders order
	colRows []int // values of each column (columns order): a before image's fields hold only the images'
	colData []int // bytes of each column's strings
}

const (
	maxHintRows = 1 << 17
	maxHintData = 32 << 20
)

func (b *buffer) sizeHint() *sizeHint {
	b.makeColumns()
	b.drainStage()
	h := &sizeHint{rows: min(b.rows, maxHintRows)}
	for _, bb := range binaryBuilders(b.builders, nil) {
		h.data = append(h.data, min(bb.DataLen(), maxHintData))
	}
	for _, c := range b.columns() {
		h.colRows = append(h.colRows, min(c.n, maxHintRows))
		h.colData = append(h.colData, min(c.dataLen, maxHintData))
	}
	return h
}

func (h *sizeHint) apply(b *buffer) {
	b.ops.Reserve(h.rows)
	for _, f := range b.builders {
		if f != nil {
			f.Reserve(h.rows)
		}
	}
	for i, bb := range binaryBuilders(b.builders, nil) {
		if i < len(h.data) {
			bb.ReserveData(h.data[i])
		}
	}
}

// applyColumns reserves the columns, once they are made.
func (h *sizeHint) applyColumns(b *buffer) {
	for i, c := range b.columns() {
		if i < len(h.colData) {
			c.reserve(h.colRows[i], h.colData[i])
		}
	}
}

// columns lists the columns in schema order, then the before image's
// fields.
func (b *buffer) columns() []*column {
	var out []*column
	for _, c := range b.fieldCols {
		if c != nil {
			out = append(out, c)
		}
	}
	if b.before != nil {
		out = append(out, b.before.fields...)
	}
	if b.changed != nil && b.changed.values != nil {
		out = append(out, b.changed.values)
	}
	return out
}

// binaryBuilders appends the variable-length builders among bs (nil
// entries skipped) and inside their lists, depth first.
func binaryBuilders(bs []array.Builder, out []*array.BinaryBuilder) []*array.BinaryBuilder {
	for _, bld := range bs {
		switch b := bld.(type) {
		case *array.StringBuilder:
			out = append(out, b.BinaryBuilder)
		case *array.BinaryBuilder:
			out = append(out, b)
		case *array.ListBuilder:
			out = binaryBuilders([]array.Builder{b.ValueBuilder()}, out)
		}
	}
	return out
}

// newBuffer makes a buffer; its columns are made now unless packed is
// set (many buffers open), when its rows are packed and the columns are
// needed only once they are unpacked: with hundreds of tables, the empty
// columns of the open buffers were a third of the live heap's objects,
// which the collector marks at every cycle.
func newBuffer(mem memory.Allocator, key Key, v *arrowschema.Version, seg string, src Source, now time.Time, hint *sizeHint, packed bool) *buffer {
	fields := v.Schema.Fields()
	b := &buffer{key: key, seg: seg, version: v, created: now, firstOffset: src.Offset, beforeIdx: -1, mem: mem, hint: hint}
	b.fieldCols = make([]*column, len(fields))
	b.builders = make([]array.Builder, len(fields))
	b.ops = memory.NewResizableBuffer(mem)
	for i := range v.Columns {
		b.kinds = append(b.kinds, v.Columns[i].Type.Kind)
	}
	field := func(name string) array.Builder {
		if idx := v.Schema.FieldIndices(name); len(idx) > 0 {
			b.builders[idx[0]] = array.NewBuilder(mem, fields[idx[0]].Type)
			return b.builders[idx[0]]
		}
		return nil
	}
	b.absent = field(arrowschema.ColAbsentColumns).(*array.ListBuilder)
	b.absentValues = b.absent.ValueBuilder().(*array.StringBuilder)
	if idx := v.Schema.FieldIndices(arrowschema.ColBeforeImage); len(idx) > 0 {
		b.beforeIdx = idx[0]
	}
	if v.Metadata.Format == cdc.FormatQlik {
		// By the format, as the catalog adds them: a GoldenGate table may
		// have a column of one of these names (it panicked here).
		qlikColumn := func(name string, kind arrowschema.Kind) *column {
			return b.fieldColumn(v.Schema.FieldIndices(name)[0], arrowschema.Type{Kind: kind})
		}
		b.changeSeq = qlikColumn(arrowschema.ColChangeSeq, arrowschema.KindString)
		b.eventCounter = qlikColumn(arrowschema.ColTxnEventCounter, arrowschema.KindInt64)
		b.lastEvent = qlikColumn(arrowschema.ColTxnLastEvent, arrowschema.KindBoolean)
		b.changedIdx = v.Schema.FieldIndices(arrowschema.ColChangedColumns)[0]
		b.changed = newStringList(mem, fields[b.changedIdx].Type)
	}
	if hint != nil {
		hint.apply(b)
	}
	if !packed {
		b.makeColumns()
	}
	return b
}

// makeColumns makes the buffer's columns, once, reserving what the hint
// says.
func (b *buffer) makeColumns() {
	if b.opTS != nil {
		return
	}
	v, mem := b.version, b.columnMem()
	text, integer := arrowschema.Type{Kind: arrowschema.KindString}, arrowschema.Type{Kind: arrowschema.KindInt64}
	at := b.fieldColumn
	b.opType, b.opTS = at(0, text), at(1, arrowschema.Type{Kind: arrowschema.KindTimestamp})
	b.xid, b.pos = at(2, text), at(3, text)
	for i := range v.Columns {
		b.cols = append(b.cols, at(4+i, v.Columns[i].Type))
	}
	b.srcPartition = at(v.Schema.FieldIndices(arrowschema.ColSrcPartition)[0], text)
	b.srcOffset = at(v.Schema.FieldIndices(arrowschema.ColSrcOffset)[0], integer)
	if b.beforeIdx >= 0 {
		b.before = newStructColumn(mem, v, v.Schema.Field(b.beforeIdx).Type)
	}
	if b.hint != nil {
		b.hint.applyColumns(b)
		if b.changed != nil {
			b.changed.reserve(b.hint.rows)
		}
	}
}

// fieldColumn makes the column that buffers schema field i.
func (b *buffer) fieldColumn(i int, t arrowschema.Type) *column {
	b.fieldCols[i] = newColumn(b.columnMem(), t)
	return b.fieldCols[i]
}

// columnMem is the allocator of the columns: the encoding's arena when
// they are made from packed rows as the file is encoded (arena.go).
func (b *buffer) columnMem() memory.Allocator {
	if b.colMem != nil {
		return b.colMem
	}
	return b.mem
}

// heldBytes is the memory the buffer's rows hold now.
func (b *buffer) heldBytes() int64 {
	n := b.packedBytes + int64(cap(b.stageMem))
	if b.ops != nil {
		n += int64(b.ops.Cap())
	}
	for _, c := range b.columns() {
		n += c.memBytes()
	}
	if b.changed != nil {
		n += b.changed.memBytes()
	}
	return n
}

// release frees what the buffer holds; after newRecordBatch only the
// builders' empty shells are left.
func (b *buffer) release() {
	if b.ops != nil {
		b.ops.Release()
		b.ops, b.opsBuf = nil, nil
	}
	b.dropStage()
	b.freePacked()
	for _, f := range b.builders {
		if f != nil {
			f.Release()
		}
	}
	for _, c := range b.fieldCols {
		if c != nil && c.valid != nil {
			c.release()
		}
	}
	if b.before != nil {
		b.before.release()
	}
	if b.changed != nil {
		b.changed.release()
	}
}

func (b *buffer) flushAbsentNulls() {
	if b.absentNulls > 0 {
		b.absent.AppendNulls(b.absentNulls)
		b.absentNulls = 0
	}
}

// newRecordBatch hands the buffer's rows over as a record batch.
func (b *buffer) newRecordBatch() arrow.RecordBatch {
	b.unpack()
	b.fillOpType()
	b.fillPartition()
	b.flushAbsentNulls()
	cols := make([]arrow.Array, len(b.builders))
	for i, f := range b.builders {
		switch {
		case b.fieldCols[i] != nil:
			cols[i] = b.fieldCols[i].newArray()
		case i == b.beforeIdx:
			cols[i] = b.before.newArray()
		case b.changed != nil && i == b.changedIdx:
			cols[i] = b.changed.newArray()
		default:
			cols[i] = f.NewArray()
		}
	}
	rec := array.NewRecordBatch(b.version.Schema, cols, int64(b.rows))
	for _, c := range cols {
		c.Release()
	}
	return rec
}

// append adds one row and returns the bytes it added to the estimate.
// With staged set the columns' values go through the stage (stage.go),
// otherwise straight to the columns; the lists and Qlik's metacolumns,
// rarely more than a null per row, are appended here either way.
func (b *buffer) append(rec *cdc.Record, row, before []slot, changed []string, src Source, staged bool) int64 {
	b.appendOp(rec.Op) // one byte a row, in either mode: not worth staging
	if staged {
		b.stageRow(rec, row, before, src)
	} else {
		b.makeColumns()
		if b.stageMem != nil {
			b.unpack()
			b.dropStage() // back to few buffers: the stage's memory is not needed
		}
		b.appendColumns(rec, row, before, src)
	}
	size := int64(8 + len(rec.XID) + len(rec.Pos) + 8)
	anyAbsent := false
	for i := range row {
		s := &row[i]
		size += slotBytes(b.kinds[i], s)
		if s.state == slotAbsent {
			anyAbsent = true
		}
	}
	// src_partition is the buffer's own partition on every row: it is
	// written when the buffer is flushed (fillPartition), not held row by
	// row while it fills.
	size += int64(len(src.Partition)) + 8
	if anyAbsent {
		b.flushAbsentNulls()
		b.absent.Append(true)
		for i, s := range row {
			if s.state == slotAbsent {
				name := b.version.FieldName(i) // as the data files name it
				b.absentValues.Append(name)
				size += int64(len(name))
			}
		}
	} else {
		b.absentNulls++ // nearly every row: appended in bulk
	}
	if b.changeSeq != nil {
		q := &rec.Qlik
		if q.ChangeSeq != "" {
			b.changeSeq.appendString(q.ChangeSeq)
		} else {
			b.changeSeq.appendNulls(1)
		}
		if q.HasEventCounter {
			b.eventCounter.appendInt64(q.EventCounter)
		} else {
			b.eventCounter.appendNulls(1)
		}
		if q.HasLastEvent {
			s := slot{state: slotSet}
			s.setBool(q.LastEvent)
			b.lastEvent.append(&s)
		} else {
			b.lastEvent.appendNulls(1)
		}
		if changed != nil {
			b.changed.append(changed)
		} else {
			b.changed.appendNull()
		}
		size += int64(len(q.ChangeSeq) + 16)
	}
	if b.beforeIdx >= 0 && before != nil {
		for i := range before {
			size += slotBytes(b.kinds[i], &before[i])
		}
	}
	if rec.OpTS.After(b.newestOpTS) {
		b.newestOpTS = rec.OpTS
	}
	b.rows++
	b.bytes += size
	b.lastOffset = src.Offset
	// rec.Pos shares the record's memory, which is reused.
	if b.rows == 1 {
		b.firstPos = strings.Clone(rec.Pos)
	}
	b.lastPos = append(b.lastPos[:0], rec.Pos...)
	return size
}

// slotBytes is what a value adds to the buffer's estimate once appended.
func slotBytes(kind arrowschema.Kind, s *slot) int64 {
	if s.state != slotSet {
		return 1
	}
	switch kind {
	case arrowschema.KindString, arrowschema.KindBinary:
		return int64(len(s.bytes)) + 4
	case arrowschema.KindDecimal:
		return 16
	case arrowschema.KindBoolean:
		return 1
	case arrowschema.KindDate:
		return 4
	}
	return 8
}

// appendOp records a row's op.
func (b *buffer) appendOp(op cdc.Op) {
	if b.nOps == len(b.opsBuf) {
		b.ops.Resize(max(64, 2*b.nOps))
		b.opsBuf = b.ops.Buf()
	}
	b.opsBuf[b.nOps] = byte(op)
	b.nOps++
}

// fillOpType writes the op_type column from the rows' ops.
func (b *buffer) fillOpType() {
	b.opType.reserve(b.nOps, len("REFRESH")*b.nOps)
	for _, op := range b.ops.Buf()[:b.nOps] {
		b.opType.appendString(cdc.Op(op).String())
	}
	b.ops.Release()
	b.ops, b.opsBuf, b.nOps = nil, nil, 0
}

// fillPartition writes the src_partition column, one value for every row.
func (b *buffer) fillPartition() {
	p := b.key.Partition
	c := b.srcPartition
	c.reserve(b.rows, b.rows*len(p))
	for c.n < b.rows {
		c.appendString(p)
	}
}
