package writer

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
)

var extremes = []int64{math.MinInt64, math.MinInt64 + 1, -1, 0, 1, math.MaxInt64 - 1, math.MaxInt64}

// Rows that pass through the stage come out as the same Arrow arrays as
// the same values appended straight to the columns: every kind, set,
// null and absent values, rows with and without before images, drains at
// the row limit, at the byte limit and for rows longer than the stage,
// strings staged whole or against another, before images' values equal
// to the row image's or not.
func TestStageKeepsEveryValue(t *testing.T) {
	types := []string{"string", "binary", "int64", "float64", "decimal(20,3)", "boolean", "timestamp", "date", "string"} // a string last: an empty one ends the stage
	hints := map[string]arrowschema.Type{}
	md := cdc.TableMetadata{Table: "S.T"}
	for i, name := range types {
		typ, err := arrowschema.ParseType(name)
		if err != nil {
			t.Fatal(err)
		}
		col := fmt.Sprintf("C%d", i)
		hints["S.T:"+col] = typ
		md.Columns = append(md.Columns, cdc.Column{Name: col, Type: "string", Nullable: true})
	}
	ev, err := arrowschema.NewCatalog(arrowschema.Options{Hints: hints, BeforeImage: true}).ApplyMetadata(md, "p", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	v := ev.Version
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)

	r := rand.New(rand.NewPCG(3, 4))
	randomImage := func() []slot {
		img := make([]slot, len(types))
		for i := range img {
			s := &img[i]
			s.state = slotState(r.IntN(3))
			setRandom(r, v.Columns[i].Type.Kind, s)
			if k := v.Columns[i].Type.Kind; r.IntN(8) == 0 && k != arrowschema.KindFloat64 && k != arrowschema.KindBoolean {
				// Values are staged as varints, timestamps against the
				// row's op_ts: the extremes must wrap around and back.
				s.i64 = extremes[r.IntN(len(extremes))]
				if k == arrowschema.KindDecimal {
					s.hi = extremes[r.IntN(len(extremes))]
				}
			}
			n := r.IntN(12)
			if r.IntN(40) == 0 {
				n = stageBytes + r.IntN(3*stageBytes) // longer than the stage
			}
			s.bytes = []byte(strings.Repeat(string(rune('a'+i)), n))
			if r.IntN(2) == 0 {
				// Strings are staged against the column's last whole
				// one: prefixes and suffixes shared with it or not,
				// overlapping ("aaa" against "aaaa"), empty middles.
				pre := []string{"", "a", "ORD-", "ORD-0000"}[r.IntN(4)]
				suf := []string{"", "a", "@example.com", "0000"}[r.IntN(4)]
				s.bytes = []byte(pre + strings.Repeat("0123456789"[r.IntN(10):], r.IntN(2)) + suf)
			}
		}
		return img
	}
	// A before image's values are staged against the row image's: most of
	// an update's columns are unchanged, some share their ends.
	beforeOf := func(row []slot) []slot {
		img := randomImage()
		for i := range img {
			switch r.IntN(3) {
			case 0:
				img[i] = row[i]
			case 1:
				if row[i].bytes != nil {
					img[i].bytes = append(append([]byte(nil), row[i].bytes[:len(row[i].bytes)/2]...), "x"...)
				}
			}
		}
		return img
	}

	for _, rows := range []int{1, stageRows - 1, stageRows, 3*stageRows + 5, 2000} {
		t.Run(fmt.Sprint(rows), func(t *testing.T) {
			staged := newBuffer(mem, Key{Table: "S.T", Partition: "p0"}, v, "s_t", Source{Partition: "p0"}, time.Time{}, nil, true)
			direct := newBuffer(mem, Key{Table: "S.T", Partition: "p0"}, v, "s_t", Source{Partition: "p0"}, time.Time{}, nil, false)
			for i := range rows {
				rec := &cdc.Record{Op: cdc.Op(1 + r.IntN(3)), OpTS: time.UnixMicro(r.Int64N(1e15)),
					XID: fmt.Sprint(r.IntN(100)), HasXID: r.IntN(4) > 0, Pos: fmt.Sprint(i), HasPos: r.IntN(4) > 0}
				offset := int64(i)
				if r.IntN(8) == 0 {
					// op_ts and src_offset are staged against the row
					// before: they may go back, or jump to the extremes.
					rec.OpTS = time.UnixMicro(extremes[r.IntN(len(extremes))])
					offset = extremes[r.IntN(len(extremes))]
				}
				row := randomImage()
				var before []slot
				switch r.IntN(3) {
				case 0:
					before = randomImage()
				case 1:
					before = beforeOf(row)
				}
				src := Source{Partition: "p0", Offset: offset}
				staged.append(rec, row, before, nil, src, true)
				direct.append(rec, row, before, nil, src, i%97 == 96) // a few rows staged: the switch back drains them first
			}
			got, want := staged.newRecordBatch(), direct.newRecordBatch()
			for i := range int(want.NumCols()) {
				if !array.Equal(got.Column(i), want.Column(i)) || got.Column(i).NullN() != want.Column(i).NullN() {
					t.Errorf("%s: staged\n%v\ndirect\n%v", want.ColumnName(i), got.Column(i), want.Column(i))
				}
			}
			got.Release()
			want.Release()
			staged.release()
			direct.release()
		})
	}
}

