package writer

import (
	"encoding/binary"
	"fmt"

	"github.com/klauspost/compress/s2"
	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
)

// A buffer's newest rows wait in a small row-major stage, when the writer
// has many buffers open (stageAbove); a full stage is packed (below), and
// the packed rows are appended to the columns column by column when the
// file is encoded.
//
// Appending a row straight to the columns touches every column's struct,
// buffers and tail: 40 to 60 places in memory for a table of 16 columns
// with before images. With hundreds of tables open, the previous append
// to the same table was hundreds of records ago and every one of those
// places has left the cache, so a row cost dozens of cache misses (the
// 500-table stream ran at a quarter of the 4-table speed, with the
// appends ten times as slow). Written to the stage, a row is one
// sequential write; moved column by column, each column's cache lines are
// fetched once per block of rows rather than once per row.
//
// With a few buffers open their columns stay in the cache, and the copy
// through the stage cost about 5% more CPU than it saved on the 4-table
// stream, so rows go straight to the columns there (appendColumns).
//
// The stage's memory comes from the writer's allocator, so the budget
// counts it: stageBytes plus room for the row that crosses it, per open
// buffer. A longer row grows it on the Go heap until it is packed.
const (
	stageAbove = 32 // open buffers: about 2,000 column tails, what a core's L2 holds
	stageRows  = 64
	stageBytes = 8 << 10
	stageSlack = 2 << 10
)

var le = binary.LittleEndian

// stageRow appends a row to the stage: op_ts, xid, pos, src_offset, the
// row image, then the before image (when the schema has one). Values are
// written as drainRows reads them back: a state byte per column value,
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
	if b.beforeIdx >= 0 {
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
		b.packStage()
	}
}

// With many buffers open, each holds only what its share of the memory
// budget allows: in Arrow's layout (offsets, capacity doubled as it
// grows) about 560 bytes a row on the benchmark's 500 tables, so files of
// 700 rows, and their per-file costs (zstd on small pages, file
// creation and fsync, footers) and the collector's work on the columns of
// 500 open buffers outweighed the rows' own encoding. A full stage is
// therefore packed instead of drained: s2-compressed into one allocation,
// about 175 bytes a row, and drained into the columns only when the file
// is encoded, on the encoding goroutine (unpack). On the 2M-record
// 500-table stream under 256 MiB: half the files, 18% less wall
// time and 15% less CPU; packed without compression (325 bytes a row) it
// ran 10% slower than with s2.
type packedRows struct {
	mem  []byte // the allocator's: the compressed rows, then each row's start (uint32)
	body int    // bytes of mem that are the compressed rows
	rows int
	size int // bytes of the rows uncompressed
}

// packStage moves the staged rows into a packed block.
func (b *buffer) packStage() {
	n := len(b.rowStarts)
	if n == 0 {
		return
	}
	if b.scratch == nil {
		b.scratch = &packScratch{}
	}
	sc := b.scratch
	sc.buf = s2.Encode(sc.buf[:cap(sc.buf)], b.stage)
	mem := b.mem.Allocate(len(sc.buf) + 4*n)
	copy(mem, sc.buf)
	for i, p := range b.rowStarts {
		le.PutUint32(mem[len(sc.buf)+4*i:], uint32(p))
	}
	b.packed = append(b.packed, packedRows{mem: mem, body: len(sc.buf), rows: n, size: len(b.stage)})
	if cap(sc.buf) > 4*(stageBytes+stageSlack) {
		sc.buf = nil // a long row's: not kept for the stages of ordinary ones
	}
	b.packedBytes += int64(len(mem))
	b.resetStage()
}

// packScratch is the compression's output before it is copied into an
// allocation of its size, shared by the buffers of one writer.
type packScratch struct{ buf []byte }

// unpack drains the packed rows, then the staged ones, into the columns.
func (b *buffer) unpack() {
	b.makeColumns()
	if len(b.packed) > 0 {
		// The columns' final row count is known: no doubling, no copies.
		for _, c := range b.stagedColumns() {
			c.reserve(b.rows, 0)
		}
		staged := 0
		for _, p := range b.packed {
			staged += p.size
		}
		// Rows appended straight before the buffer packed are already in
		// the columns: only what the first block adds is scaled.
		cols := b.columns()
		n0, d0 := make([]int, len(cols)), make([]int, len(cols))
		for i, c := range cols {
			n0[i], d0[i] = c.n, c.dataLen
		}
		var st []byte
		var cur []int32
		for i, p := range b.packed {
			var err error
			st, err = s2.Decode(st[:cap(st)], p.mem[:p.body])
			if err != nil || len(st) != p.size {
				// The block was written by packStage in this process.
				panic(fmt.Sprintf("writer: packed rows of %s do not decode: %v", b.key.Table, err))
			}
			cur = cur[:0]
			for i := range p.rows {
				cur = append(cur, int32(le.Uint32(p.mem[p.body+4*i:])))
			}
			b.drainRows(st, cur)
			b.mem.Free(p.mem)
			if i == 0 && len(b.packed) > 1 {
				// The strings' bytes and the before images' rows grow
				// with the staged bytes: reserving them from the first
				// block spares the doublings, whose copies were a third
				// of all bytes allocated.
				scale := 1.05 * float64(staged) / float64(p.size)
				for j, c := range cols {
					rows := min(b.rows, n0[j]+int(scale*float64(c.n-n0[j])))
					c.reserve(rows, d0[j]+int(scale*float64(c.dataLen-d0[j])))
				}
			}
		}
		b.packed, b.packedBytes = nil, 0
	}
	b.drainStage()
}

// freePacked frees packed rows that will not be drained.
func (b *buffer) freePacked() {
	for _, p := range b.packed {
		b.mem.Free(p.mem)
	}
	b.packed, b.packedBytes = nil, 0
}

// stagedColumns are the columns a staged row has a value in, one per row.
func (b *buffer) stagedColumns() []*column {
	return append([]*column{b.opTS, b.xid, b.pos, b.srcOffset}, b.cols...)
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
		return le.AppendUint64(st, uint64(s.i64))
	case arrowschema.KindDecimal:
		st = le.AppendUint64(st, uint64(s.i64))
		return le.AppendUint64(st, uint64(s.hi))
	case arrowschema.KindBoolean:
		return append(st, byte(b2i(s.bool())))
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
	b.makeColumns()
	b.drainRows(b.stage, b.rowStarts)
	b.resetStage()
}

// resetStage empties the stage once its rows are elsewhere.
func (b *buffer) resetStage() {
	st := b.stage
	if cap(st) != cap(b.stageMem) {
		st = b.stageMem // the row that grew it is drained
	}
	b.stage, b.rowStarts = st[:0], b.rowStarts[:0]
}

// drainRows appends the rows of st that start at cur to the columns;
// cur serves as each row's read position.
func (b *buffer) drainRows(st []byte, cur []int32) {
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
				s.i64 = int64(le.Uint64(st[p:]))
				p += 8
			case arrowschema.KindDecimal:
				s.i64, s.hi = int64(le.Uint64(st[p:])), int64(le.Uint64(st[p+8:]))
				p += 16
			case arrowschema.KindBoolean:
				s.i64 = int64(st[p])
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
