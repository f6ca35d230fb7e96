package writer

import (
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
)

// buffer is one open file: the Arrow builders of one table version, time
// partition and source partition.
type buffer struct {
	key     Key
	seg     string
	version *arrowschema.Version
	rb      *array.RecordBuilder
	created time.Time

	opType, xid, pos *array.StringBuilder
	opTS             *array.TimestampBuilder
	cols             []array.Builder
	absent           *array.ListBuilder
	absentValues     *array.StringBuilder
	srcPartition     *array.StringBuilder
	srcOffset        *array.Int64Builder
	before           *array.StructBuilder

	// Qlik tables only
	changeSeq     *array.StringBuilder
	eventCounter  *array.Int64Builder
	lastEvent     *array.BooleanBuilder
	changed       *array.ListBuilder
	changedValues *array.StringBuilder

	rows                    int
	bytes                   int64
	firstOffset, lastOffset int64
	firstPos, lastPos       string
	newestOpTS              time.Time
}

// sizeHint is what the last file of a table version held. The next file
// of the version reserves that much up front instead of growing its
// builders by doubling, which copied each buffer several times over and
// left the copies to the collector. Capped, so that one big file does not
// make a trickle of rows reserve a lot of memory against the budget.
type sizeHint struct {
	rows int
	data []int // bytes of each variable-length builder, in binaryBuilders order
}

const (
	maxHintRows = 1 << 17
	maxHintData = 32 << 20
)

func (b *buffer) sizeHint() *sizeHint {
	h := &sizeHint{rows: min(b.rows, maxHintRows)}
	for _, bb := range binaryBuilders(b.rb.Fields(), nil) {
		if bb == b.srcPartition.BinaryBuilder {
			h.data = append(h.data, 0) // filled at flush, into the room it needs
			continue
		}
		h.data = append(h.data, min(bb.DataLen(), maxHintData))
	}
	return h
}

func (h *sizeHint) apply(rb *array.RecordBuilder) {
	rb.Reserve(h.rows)
	for i, bb := range binaryBuilders(rb.Fields(), nil) {
		if i < len(h.data) {
			bb.ReserveData(h.data[i])
		}
	}
}

// binaryBuilders appends the variable-length builders among bs, depth
// first.
func binaryBuilders(bs []array.Builder, out []*array.BinaryBuilder) []*array.BinaryBuilder {
	for _, bld := range bs {
		switch b := bld.(type) {
		case *array.StringBuilder:
			out = append(out, b.BinaryBuilder)
		case *array.BinaryBuilder:
			out = append(out, b)
		case *array.StructBuilder:
			for i := range b.NumField() {
				out = binaryBuilders([]array.Builder{b.FieldBuilder(i)}, out)
			}
		case *array.ListBuilder:
			out = binaryBuilders([]array.Builder{b.ValueBuilder()}, out)
		}
	}
	return out
}

func newBuffer(mem memory.Allocator, key Key, v *arrowschema.Version, seg string, src Source, now time.Time, hint *sizeHint) *buffer {
	rb := array.NewRecordBuilder(mem, v.Schema)
	if hint != nil {
		hint.apply(rb)
	}
	b := &buffer{key: key, seg: seg, version: v, rb: rb, created: now, firstOffset: src.Offset}
	b.opType = rb.Field(0).(*array.StringBuilder)
	b.opTS = rb.Field(1).(*array.TimestampBuilder)
	b.xid = rb.Field(2).(*array.StringBuilder)
	b.pos = rb.Field(3).(*array.StringBuilder)
	n := len(v.Columns)
	b.cols = rb.Fields()[4 : 4+n]
	field := func(name string) array.Builder {
		if idx := v.Schema.FieldIndices(name); len(idx) > 0 {
			return rb.Field(idx[0])
		}
		return nil
	}
	b.absent = field(arrowschema.ColAbsentColumns).(*array.ListBuilder)
	b.srcPartition = field(arrowschema.ColSrcPartition).(*array.StringBuilder)
	b.srcOffset = field(arrowschema.ColSrcOffset).(*array.Int64Builder)
	b.absentValues = b.absent.ValueBuilder().(*array.StringBuilder)
	if f := field(arrowschema.ColBeforeImage); f != nil {
		b.before = f.(*array.StructBuilder)
	}
	if f := field(arrowschema.ColChangeSeq); f != nil {
		b.changeSeq = f.(*array.StringBuilder)
		b.eventCounter = field(arrowschema.ColTxnEventCounter).(*array.Int64Builder)
		b.lastEvent = field(arrowschema.ColTxnLastEvent).(*array.BooleanBuilder)
		b.changed = field(arrowschema.ColChangedColumns).(*array.ListBuilder)
		b.changedValues = b.changed.ValueBuilder().(*array.StringBuilder)
	}
	return b
}

