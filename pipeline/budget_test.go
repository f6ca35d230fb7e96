package pipeline_test

import (
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/gen"
	"github.com/lakehouse-exporter/lakehouse-exporter/pipeline"
	"github.com/lakehouse-exporter/lakehouse-exporter/store"
)

// TestBufferBudgetBoundsMemoryAcrossManyTables: with many tables and a
// small budget, the open buffers never hold more than the budget, the
// largest are flushed first, and every record still lands once.
func TestBufferBudgetBoundsMemoryAcrossManyTables(t *testing.T) {
	in := filepath.Join(t.TempDir(), "many.jsonl")
	st := generate(t, in, gen.Options{Records: 20000, Tables: 30, Seed: 4})
	dir := t.TempDir()
	const budget = 6 << 20
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

// TestBudgetTooSmallForTheTablesKeepsFilesWhole: hundreds of tables under
// a budget smaller than their nearly empty buffers take together. The
// budget cannot be kept, but files must not shrink to a record or two
// each (a file, an intent and an upload per record); the run warns and
// every record still lands once.
func TestBudgetTooSmallForTheTablesKeepsFilesWhole(t *testing.T) {
	in := filepath.Join(t.TempDir(), "tiny-budget.jsonl")
	generate(t, in, gen.Options{Records: 30000, Tables: 300, Seed: 8})
	dir := t.TempDir()
	sum, err := export(t, dir, func(c *pipeline.Config) { c.MaxBufferBytes = 4 << 20 }, in)
	if err != nil {
		t.Fatal(err)
	}
	if rowsPerFile := 30000 / max(1, sum.Files); rowsPerFile < 50 {
		t.Errorf("%d files for 30000 records (%d rows a file): the budget flushed files of a few rows", sum.Files, rowsPerFile)
	}
	rows := query(t, openDuck(t), `SELECT count(*), count(DISTINCT pos) FROM `+lakeGlob(dir, ""))
	if got := rowStrings(rows)[0]; got != "30000|30000" {
		t.Errorf("rows|distinct pos = %s", got)
	}
	t.Logf("%d files, peak held %d", sum.Files, sum.PeakHeldBytes)
}

// TestSlowStoreStopsReadingInsteadOfGrowing: when uploads cannot keep up,
// reading waits for them, so measured memory stays within the budget even
// though the input could be read much faster than it is stored.
func TestSlowStoreStopsReadingInsteadOfGrowing(t *testing.T) {
	in := filepath.Join(t.TempDir(), "slow.jsonl")
	generate(t, in, gen.Options{Records: 20000, Tables: 8, Seed: 5})
	dir := t.TempDir()
	const budget = 2 << 20
	local, err := store.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := export(t, "", func(c *pipeline.Config) {
		c.MaxBufferBytes = budget
		// 15ms a put, like a distant or throttled bucket
		c.Store = &countingStore{Store: local, onPut: func(string, int64) { time.Sleep(15 * time.Millisecond) }}
		c.UploadWorkers = 1
	}, in)
	if err != nil {
		t.Fatal(err)
	}
	if sum.PeakHeldBytes > budget {
		t.Errorf("peak held %d bytes with a slow store, budget %d", sum.PeakHeldBytes, budget)
	}
	rows := query(t, openDuck(t), `SELECT count(*), count(DISTINCT pos) FROM `+lakeGlob(dir, ""))
	if got := rowStrings(rows)[0]; got != "20000|20000" {
		t.Errorf("rows|distinct pos = %s", got)
	}
	t.Logf("peak held %d of %d, %d files", sum.PeakHeldBytes, budget, sum.Files)
}

// TestFilesFlushedTogetherShareOneIntent: a budget flush or a commit that
// closes the files of many tables writes one intent for them, not one
// per file, and the lake still holds every record once.
func TestFilesFlushedTogetherShareOneIntent(t *testing.T) {
	in := filepath.Join(t.TempDir(), "many.jsonl")
	generate(t, in, gen.Options{Records: 6000, Tables: 40, Seed: 6})
	dir := t.TempDir()
	local, err := store.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	var intentPuts, dataPuts atomic.Int64
	counter := &countingStore{Store: local, onPut: func(key string, _ int64) {
		switch {
		case strings.HasPrefix(key, "_checkpoints/intents/"):
			intentPuts.Add(1)
		case strings.HasSuffix(key, ".parquet"):
			dataPuts.Add(1)
		}
	}}
	if _, err := export(t, "", func(c *pipeline.Config) { c.Store = counter; c.MaxBufferBytes = 4 << 20 }, in); err != nil {
		t.Fatal(err)
	}
	files, intents := dataPuts.Load(), intentPuts.Load()
	if files < 40 || intents*4 > files {
		t.Errorf("%d data files, %d intents: files flushed together should share intents", files, intents)
	}
	rows := query(t, openDuck(t), `SELECT count(*), count(DISTINCT pos) FROM `+lakeGlob(dir, ""))
	if got := rowStrings(rows)[0]; got != "6000|6000" {
		t.Errorf("rows|distinct pos = %s", got)
	}
	t.Logf("%d data files, %d intents", files, intents)
}

// peakAllocator records the most its allocator held at once.
type peakAllocator struct {
	memory.Allocator
	cur, peak atomic.Int64
}

func (a *peakAllocator) add(n int) {
	c := a.cur.Add(int64(n))
	for p := a.peak.Load(); c > p && !a.peak.CompareAndSwap(p, c); p = a.peak.Load() {
	}
}

func (a *peakAllocator) Allocate(size int) []byte {
	a.add(size)
	return a.Allocator.Allocate(size)
}

func (a *peakAllocator) Reallocate(size int, b []byte) []byte {
	a.add(size - len(b))
	return a.Allocator.Reallocate(size, b)
}

func (a *peakAllocator) Free(b []byte) {
	a.add(-len(b))
	a.Allocator.Free(b)
}

// TestBurstAmongManyTablesStaysInTheBudget: with many buffers open, rows
// are held packed, a third of the columns they become when their file is
// encoded. One table's burst must not gather more packed rows than the
// budget can unpack: the Arrow memory, measured at every allocation,
// stays within the budget, and every record lands once.
func TestBurstAmongManyTablesStaysInTheBudget(t *testing.T) {
	dir := t.TempDir()
	many := filepath.Join(dir, "a-many.jsonl")
	hot := filepath.Join(dir, "b-hot.jsonl")
	generate(t, many, gen.Options{Records: 400, Tables: 40, Seed: 5}) // opens 40 buffers that stay open
	generate(t, hot, gen.Options{Records: 40000, Tables: 1, Seed: 6})
	const budget = 8 << 20
	var mem *peakAllocator
	out := t.TempDir()
	sum, err := export(t, out, func(c *pipeline.Config) {
		c.MaxBufferBytes = budget
		mem = &peakAllocator{Allocator: c.Writer.Allocator}
		c.Writer.Allocator = mem
	}, many, hot)
	if err != nil {
		t.Fatal(err)
	}
	if peak := mem.peak.Load(); peak > budget {
		t.Errorf("Arrow memory peaked at %d bytes, budget %d", peak, budget)
	}
	rows := query(t, openDuck(t), `SELECT count(*), count(DISTINCT src_partition || pos) FROM `+lakeGlob(out, ""))
	if got := rowStrings(rows)[0]; got != "40400|40400" {
		t.Errorf("rows|distinct positions = %s", got)
	}
	t.Logf("peak Arrow memory %d of %d, peak held %d, %d files", mem.peak.Load(), budget, sum.PeakHeldBytes, sum.Files)
}
