package writer

import (
	"encoding/binary"
	"math"
	"math/bits"
	"unsafe"

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
// then the value when it is set, compactly: integers and dates as
// varints, timestamps as a varint of their distance from the row's op_ts,
// lengths as varints, a boolean in its state byte, and op_ts and
// src_offset as varints of their distance from the stage's previous row.
// Fixed-width, they were a third of the staged bytes, mostly zeros.
//
// Strings are staged against a reference (stageText): a row image's, and
// xid's and pos's, against the last value of the column the stage holds
// whole; a before image's against the row image's value of its column.
// A before image's other values equal to the row image's (the columns an
// update left alone) are a state byte.
func (b *buffer) stageRow(rec *cdc.Record, row, before []slot, src Source) {
	if b.stageMem == nil {
		b.stageMem = b.mem.Allocate(stageBytes + stageSlack)
		b.stage, b.rowStarts = b.stageMem[:0], make([]int32, 0, stageRows)
		b.anchors = make([]stageAnchor, len(row)+2)
	}
	st := b.stage
	anchors := b.anchors
	if len(b.rowStarts) == 0 {
		b.stagePrev = stagePrev{}
		clear(anchors)
	}
	b.rowStarts = append(b.rowStarts, int32(len(st)))
	ts := rec.OpTS.UnixMicro()
	st = binary.AppendVarint(st, ts-b.stagePrev.opTS)
	st = stageString(st, &anchors[len(row)], rec.HasXID, rec.XID)
	st = stageString(st, &anchors[len(row)+1], rec.HasPos, rec.Pos)
	st = binary.AppendVarint(st, src.Offset-b.stagePrev.offset)
	b.stagePrev = stagePrev{opTS: ts, offset: src.Offset}
	kinds := b.kinds
	for i := range row {
		s := &row[i]
		if s.state == slotSet && (kinds[i] == arrowschema.KindString || kinds[i] == arrowschema.KindBinary) {
			st = stageAnchored(st, &anchors[i], unsafe.String(unsafe.SliceData(s.bytes), len(s.bytes)))
			continue
		}
		st = stageSlot(st, kinds[i], s, ts)
	}
	if b.beforeIdx >= 0 {
		if before == nil {
			st = append(st, 0)
		} else {
			st = append(st, 1)
			for i := range before {
				st = stageBefore(st, kinds[i], &before[i], &row[i], ts)
			}
		}
	}
	b.stage = st
	if len(b.rowStarts) == stageRows || len(st) >= stageBytes {
		b.packStage()
	}
}

// stageAnchor is where the stage holds the last value of a column that
// it holds whole (at, n bytes), which the column's next values are
// staged against; n is 0 for none.
type stageAnchor struct{ at, n int32 }

// stagedShared, in a set value's state byte, marks a value staged against
// a reference: a string as the lengths of the prefix and of the suffix it
// shares with the reference, then the bytes between; any other value (of
// a before image) as equal to the reference. Below it are a boolean's
// value (stagedBoolShift) and the state.
const stagedShared = 1 << 5

// stagedStateMask keeps a staged state byte's state.
const stagedStateMask = 1<<stagedBoolShift - 1

// stageAnchored stages a set string against the column's anchor, and
// makes it the anchor when it is staged whole.
func stageAnchored(st []byte, a *stageAnchor, v string) []byte {
	var ref string
	if a.n > 0 {
		ref = unsafe.String(&st[a.at], a.n)
	}
	n := len(st)
	st = stageText(st, v, ref)
	if st[n] == byte(slotSet) && len(v) > 0 && len(v) <= math.MaxInt32 {
		a.at, a.n = int32(len(st)-len(v)), int32(len(v))
	}
	return st
}

// stageText stages a set string against ref: whole, or, when they share
// enough of their first and last bytes, as the lengths of what they share
// and the bytes in between. Consecutive values of a column often share a
// prefix (codes, keys, paths, positions) or a suffix (domains, units),
// and a before image's strings are most often the row image's. s2, which
// packed the stage before, found the same repeats, but for more
// instructions, and its blocks were decompressed again to be drained.
func stageText(st []byte, v, ref string) []byte {
	p := commonPrefix(v, ref)
	s := commonSuffix(v[p:], ref[p:])
	if p+s < minShared {
		st = append(st, byte(slotSet))
		st = binary.AppendUvarint(st, uint64(len(v)))
		return append(st, v...)
	}
	mid := v[p : len(v)-s]
	st = append(st, byte(slotSet|stagedShared))
	st = binary.AppendUvarint(st, uint64(p))
	st = binary.AppendUvarint(st, uint64(s))
	st = binary.AppendUvarint(st, uint64(len(mid)))
	return append(st, mid...)
}

// minShared is the fewest shared bytes worth their two lengths.
const minShared = 3

// commonPrefix is the length of the longest prefix a and b share.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if x := le.Uint64(unsafe.Slice(unsafe.StringData(a[i:]), 8)) ^ le.Uint64(unsafe.Slice(unsafe.StringData(b[i:]), 8)); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonSuffix is the length of the longest suffix a and b share.
func commonSuffix(a, b string) int {
	n := min(len(a), len(b))
	a, b = a[len(a)-n:], b[len(b)-n:]
	i := n
	for ; i >= 8; i -= 8 {
		if x := le.Uint64(unsafe.Slice(unsafe.StringData(a[i-8:]), 8)) ^ le.Uint64(unsafe.Slice(unsafe.StringData(b[i-8:]), 8)); x != 0 {
			return n - i + bits.LeadingZeros64(x)/8
		}
	}
	for i > 0 && a[i-1] == b[i-1] {
		i--
	}
	return n - i
}

// stageBefore stages a before image's value against the row image's
// value of its column, ref.
func stageBefore(st []byte, kind arrowschema.Kind, s, ref *slot, ts int64) []byte {
	if s.state != slotSet || ref.state != slotSet {
		return stageSlot(st, kind, s, ts)
	}
	switch kind {
	case arrowschema.KindString, arrowschema.KindBinary:
		return stageText(st, unsafe.String(unsafe.SliceData(s.bytes), len(s.bytes)), unsafe.String(unsafe.SliceData(ref.bytes), len(ref.bytes)))
	case arrowschema.KindBoolean: // a byte either way
	case arrowschema.KindDecimal:
		if s.i64 == ref.i64 && s.hi == ref.hi {
			return append(st, byte(slotSet|stagedShared))
		}
	default:
		if s.i64 == ref.i64 {
			return append(st, byte(slotSet|stagedShared))
		}
	}
	return stageSlot(st, kind, s, ts)
}

// stagePrev is what the stage's last row's op_ts and src_offset are
// staged against.
type stagePrev struct{ opTS, offset int64 }

// With many buffers open, each holds only what its share of the memory
// budget allows: in Arrow's layout (offsets, capacity doubled as it
// grows) about 560 bytes a row on the benchmark's 500 tables, so files of
// 700 rows, and their per-file costs (zstd on small pages, file
// creation and fsync, footers) and the collector's work on the columns of
// 500 open buffers outweighed the rows' own encoding. A full stage is
// therefore packed instead of drained: copied into one allocation of its
// size, and drained into the columns only when the file is encoded, on
// the encoding goroutine (unpack). On the 2M-record 500-table stream under
// 256 MiB: half the files, 18% less wall time and 15% less CPU; packed
// without compression (then 325 bytes a row, against s2's 175) it ran 10%
// slower than with s2. Staged compactly (stageRow) the rows take 252
// bytes, and s2 packs them into 162 with a row's start, in 30% less time;
// 3-4% fewer files, the same CPU. Compact and not compressed, the run took
// 3% less CPU but wrote 40% more files and 4.6% more bytes. Strings staged
// against a reference (stageText) instead take 161 bytes a row without
// s2, as many as s2 left, for 2% fewer instructions on 600k records of
// 500 tables (callgrind: 44.9G against 45.8G, files alike).
type packedRows struct {
	mem  []byte // the allocator's: the staged rows, then each row's start (uint32)
	body int    // bytes of mem that are the staged rows
	rows int
}

// packStage moves the staged rows into a packed block.
func (b *buffer) packStage() {
	n := len(b.rowStarts)
	if n == 0 {
		return
	}
	mem := b.mem.Allocate(len(b.stage) + 4*n)
	copy(mem, b.stage)
	for i, p := range b.rowStarts {
		le.PutUint32(mem[len(b.stage)+4*i:], uint32(p))
	}
	b.packed = append(b.packed, packedRows{mem: mem, body: len(b.stage), rows: n})
	b.packedBytes += int64(len(mem))
	b.resetStage()
}

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
			staged += p.body
		}
		// Rows appended straight before the buffer packed are already in
		// the columns: only what the first block adds is scaled.
		cols := b.columns()
		n0, d0 := make([]int, len(cols)), make([]int, len(cols))
		for i, c := range cols {
			n0[i], d0[i] = c.n, c.dataLen
		}
		var cur []int32
		for i, p := range b.packed {
			cur = cur[:0]
			for i := range p.rows {
				cur = append(cur, int32(le.Uint32(p.mem[p.body+4*i:])))
			}
			b.drainRows(p.mem[:p.body], cur)
			b.mem.Free(p.mem)
			if i == 0 && len(b.packed) > 1 {
				// The strings' bytes and the before images' rows grow
				// with the staged bytes: reserving them from the first
				// block spares the doublings, whose copies were a third
				// of all bytes allocated.
				scale := 1.05 * float64(staged) / float64(p.body)
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

// stageString stages a metacolumn's string as stageRow stages a
// column's, null unless ok.
func stageString(st []byte, a *stageAnchor, ok bool, v string) []byte {
	if !ok {
		return append(st, byte(slotNull))
	}
	return stageAnchored(st, a, v)
}

// stageSlot stages a value of a row whose op_ts is ts.
func stageSlot(st []byte, kind arrowschema.Kind, s *slot, ts int64) []byte {
	if s.state != slotSet {
		return append(st, byte(s.state))
	}
	switch kind {
	case arrowschema.KindString, arrowschema.KindBinary:
		st = append(st, byte(slotSet))
		st = binary.AppendUvarint(st, uint64(len(s.bytes)))
		return append(st, s.bytes...)
	case arrowschema.KindFloat64:
		return le.AppendUint64(append(st, byte(slotSet)), uint64(s.i64))
	case arrowschema.KindDecimal:
		return binary.AppendVarint(binary.AppendVarint(append(st, byte(slotSet)), s.i64), s.hi)
	case arrowschema.KindBoolean:
		return append(st, byte(slotSet)|byte(b2i(s.bool()))<<stagedBoolShift)
	case arrowschema.KindTimestamp:
		return binary.AppendVarint(append(st, byte(slotSet)), s.i64-ts)
	default: // int64, date
		return binary.AppendVarint(append(st, byte(slotSet)), s.i64)
	}
}

// stagedBoolShift places a boolean's value in its state byte, above the
// state.
const stagedBoolShift = 4

// varint reads a varint that stageSlot wrote at p, and returns the
// position after it.
func varint(st []byte, p int32) (int64, int32) {
	if c := st[p]; c < 0x80 { // most of them: small values, and lengths
		return int64(c>>1) ^ -int64(c&1), p + 1
	}
	return varintLong(st, p)
}

// varintLong reads a varint of more than a byte. The stage is written by
// stageRow in this process, so it is not checked for overflow as
// binary.Varint checks input (whose call, not inlined, cost more than
// the bytes' decoding).
func varintLong(st []byte, p int32) (int64, int32) {
	var x uint64
	for s := uint(0); ; s += 7 {
		c := st[p]
		p++
		if c < 0x80 {
			x |= uint64(c) << s
			break
		}
		x |= uint64(c&0x7f) << s
	}
	return int64(x>>1) ^ -int64(x&1), p
}

// uvarint reads a length that stageSlot or stageString wrote at p.
func uvarint(st []byte, p int32) (int32, int32) {
	if c := st[p]; c < 0x80 {
		return int32(c), p + 1
	}
	return uvarintLong(st, p)
}

func uvarintLong(st []byte, p int32) (int32, int32) {
	v, n := binary.Uvarint(st[p:])
	return int32(v), p + int32(n)
}

// sharedLengths reads the three lengths of a string staged against a
// reference (stageText): nearly always a byte each.
func sharedLengths(st []byte, p int32) (pre, suf, n, next int32) {
	if q := st[p : p+3]; q[0]|q[1]|q[2] < 0x80 {
		return int32(q[0]), int32(q[1]), int32(q[2]), p + 3
	}
	pre, p = uvarint(st, p)
	suf, p = uvarint(st, p)
	n, p = uvarint(st, p)
	return pre, suf, n, p
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
	ts := b.drainOpTS(st, cur)
	drainColumn(b.xid, st, cur, nil, nil)
	drainColumn(b.pos, st, cur, nil, nil)
	drainDeltas(b.srcOffset, st, cur)
	for _, c := range b.cols {
		drainColumn(c, st, cur, ts, nil)
	}
	if b.before != nil {
		b.drainBefore(st, cur, ts)
	}
}

// drainOpTS appends the rows' op_ts and returns them, for the rows'
// timestamps, which are staged against them.
func (b *buffer) drainOpTS(st []byte, cur []int32) []int64 {
	ts := b.drainTS[:0]
	prev := int64(0)
	for r, p := range cur {
		d, p := varint(st, p)
		prev += d
		b.opTS.appendInt64(prev)
		ts = append(ts, prev)
		cur[r] = p
	}
	b.drainTS = ts
	return ts
}

// drainDeltas appends int64s staged as the distance from the row before.
func drainDeltas(c *column, st []byte, cur []int32) {
	prev := int64(0)
	for r, p := range cur {
		d, p := varint(st, p)
		prev += d
		c.appendInt64(prev)
		cur[r] = p
	}
}

// drainRefs is what a before image's values were staged against: the
// row image's column, and the row in it of each value.
type drainRefs struct {
	col  *column
	rows []int32
}

// drainColumn appends each staged row's value of c and moves past it;
// ts holds the rows' op_ts (nil for a metacolumn), and ref what the
// values were staged against (nil for a row image's). Strings and 64-bit
// values, most of the columns, are appended without going through a
// slot: one switch per column rather than two per value.
func drainColumn(c *column, st []byte, cur []int32, ts []int64, ref *drainRefs) {
	switch c.kind {
	case arrowschema.KindString, arrowschema.KindBinary, arrowschema.KindInt64:
		drainDirect(c, st, cur, nil, ref)
	case arrowschema.KindTimestamp:
		drainDirect(c, st, cur, ts, ref)
	default:
		drainSlots(c, st, cur, ref)
	}
}

// drainDirect drains a string, binary or int64 column, or a timestamp
// column when ts holds the rows' op_ts its values are staged against.
func drainDirect(c *column, st []byte, cur []int32, ts []int64, ref *drainRefs) {
	strings := c.offsets != nil
	anchor, anchorEnd := 0, 0 // of the column's last value staged whole
	for r, p := range cur {
		state := st[p]
		p++
		switch {
		case slotState(state) == slotSet && strings:
			var n int32
			n, p = uvarint(st, p)
			v := st[p : p+n] // &st[p] is past the end for an empty last value
			c.appendString(unsafe.String(unsafe.SliceData(v), n))
			p += n
			if n > 0 {
				anchor, anchorEnd = c.dataLen-int(n), c.dataLen
			}
		case state == byte(slotSet|stagedShared) && strings:
			var pre, suf, n int32
			pre, suf, n, p = sharedLengths(st, p)
			if ref != nil {
				from, to := ref.col.valueBounds(int(ref.rows[r]))
				c.appendSpliced(ref.col, from, to, int(pre), int(suf), st[p:p+n])
			} else {
				c.appendSpliced(c, anchor, anchorEnd, int(pre), int(suf), st[p:p+n])
			}
			p += n
		case slotState(state) == slotSet:
			var v int64
			v, p = varint(st, p)
			if ts != nil {
				v += ts[r]
			}
			c.appendInt64(v)
		case state == byte(slotSet|stagedShared):
			c.appendFrom(ref.col, int(ref.rows[r]))
		default:
			c.appendNulls(1)
		}
		cur[r] = p
	}
}

// drainSlots drains a column of the other kinds (float64, decimal,
// boolean, date) through a slot.
func drainSlots(c *column, st []byte, cur []int32, ref *drainRefs) {
	var s slot
	for r, p := range cur {
		state := st[p]
		s.state = slotState(state & stagedStateMask)
		p++
		switch {
		case state&stagedShared != 0:
			c.appendFrom(ref.col, int(ref.rows[r]))
			cur[r] = p
			continue
		case s.state == slotSet:
			switch c.kind {
			case arrowschema.KindFloat64:
				s.i64 = int64(le.Uint64(st[p:]))
				p += 8
			case arrowschema.KindDecimal:
				s.i64, p = varint(st, p)
				s.hi, p = varint(st, p)
			case arrowschema.KindBoolean:
				s.i64 = int64(state >> stagedBoolShift)
			default: // date
				s.i64, p = varint(st, p)
			}
		}
		c.append(&s)
		cur[r] = p
	}
}

// drainBefore appends the staged rows' before images: the struct's
// validity, then each field's values of the rows that have one. A before
// image ends its row, so the rows with one are drained field by field
// from cursors of their own. The row image's columns are drained first:
// the before image's values were staged against them.
func (b *buffer) drainBefore(st []byte, cur []int32, ts []int64) {
	s := b.before
	curB, tsB, rowsB := b.beforeCur[:0], b.beforeTS[:0], b.beforeRows[:0]
	for r, p := range cur {
		has := st[p] != 0
		cur[r] = p + 1
		s.setValid(s.n, has)
		s.n++
		if has {
			curB, tsB, rowsB = append(curB, p+1), append(tsB, ts[r]), append(rowsB, int32(r))
		} else {
			s.nulls++
		}
	}
	b.beforeCur, b.beforeTS = curB, tsB
	if len(curB) == 0 {
		b.beforeRows = rowsB
		return
	}
	// The block's rows are the row image's last len(cur), in every column.
	refRows := b.beforeRefRows[:0]
	first := int32(b.opTS.n - len(cur))
	for _, r := range rowsB {
		refRows = append(refRows, first+r)
	}
	for i, f := range s.fields {
		drainColumn(f, st, curB, tsB, &drainRefs{col: b.cols[i], rows: refRows})
	}
	b.beforeRows, b.beforeRefRows = rowsB, refRows
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
