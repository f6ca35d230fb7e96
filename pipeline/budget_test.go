package pipeline_test

import (
	"path/filepath"
	"testing"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/gen"
	"github.com/lakehouse-exporter/lakehouse-exporter/pipeline"
)

// TestBufferBudgetBoundsMemoryAcrossManyTables: with many tables and a
// small budget, the open buffers never hold more than the budget, the
// largest are flushed first, and every record still lands once.
func TestBufferBudgetBoundsMemoryAcrossManyTables(t *testing.T) {
	in := filepath.Join(t.TempDir(), "many.jsonl")
	st := generate(t, in, gen.Options{Records: 3000, Tables: 30, Seed: 4})
	dir := t.TempDir()
	const budget = 128 << 10
	sum, err := export(t, dir, func(c *pipeline.Config) { c.MaxBufferBytes = budget }, in)
	if err != nil {
		t.Fatal(err)
	}
	// one record may go past the budget before the flush it triggers
	if sum.PeakBufferedBytes > budget+4<<10 || sum.PeakBufferedBytes < budget {
		t.Errorf("peak buffered %d bytes, budget %d", sum.PeakBufferedBytes, budget)
	}
	if sum.Files <= len(st.TableNames) {
		t.Errorf("%d files for %d tables: the budget never flushed anything", sum.Files, len(st.TableNames))
	}
	rows := query(t, openDuck(t), `SELECT count(*), count(DISTINCT pos) FROM `+lakeGlob(dir, ""))
	if got := rowStrings(rows)[0]; got != "3000|3000" {
		t.Errorf("rows|distinct pos = %s", got)
	}
}
