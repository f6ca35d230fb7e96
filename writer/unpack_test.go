package writer

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// A buffer that filled in direct mode (few buffers open) and then packed
// a few blocks (more than stageAbove open) is unpacked into columns that
// already hold its direct rows: the reservation scaled from the first
// block must not multiply those rows too.
func TestUnpackAfterDirectRowsReservesWhatTheFileHolds(t *testing.T) {
	v, recs := benchRecords(t, 8000, 10)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	w := newWriter(t, Config{Allocator: mem, DeferEncode: true})
	const direct = 4000
	i := 0
	for ; i < direct; i++ {
		mustAppend(t, w, v, recs[i], Source{Partition: "hot", Offset: int64(i)})
	}
	for p := range stageAbove + 1 {
		mustAppend(t, w, v, recs[i], Source{Partition: fmt.Sprintf("c%02d", p), Offset: int64(i)})
		i++
	}
	for range 64 * 20 {
		mustAppend(t, w, v, recs[i], Source{Partition: "hot", Offset: int64(i)})
		i++
	}
	files := mustFlushAll(t, w)
	defer func() {
		for _, f := range files {
			f.Release()
		}
	}()
	var b *buffer
	for _, f := range files {
		if f.SourcePartition == "hot" {
			if f.enc == nil || f.enc.buf == nil || len(f.enc.buf.packed) == 0 {
				t.Fatal("the hot file holds no packed rows")
			}
			b = f.enc.buf
		}
	}
	blocks := len(b.packed)
	before := mem.CurrentAlloc()
	b.unpack()
	after := mem.CurrentAlloc()
	t.Logf("%d rows (%d direct), %d packed blocks; allocator %d -> %d bytes", b.rows, direct, blocks, before, after)
	for i, c := range b.columns() {
		if c.capRows > 2*b.rows {
			t.Errorf("column %d (kind %v): %d values, reserved %d rows for a file of %d", i, c.kind, c.n, c.capRows, b.rows)
		}
		if c.offsets != nil && c.data.Cap() > 2*c.dataLen+4096 {
			t.Errorf("column %d: %d bytes of strings, reserved %d", i, c.dataLen, c.data.Cap())
		}
	}
}

// Direct rows, then packed ones (many buffers open), then direct ones
// again (the others flushed): the file is the one a single buffer writes.
func TestDirectThenPackedThenDirectRowsWriteOneBuffersFile(t *testing.T) {
	vrecs := benchTableRecords(t, 6000, 2, 10, 10)
	var a, bb []versionedRecord
	for _, r := range vrecs {
		if r.v.Table == vrecs[0].v.Table {
			a = append(a, r)
		} else {
			bb = append(bb, r)
		}
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, c := range []struct{ deferEnc, justPacked bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		deferEnc := c.deferEnc
		w := newWriter(t, Config{Allocator: mem, DeferEncode: deferEnc})
		one := newWriter(t, Config{Allocator: mem})
		ai := 0
		addA := func(n int) {
			for range n {
				r := a[ai]
				mustAppend(t, w, r.v, r.rec, Source{Partition: "hot", Offset: int64(ai)})
				mustAppend(t, one, r.v, r.rec, Source{Partition: "hot", Offset: int64(ai)})
				ai++
			}
		}
		addA(500)
		for p := range stageAbove + 1 {
			mustAppend(t, w, bb[p].v, bb[p].rec, Source{Partition: fmt.Sprintf("c%02d", p), Offset: int64(p)})
		}
		addA(64*5 + 17)
		var hot *buffer
		for k, b := range w.buffers {
			if k.Partition == "hot" {
				hot = b
			}
		}
		if hot == nil || len(hot.packed) == 0 {
			t.Fatal("hot buffer not packed")
		}
		if c.justPacked {
			// The switch back to direct rows right after a pack, when
			// the stage holds no row (and no memory) but the packed
			// blocks do.
			for len(hot.rowStarts) > 0 {
				addA(1)
			}
		} else if len(hot.rowStarts) == 0 {
			addA(1)
		}
		bf, err := w.FlushTable(bb[0].v.Table, "ddl")
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range bf {
			f.Release()
		}
		addA(300)
		got := mustFlushAll(t, w)
		want := mustFlushAll(t, one)
		if len(got) != 1 || len(want) != 1 {
			t.Fatalf("files: %d and %d", len(got), len(want))
		}
		if err := got[0].Encode(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[0].Data, want[0].Data) {
			t.Errorf("defer=%v, just packed=%v: the file differs from one buffer's (%d rows vs %d)", deferEnc, c.justPacked, got[0].Rows, want[0].Rows)
		}
		w.Close()
		one.Close()
	}
}
