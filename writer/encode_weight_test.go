package writer

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// Incompressible text (random printable ASCII): the lean encoder's pages
// and output are about the values' own size, more than the half of the
// file's memory EncodeMemoryBytes counts.
func TestEncodeWeightCoversIncompressibleValues(t *testing.T) {
	fx, v := ordersFixture(t, false)
	r := rand.New(rand.NewPCG(1, 2))
	const rows = 20000
	recs := make([]string, rows)
	buf := make([]byte, 400)
	for i := range recs {
		for j := range buf {
			c := byte(' ' + r.IntN(94))
			if c == '"' || c == '\\' {
				c = 'x'
			}
			buf[j] = c
		}
		recs[i] = fmt.Sprintf(`{"qual_table":"SALES.ORDERS","op_type":"INSERT","op_ts":"2026-07-13T04:01:01.123456Z","xid":"x","pos":"p%d","after":{"ORDER_ID":%d,"STATUS":"%s","TOTAL_AMOUNT":1.5}}`, i, i, buf)
	}
	encode := func() (int64, uint64, int) {
		w := newWriter(t, Config{DeferEncode: true, MaxPackedBytes: 1 << 30})
		for p := range stageAbove + 1 { // many buffers open: the rows are packed
			mustAppend(t, w, v, fx.rec(recs[p]), Source{Partition: fmt.Sprintf("c%02d", p), Offset: int64(p)})
		}
		for i, s := range recs {
			mustAppend(t, w, v, fx.rec(s), Source{Partition: "p0", Offset: int64(i)})
		}
		var f *File
		for _, g := range mustFlushAll(t, w) {
			if g.SourcePartition == "p0" {
				f = g
			} else {
				g.Release()
			}
		}
		if f.expands == 0 {
			t.Fatal("rows not packed")
		}
		prepared(f)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if err := f.Encode(); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return f.EncodeMemoryBytes(), after.TotalAlloc - before.TotalAlloc, len(f.Data)
	}
	// The encoders' and scratch pools fill over the first files (one per
	// goroutine encoding chunks); the least of a few runs is the steady
	// state.
	weight, allocated, size := encode()
	for range 4 {
		_, a, _ := encode()
		allocated = min(allocated, a)
	}
	t.Logf("allocated %d, weight %d (expands ~%d), file %d bytes", allocated, weight, 2*weight, size)
	if int64(allocated) > weight {
		t.Errorf("encoding allocated %d bytes, more than the %d the budget counts", allocated, weight)
	}
}
