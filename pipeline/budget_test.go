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
	st := generate(t, in, gen.Options{Records: 20000, Tables: 30, Seed: 4})
	dir := t.TempDir()
	const budget = 2 << 20
	sum, err := export(t, dir, func(c *pipeline.Config) { c.MaxBufferBytes = budget }, in)
	if err != nil {
		t.Fatal(err)
	}
	// Measured memory (Arrow buffers open, queued and being encoded, and
	// encoded files waiting) stays within the budget; the writer's own
	// estimate of its buffers is below that.
	if sum.PeakHeldBytes > budget || sum.PeakHeldBytes < budget/4 {
		t.Errorf("peak held %d bytes, budget %d", sum.PeakHeldBytes, budget)
	}
	if sum.PeakBufferedBytes > sum.PeakHeldBytes {
		t.Errorf("peak buffered estimate %d above the measured peak %d", sum.PeakBufferedBytes, sum.PeakHeldBytes)
	}
	if sum.Files <= len(st.TableNames) {
		t.Errorf("%d files for %d tables: the budget never flushed anything", sum.Files, len(st.TableNames))
	}
	rows := query(t, openDuck(t), `SELECT count(*), count(DISTINCT pos) FROM `+lakeGlob(dir, ""))
	if got := rowStrings(rows)[0]; got != "20000|20000" {
		t.Errorf("rows|distinct pos = %s", got)
	}
	t.Logf("budget %d: peak held %d, peak buffered estimate %d, %d files", budget, sum.PeakHeldBytes, sum.PeakBufferedBytes, sum.Files)
}