func (b *buffer) release() { b.rb.Release() }

// append adds one row and returns the bytes it added to the estimate.
func (b *buffer) append(rec *cdc.Record, row, before []slot, changed []string, src Source) int64 {
	size := int64(8 + len(rec.XID) + len(rec.Pos) + 8)
	b.opType.Append(rec.Op.String())
	b.opTS.Append(arrow.Timestamp(rec.OpTS.UnixMicro()))
	if rec.HasXID {
		b.xid.Append(rec.XID)
	} else {
		b.xid.AppendNull()
	}
	if rec.HasPos {
		b.pos.Append(rec.Pos)
	} else {
		b.pos.AppendNull()
	}
	anyAbsent := false
	for i := range row {
		s := &row[i]
		size += appendSlot(b.cols[i], &b.version.Columns[i], s)
		if s.state == slotAbsent {
			anyAbsent = true
		}
	}
	// src_partition is the buffer's own partition on every row: it is
	// written when the buffer is flushed (fillPartition), not held row by
	// row while it fills.
	b.srcOffset.Append(src.Offset)
	size += int64(len(src.Partition)) + 8
	if anyAbsent {
		b.absent.Append(true)
		for i, s := range row {
			if s.state == slotAbsent {
				b.absentValues.Append(b.version.Columns[i].Name)
				size += int64(len(b.version.Columns[i].Name))
			}
		}
	} else {
		b.absent.AppendNull()
	}
	if b.changeSeq != nil {
		q := &rec.Qlik
		if q.ChangeSeq != "" {
			b.changeSeq.Append(q.ChangeSeq)
		} else {
			b.changeSeq.AppendNull()
		}
		if q.HasEventCounter {
			b.eventCounter.Append(q.EventCounter)
		} else {
			b.eventCounter.AppendNull()
		}
		if q.HasLastEvent {
			b.lastEvent.Append(q.LastEvent)
		} else {
			b.lastEvent.AppendNull()
		}
		if changed != nil {
			b.changed.Append(true)
			for _, c := range changed {
				b.changedValues.Append(c)
			}
		} else {
			b.changed.AppendNull()
		}
		size += int64(len(q.ChangeSeq) + 16)
	}
	if b.before != nil {
		if before == nil {
			b.before.AppendNull()
		} else {
			b.before.Append(true)
			for i := range before {
				size += appendSlot(b.before.FieldBuilder(i), &b.version.Columns[i], &before[i])
			}
		}
	}
	if rec.OpTS.After(b.newestOpTS) {
		b.newestOpTS = rec.OpTS
	}
	b.rows++
	b.bytes += size
	b.lastOffset = src.Offset
	if b.rows == 1 {
		b.firstPos = rec.Pos
	}
	b.lastPos = rec.Pos
	return size
}

// fillPartition writes the src_partition column, one value for every row.
func (b *buffer) fillPartition() {
	p := b.key.Partition
	n := b.rows - b.srcPartition.Len()
	b.srcPartition.Reserve(n)
	b.srcPartition.ReserveData(n * len(p))
	for range n {
		b.srcPartition.Append(p)
	}
}

func appendSlot(bld array.Builder, col *arrowschema.Column, s *slot) int64 {
	if s.state != slotSet {
		bld.AppendNull()
		return 1
	}
	switch col.Type.Kind {
	case arrowschema.KindString:
		bld.(*array.StringBuilder).BinaryBuilder.Append(s.bytes)
		return int64(len(s.bytes)) + 4
	case arrowschema.KindBinary:
		bld.(*array.BinaryBuilder).Append(s.bytes)
		return int64(len(s.bytes)) + 4
	case arrowschema.KindInt64:
		bld.(*array.Int64Builder).Append(s.i64)
	case arrowschema.KindFloat64:
		bld.(*array.Float64Builder).Append(s.f64)
	case arrowschema.KindDecimal:
		bld.(*array.Decimal128Builder).Append(s.dec)
		return 16
	case arrowschema.KindBoolean:
		bld.(*array.BooleanBuilder).Append(s.b)
		return 1
	case arrowschema.KindTimestamp:
		bld.(*array.TimestampBuilder).Append(arrow.Timestamp(s.i64))
	case arrowschema.KindDate:
		bld.(*array.Date32Builder).Append(arrow.Date32(s.i64))
		return 4
	}
	return 8
}
