package writer

import (
	"encoding/binary"
	"math"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
)

// A buffer's newest rows wait in a small row-major stage before they are
// appended to its columns, a few dozen at a time, column by column, when
// the writer has many buffers open (stageAbove).
//
// Appending a row straight to the columns touches every column's struct,
// buffers and tail: 40 to 60 places in memory for a table of 16 columns
// with before images. With hundreds of tables open, the previous append
// to the same table was hundreds of records ago and every one of those
// places has left the cache, so a row cost dozens of cache misses (the
// 500-table stream ran at a quarter of the 4-table speed, with the
// appends ten times as slow). Written to the stage, a row is one
// sequential write; moved column by column, each column's cache lines are
// fetched once per stage rather than once per row.
//
// With a few buffers open their columns stay in the cache, and the copy
// through the stage cost about 5% more CPU than it saved on the 4-table
// stream, so rows go straight to the columns there (appendColumns).
//
// The stage's memory comes from the writer's allocator, so the budget
// counts it: stageBytes plus room for the row that crosses it, per open
// buffer. A longer row grows it on the Go heap until the next drain.
const (
	stageAbove = 32 // open buffers: about 2,000 column tails, what a core's L2 holds
	stageRows  = 64
	stageBytes = 8 << 10
	stageSlack = 2 << 10
)

var le = binary.LittleEndian

// stageRow appends a row to the stage: op_ts, xid, pos, src_offset, the
// row image, then the before image (when the schema has one). Values are
// written as drainStage reads them back: a state byte per column value,
// then the value when it is set.
func (b *buffer) stageRow(rec *cdc.Record, row, before []slot, src Source) {
	if b.stageMem == nil {
		b.stageMem = b.mem.Allocate(stageBytes + stageSlack)
		b.stage, b.rowStarts = b.stageMem[:0], make([]int32, 0, stageRows)
	}
	st := b.stage
	b.rowStarts = append(b.rowStarts, int32(len(st)))
	st = le.AppendUint64(st, uint64(rec.OpTS.UnixMicro()))
	st = stageString(st, rec.HasXID, rec.XID)
	st = stageString(st, rec.HasPos, rec.Pos)
	st = le.AppendUint64(st, uint64(src.Offset))
	kinds := b.kinds
	for i := range row {
		st = stageSlot(st, kinds[i], &row[i])
	}
	if b.before != nil {
		if before == nil {
			st = append(st, 0)
		} else {
			st = append(st, 1)
			for i := range before {
				st = stageSlot(st, kinds[i], &before[i])
			}
		}
	}
	b.stage = st
	if len(b.rowStarts) == stageRows || len(st) >= stageBytes {
		b.drainStage()
	}
}

// dropStage frees the stage's memory; staged rows must be drained first.
func (b *buffer) dropStage() {
	if b.stageMem != nil {
		b.mem.Free(b.stageMem)
		b.stageMem, b.stage, b.rowStarts = nil, nil, nil
	}
}

// stageString stages a metacolumn's string as stageSlot stages a
// column's, null unless ok.
func stageString(st []byte, ok bool, v string) []byte {
	if !ok {
		return append(st, byte(slotNull))
	}
	st = append(st, byte(slotSet))
	st = le.AppendUint32(st, uint32(len(v)))
	return append(st, v...)
}

func stageSlot(st []byte, kind arrowschema.Kind, s *slot) []byte {
	st = append(st, byte(s.state))
	if s.state != slotSet {
		return st
	}
	switch kind {
	case arrowschema.KindString, arrowschema.KindBinary:
		st = le.AppendUint32(st, uint32(len(s.bytes)))
		return append(st, s.bytes...)
	case arrowschema.KindFloat64:
		return le.AppendUint64(st, math.Float64bits(s.f64))
	case arrowschema.KindDecimal:
		st = le.AppendUint64(st, s.dec.LowBits())
		return le.AppendUint64(st, uint64(s.dec.HighBits()))
	case arrowschema.KindBoolean:
		return append(st, byte(b2i(s.b)))
	default: // int64, timestamp, date
		return le.AppendUint64(st, uint64(s.i64))
	}
}

// drainStage appends the staged rows to the columns, one column at a
// time; rowStarts serves as each row's read position.
func (b *buffer) drainStage() {
	if len(b.rowStarts) == 0 {
		return
	}
	st, cur := b.stage, b.rowStarts
	drainInt64(b.opTS, st, cur)
	drainColumn(b.xid, st, cur)
	drainColumn(b.pos, st, cur)
	drainInt64(b.srcOffset, st, cur)
	for _, c := range b.cols {
		drainColumn(c, st, cur)
	}
	if b.before != nil {
		b.drainBefore(st, cur)
	}
	if cap(st) != cap(b.stageMem) {
		st = b.stageMem // the row that grew it is drained
	}
	b.stage, b.rowStarts = st[:0], cur[:0]
}

func drainInt64(c *column, st []byte, cur []int32) {
	for r, p := range cur {
		c.appendInt64(int64(le.Uint64(st[p:])))
		cur[r] = p + 8
	}
}

// drainColumn appends each staged row's value of c and moves past it.
func drainColumn(c *column, st []byte, cur []int32) {
	var s slot
	for r, p := range cur {
		s.state = slotState(st[p])
		p++
		if s.state == slotSet {
			switch c.kind {
			case arrowschema.KindString, arrowschema.KindBinary:
				n := int32(le.Uint32(st[p:]))
				s.bytes = st[p+4 : p+4+n]
				p += 4 + n
			case arrowschema.KindFloat64:
				s.f64 = math.Float64frombits(le.Uint64(st[p:]))
				p += 8
			case arrowschema.KindDecimal:
				s.dec = decimal128.New(int64(le.Uint64(st[p+8:])), le.Uint64(st[p:]))
				p += 16
			case arrowschema.KindBoolean:
				s.b = st[p] != 0
				p++
			default:
				s.i64 = int64(le.Uint64(st[p:]))
				p += 8
			}
		}
		c.append(&s)
		cur[r] = p
	}
}

// drainBefore appends the staged rows' before images: the struct's
// validity, then each field's values of the rows that have one.
func (b *buffer) drainBefore(st []byte, cur []int32) {
	s := b.before
	with := b.withBefore[:0]
	for r, p := range cur {
		has := st[p] != 0
		cur[r] = p + 1
		with = append(with, has)
		s.setValid(s.n, has)
		s.n++
		if !has {
			s.nulls++
		}
	}
	b.withBefore = with
	for _, f := range s.fields {
		for r := range cur {
			if with[r] {
				drainColumn(f, st, cur[r:r+1])
			}
		}
	}
}

// appendColumns appends a row straight to the columns.
func (b *buffer) appendColumns(rec *cdc.Record, row, before []slot, src Source) {
	b.opTS.appendInt64(rec.OpTS.UnixMicro())
	if rec.HasXID {
		b.xid.appendString(rec.XID)
	} else {
		b.xid.appendNulls(1)
	}
	if rec.HasPos {
		b.pos.appendString(rec.Pos)
	} else {
		b.pos.appendNulls(1)
	}
	b.srcOffset.appendInt64(src.Offset)
	for i := range row {
		b.cols[i].append(&row[i])
	}
	if b.before != nil {
		if before == nil {
			b.before.appendNull()
		} else {
			b.before.appendImage(before)
		}
	}
}