// With more buffers open than stageAbove, rows go through the stage and
// are packed, and files flushed while rows are still staged or packed (by
// rows, by a commit) are byte for byte the files of the same rows written
// with one buffer open; buffers closed with rows still staged or packed
// give all their memory back. With DeferEncode the packed rows are
// unpacked by whichever goroutine encodes the file (here several at
// once, while the writer goes on, into the arenas they reuse), and a file
// released unencoded frees them too.
func TestManyOpenBuffersWriteTheSameFiles(t *testing.T) {
	for _, tc := range []struct {
		name    string
		maxRows int
		defer_  bool
	}{
		{"rows-37", 37, false},
		{"rows-300-deferred", 300, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testManyOpenBuffers(t, tc.maxRows, tc.defer_)
		})
	}
}

func testManyOpenBuffers(t *testing.T, maxRows int, deferEncode bool) {
	v, recs := benchRecords(t, 16000, 10)
	const parts = stageAbove + 8
	part := func(i int) string { return fmt.Sprintf("p%02d", i%parts) }
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)

	w := newWriter(t, Config{Allocator: mem, MaxRows: maxRows, DeferEncode: deferEncode})
	var (
		mu      sync.Mutex
		got     = map[string][]byte{}
		pending sync.WaitGroup
		packed  int
	)
	take := func(files []*File) {
		for _, f := range files {
			if f.enc != nil && f.enc.buf != nil && len(f.enc.buf.packed) > 0 {
				packed++
			}
			if !deferEncode {
				got[f.Key] = f.Data
				continue
			}
			pending.Go(func() {
				if err := f.Encode(); err != nil {
					t.Error(err)
				}
				mu.Lock()
				got[f.Key] = f.Data
				mu.Unlock()
			})
		}
	}
	for i, r := range recs {
		take(mustAppend(t, w, v, r, Source{Partition: part(i), Offset: int64(i)}))
	}
	take(mustFlushAll(t, w))
	pending.Wait()
	if deferEncode && packed == 0 {
		t.Error("no file held packed rows")
	}
	if deferEncode && (len(w.arenas.free) == 0 || w.arenas.free[0].slab == nil) {
		t.Error("no file's columns were unpacked into an arena's slab")
	}
	// Rows still staged or packed when the writer closes, and files that
	// are released without being encoded.
	for i, r := range recs[:5*parts] {
		mustAppend(t, w, v, r, Source{Partition: part(i), Offset: int64(100000 + i)})
	}
	released := 0
	for i, r := range recs[:(maxRows+stageRows)*parts] {
		for _, f := range mustAppend(t, w, v, r, Source{Partition: part(i), Offset: int64(200000 + i)}) {
			f.Release()
			released++
		}
	}
	if released == 0 {
		t.Error("no file was released unencoded")
	}
	w.Close()

	want := map[string][]byte{}
	for p := range parts {
		one := newWriter(t, Config{MaxRows: maxRows})
		for i, r := range recs {
			if i%parts == p {
				for _, f := range mustAppend(t, one, v, r, Source{Partition: part(i), Offset: int64(i)}) {
					want[f.Key] = f.Data
				}
			}
		}
		for _, f := range mustFlushAll(t, one) {
			want[f.Key] = f.Data
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d files with %d buffers open, %d written one buffer at a time", len(got), parts, len(want))
	}
	for k, data := range want {
		if !bytes.Equal(got[k], data) {
			t.Errorf("%s differs from the file written with one buffer open", k)
		}
	}
}
