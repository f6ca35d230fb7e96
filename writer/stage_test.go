package writer

import (
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
