package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
	"github.com/lakehouse-exporter/lakehouse-exporter/commit"
	"github.com/lakehouse-exporter/lakehouse-exporter/store"
	"github.com/lakehouse-exporter/lakehouse-exporter/writer"
)

// TestBudgetFlushesEarlyByWhatTheLastAdded: the first budget flush starts
// once the data passes its share of the budget; every later one starts
// that far below it by what the last flush added while its files encoded,
// so that they encode while reading goes on instead of reading waiting
// for them at the limit.
func TestBudgetFlushesEarlyByWhatTheLastAdded(t *testing.T) {
	ctx := context.Background()
	st, err := store.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mem := newCountingAllocator(memory.NewGoAllocator())
	w, err := writer.New(writer.Config{Allocator: mem, DeferEncode: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	log := slog.New(slog.DiscardHandler)
	sum := Summary{RowsByTable: map[string]int64{}, RejectedBy: map[cdc.Reason]int64{}}
	up := newUploader(ctx, st, commit.New(commit.Config{Store: st}), 2, 256<<20, log, &sum, NopObserver{})
	defer up.close()
	b := newBudget(8<<20, mem, up, w, log)

	cat := arrowschema.NewCatalog(arrowschema.Options{})
	ev, err := cat.ApplyMetadata(cdc.TableMetadata{Table: "S.T", Columns: []cdc.Column{
		{Name: "ID", Type: "number", Key: true}, {Name: "NAME", Type: "string", Nullable: true}}}, "p0", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	dec, err := cdc.NewGoldenGate(cdc.GoldenGateNames{})
	if err != nil {
		t.Fatal(err)
	}
	limit := int64(float64(b.max) * dataShare)
	var rec cdc.Record
	row := 0
	// appendUntilFlush appends rows until keepBudget flushes, and returns
	// the data's memory when it decided to.
	appendUntilFlush := func() int64 {
		for ; row < 2_000_000; row++ {
			line := fmt.Sprintf(`{"qual_table":"S.T","op_type":"INSERT","op_ts":"2026-07-13T04:01:01Z","pos":"p%d","after":{"ID":%d,"NAME":"name of row %d, padded to look like a real value"}}`, row, row, row)
			if err := dec.Decode([]byte(line), &rec); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Append(ev.Version, &rec, writer.Source{Partition: "p", Offset: int64(row)}); err != nil {
				t.Fatal(err)
			}
			held := b.dataBytes()
			before := w.BufferedBytes()
			if err := b.keep(ctx); err != nil {
				t.Fatal(err)
			}
			if w.BufferedBytes() < before {
				row++
				return held
			}
		}
		t.Fatal("the budget never flushed")
		return 0
	}
	settle := func() {
		if err := up.wait(ctx); err != nil {
			t.Fatal(err)
		}
	}

	first := appendUntilFlush()
	if first <= limit {
		t.Errorf("first budget flush at %d bytes held, want it past the limit %d (nothing has shown what a flush adds yet)", first, limit)
	}
	if b.lead <= 0 {
		t.Fatalf("after the first flush the lead is %d, want what the flush added", b.lead)
	}
	lead := b.lead
	settle()
	for i := range 3 {
		at := appendUntilFlush()
		if at > limit || at+lead <= limit {
			t.Errorf("budget flush %d at %d bytes held: want it within %d (the lead) below the limit %d", i+2, at, lead, limit)
		}
		t.Logf("flush %d at %d held, lead %d, limit %d", i+2, at, lead, limit)
		if lead = b.lead; lead <= 0 || lead > int64(float64(limit)*maxBudgetLead) {
			t.Errorf("lead after flush %d: %d, want (0, %d]", i+2, lead, int64(float64(limit)*maxBudgetLead))
		}
		settle()
	}
}
