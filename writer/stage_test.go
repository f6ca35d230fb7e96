package writer

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
)

// Rows that pass through the stage come out as the same Arrow arrays as
// the same values appended straight to the columns: every kind, set,
// null and absent values, rows with and without before images, drains at
// the row limit, at the byte limit and for rows longer than the stage.
func TestStageKeepsEveryValue(t *testing.T) {
	types := []string{"string", "binary", "int64", "float64", "decimal(20,3)", "boolean", "timestamp", "date"}
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
			s.i64, s.f64, s.b = r.Int64N(1e12)-5e11, r.NormFloat64(), r.IntN(2) == 0
			s.dec = decimal128.New(r.Int64N(1e6)-5e5, r.Uint64())
			n := r.IntN(12)
			if r.IntN(40) == 0 {
				n = stageBytes + r.IntN(3*stageBytes) // longer than the stage
			}
			s.bytes = []byte(strings.Repeat(string(rune('a'+i)), n))
		}
		return img
	}

	for _, rows := range []int{1, stageRows - 1, stageRows, 3*stageRows + 5, 2000} {
		t.Run(fmt.Sprint(rows), func(t *testing.T) {
			staged := newBuffer(mem, Key{Table: "S.T", Partition: "p0"}, v, "s_t", Source{Partition: "p0"}, time.Time{}, nil)
			direct := newBuffer(mem, Key{Table: "S.T", Partition: "p0"}, v, "s_t", Source{Partition: "p0"}, time.Time{}, nil)
			for i := range rows {
				rec := &cdc.Record{Op: cdc.Op(1 + r.IntN(3)), OpTS: time.UnixMicro(r.Int64N(1e15)),
					XID: fmt.Sprint(r.IntN(100)), HasXID: r.IntN(4) > 0, Pos: fmt.Sprint(i), HasPos: r.IntN(4) > 0}
				row := randomImage()
				var before []slot
				if r.IntN(3) == 0 {
					before = randomImage()
				}
				src := Source{Partition: "p0", Offset: int64(i)}
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

// With more buffers open than stageAbove, rows go through the stage, and
// files flushed while rows are still staged (by rows, by a commit) are
// byte for byte the files of the same rows written with one buffer open;
// buffers closed with rows still staged give all their memory back.
func TestManyOpenBuffersWriteTheSameFiles(t *testing.T) {
	v, recs := benchRecords(t, 1500, 10)
	const parts = stageAbove + 8
	part := func(i int) string { return fmt.Sprintf("p%02d", i%parts) }
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)

	w := newWriter(t, Config{Allocator: mem, MaxRows: 37})
	got := map[string][]byte{}
	for i, r := range recs {
		for _, f := range mustAppend(t, w, v, r, Source{Partition: part(i), Offset: int64(i)}) {
			got[f.Key] = f.Data
		}
	}
	for _, f := range mustFlushAll(t, w) {
		got[f.Key] = f.Data
	}
	// Rows still staged when the writer closes.
	for i, r := range recs[:5*parts] {
		mustAppend(t, w, v, r, Source{Partition: part(i), Offset: int64(10000 + i)})
	}
	w.Close()

	want := map[string][]byte{}
	for p := range parts {
		one := newWriter(t, Config{MaxRows: 37})
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
