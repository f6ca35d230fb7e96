package pipeline

import (
	"context"
	"log/slog"
	"runtime"

	"github.com/lakehouse-exporter/lakehouse-exporter/writer"
)

// dataShare is the share of MaxBufferBytes the data may hold; the rest is
// headroom for records being decoded, garbage not yet collected and the
// runtime, so that the process as a whole stays near the budget.
const dataShare = 0.45

// budgetKeep is the share of the buffered bytes a budget flush keeps: the
// largest buffers are flushed until only this much is left. Flushing a
// tenth at a time lets every buffer grow nearly to the size the budget
// allows before it is written: flushing half at a time wrote the largest
// half of the buffers together, many of them half grown (500 tables under
// 256 MiB: 3,450 files instead of 4,500 for the same 2M records, at the
// same peak RSS). A flush still closes a file per CPU at least (but no
// more than half the open buffers): reading waits while the files encode,
// and with a few large tables a tenth is a single file, which left a core
// idle for its encoding (the 4-table stream ran 40% longer).
const budgetKeep = 0.9

// maxBudgetLead bounds how early (as a share of the data's budget) a
// flush starts, so that files stay at least half the size the budget
// allows: with four tables one flush takes more than half the data.
// Measured on the benchmark streams against flushing at the budget: 4
// tables 41 files instead of 28 (output 0.8% larger), 1.06–1.16× the
// records/s in three of four alternating pairs; 500 tables 1.04 and
// 1.09×, with lower peak RSS.
const maxBudgetLead = 0.5

// minBudgetFileBytes is the smallest buffer (by the writer's estimate,
// about a hundred rows of a typical table) the budget flushes: each
// buffer's builders hold a few KiB even when nearly empty, and with
// hundreds of tables under a small budget flushing below this wrote a file
// per record or two.
const minBudgetFileBytes = 64 << 10

// budget keeps the memory the data holds (open buffers measured by the
// counting allocator, files being encoded, encoded files waiting for
// upload) under its share of Config.MaxBufferBytes: past it the largest
// buffers are flushed, and reading waits for uploads.
type budget struct {
	max    int64 // Config.MaxBufferBytes
	mem    *countingAllocator
	up     *uploader
	writer *writer.Writer
	log    *slog.Logger

	peak    int64 // the most the data held at once, measured
	warned  bool
	retryAt int64 // the writer's buffered estimate at which to look for a buffer to flush again
	lead    int64 // how far below the budget to flush: what the last budget flush added
}

func newBudget(maxBytes int64, mem *countingAllocator, up *uploader, w *writer.Writer, log *slog.Logger) *budget {
	return &budget{max: maxBytes, mem: mem, up: up, writer: w, log: log}
}

// flushed says every buffer was flushed (a commit round): the next
// budget check may look for one to flush at once.
func (b *budget) flushed() { b.retryAt = 0 }

// dataBytes is the memory the data holds now.
func (b *budget) dataBytes() int64 {
	return b.mem.inUse.Load() + b.up.encoded.Load() + b.up.encoding.Load()
}

// keepBudget keeps the data's memory under its share of the budget. When
// most of it sits in open buffers, the largest are flushed first (so that
// many small tables keep filling whole files); then reading waits until
// encoding and uploading have freed enough: a slow store stops the input
// instead of growing the process.
func (b *budget) keep(ctx context.Context) error {
	limit := int64(float64(b.max) * dataShare)
	held := b.dataBytes()
	b.peak = max(b.peak, held)
	// A flush adds its files' memory again while they encode, so flushing
	// at the limit stopped reading until they were done. Flushing early,
	// by what the last flush added, lets them encode while reading goes on.
	early := b.up.inflight.Load() == 0 && held+b.lead > limit
	if held <= limit && !early {
		return nil
	}
	if open := held - b.up.inflight.Load(); open > limit/2 && b.writer.BufferedBytes() >= b.retryAt {
		minFiles := min(runtime.GOMAXPROCS(0), max(1, b.writer.OpenBuffers()/2))
		before := b.up.inflight.Load()
		files, err := b.writer.FlushLargest(int64(float64(b.writer.BufferedBytes())*budgetKeep), minBudgetFileBytes, minFiles, "budget")
		if uerr := b.up.send(ctx, files); err == nil {
			err = uerr
		}
		if err != nil {
			return err
		}
		if len(files) > 0 {
			b.lead = min(max(0, b.up.inflight.Load()-before), int64(float64(limit)*maxBudgetLead))
		}
		b.retryAt = 0
		if len(files) == 0 {
			// Every open buffer is below the smallest file worth writing;
			// looking for one again before they have grown would cost a
			// scan of all buffers per record.
			b.retryAt = b.writer.BufferedBytes() + minBudgetFileBytes
		}
		if len(files) == 0 && held > limit && b.up.inflight.Load() == 0 && !b.warned {
			// The budget cannot hold this many tables.
			b.warned = true
			b.log.Warn("memory budget too small for the open tables: buffers are kept past it rather than written as files of a few rows; raise --max-buffer-bytes",
				"budget", b.max, "held", held, "open_buffers", b.writer.OpenBuffers())
		}
	}
	for b.dataBytes() > limit && b.up.inflight.Load() > 0 {
		if err := b.up.waitProgress(ctx); err != nil {
			return err
		}
	}
	return nil
}
