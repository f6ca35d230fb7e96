package maintain_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/gen"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/kafkatest"
	"github.com/lakehouse-exporter/lakehouse-exporter/maintain"
	"github.com/lakehouse-exporter/lakehouse-exporter/pipeline"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
	"github.com/lakehouse-exporter/lakehouse-exporter/writer"
)

// TestCompactionBesideAnAppendingExporter: an exporter consumes a Kafka
// topic continuously (kfake), committing a round to the tables (SQLite
// catalog) every few hundred milliseconds while the stream is produced
// in slices; maintenance passes run in a loop on the same tables at the
// same time. Afterwards, through the catalog, every change of the stream
// is present exactly once.
func TestCompactionBesideAnAppendingExporter(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an exporter and maintenance side by side")
	}
	var lines [][]byte
	st, err := gen.Write(io.Discard, gen.Options{Records: 3000, Tables: 3, Columns: 6, Seed: 34, DDLEvery: 700,
		UpdateRatio: 0.3, DeleteRatio: 0.2, Track: true, Lines: &lines, Start: time.Date(2026, 7, 13, 23, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	const topic = "cdc"
	addrs := kafkatest.Start(t, topic, 2)
	l := newLake(t)
	src, err := source.NewKafka(source.KafkaConfig{Brokers: addrs, Topics: []string{topic}, Group: "g", MaxWait: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dec, _ := cdc.NewGoldenGate(cdc.GoldenGateNames{})
	cat := l.cat
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	exported := make(chan error, 1)
	go func() {
		_, err := pipeline.Run(ctx, pipeline.Config{Source: src, Store: l.st, Decoder: dec, MaxRejects: 0, DecodeWorkers: -1,
			Schema: arrowschema.Options{BeforeImage: true}, Catalog: &cat,
			Writer: writer.Config{MaxRows: 60, MaxAge: 200 * time.Millisecond}})
		exported <- err
	}()
	produced := make(chan struct{})
	go func() {
		defer close(produced)
		for i := 0; i < len(lines); i += 100 {
			kafkatest.Produce(t, addrs, topic, lines[i:min(i+100, len(lines))], kafkatest.TableKey)
			time.Sleep(150 * time.Millisecond) // slices, so rounds land between passes
		}
	}()
	p := l.open(t)
	var during maintain.Summary
	deadline := time.Now().Add(2 * time.Minute)
	for {
		cfg := l.config(t, p)
		cfg.TargetFileBytes = 1 << 20
		sum, err := maintain.Run(ctx, cfg)
		if err != nil {
			t.Fatalf("maintenance beside the exporter: %v", err)
		}
		during.FilesRewritten += sum.FilesRewritten
		during.Groups += sum.Groups
		select {
		case <-produced:
			if countRows(t, p, st.TableNames) >= int64(st.DML) {
				goto done
			}
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the exporter did not publish the stream's %d changes in 2 minutes", st.DML)
		}
	}
done:
	stop()
	if err := <-exported; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("exporter: %v", err)
	}
	if during.Groups == 0 {
		t.Fatalf("no compaction committed while the exporter ran: %+v", during)
	}
	if _, err := maintain.Run(context.Background(), l.config(t, p)); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, name := range st.TableNames {
		at, err := p.Read(context.Background(), name, []string{"pos", "op_type"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		tr := array.NewTableReader(at, -1)
		for tr.Next() {
			rec := tr.RecordBatch()
			pos := rec.Column(rec.Schema().FieldIndices("pos")[0]).(*array.String)
			for i := range pos.Len() {
				seen[pos.Value(i)]++
			}
		}
		tr.Release()
		at.Release()
	}
	for pos, want := range st.Expected {
		if seen[pos] != 1 {
			t.Errorf("change at %s (%s %s): %d times in the tables, want once", pos, want.Table, want.Op, seen[pos])
		}
	}
	if len(seen) != len(st.Expected) {
		t.Errorf("%d distinct changes in the tables, the stream has %d", len(seen), len(st.Expected))
	}
	t.Logf("compacted while the exporter ran: %d files in %d commits", during.FilesRewritten, during.Groups)
}

// countRows is the rows of the tables through the catalog.
func countRows(t *testing.T, p *tables.Publisher, names []string) int64 {
	var n int64
	for _, name := range names {
		at, err := p.Read(context.Background(), name, []string{"pos"}, 0)
		if err != nil {
			continue // not created yet
		}
		n += at.NumRows()
		at.Release()
	}
	return n
}
