package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/checkpoint"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
)

// periodic runs time-based work: held DML past its age limit is released,
// and once the oldest open buffer reaches the file age limit, everything is
// flushed and checkpointed (a commit round).
func (r *runner) periodic(ctx context.Context, now time.Time) error {
	// Also here, not only every 1,024 records: a trickle of records (or
	// an idle source) must not leave the memory gauges at zero.
	r.cfg.Observer.Buffered(r.budget.dataBytes(), r.cfg.MaxBufferBytes)
	for _, k := range r.held.due(now, true) {
		r.log.Warn("hold time limit reached: releasing DML without refreshed metadata", "table", heldTable(k))
		if err := r.releaseKey(ctx, k); err != nil {
			return err
		}
	}
	since := now.Sub(r.lastCommit)
	holdOver := r.held.empty() || since >= r.writer.MaxAge()+r.cfg.HoldMaxAge
	if oldest, ok := r.writer.Oldest(); ok && now.Sub(oldest) >= r.writer.MaxAge() {
		if holdOver {
			return r.commit(ctx, "age")
		}
		// DML waits for metadata: the files due are written, and the
		// round, which would release it, waits as the interval round does.
		files, err := r.writer.FlushDue()
		if err != nil {
			return err
		}
		return r.upload(ctx, files)
	}
	if since >= r.writer.MaxAge() && r.commits.ReadPastCheckpoint() && holdOver {
		// Under steady load files roll by rows or bytes before any buffer
		// is MaxAge old, so the age rule alone never checkpointed (nor
		// acknowledged Kafka) until shutdown, and a crash re-read all of it.
		// While DML waits for metadata the round waits too, since a commit
		// releases it and the hold limits should decide how long it may
		// wait; but no longer than a hold may last: tables whose metadata
		// never comes would otherwise keep the hold from ever emptying.
		return r.commit(ctx, "interval")
	}
	return nil
}

// commit makes everything read so far durable, in the order the protocol
// needs: held records are released, every buffer is flushed, every file is
// uploaded, dead letters too (each after its intent); then the commit
// protocol checkpoints each partition (fenced) and only then tells the
// source.
func (r *runner) commit(ctx context.Context, reason string) error {
	// Passing the reject limit while released records are placed still
	// commits them all; the run then ends with the limit's error.
	var limit error
	for _, k := range r.held.keys() {
		if err := r.releaseKey(ctx, k); err != nil {
			if !errors.Is(err, ErrTooManyRejects) {
				return err
			}
			limit = err
		}
	}
	files, err := r.writer.FlushAll(reason)
	if err != nil {
		return err
	}
	r.budget.flushed()
	if err := r.upload(ctx, files); err != nil {
		return err
	}
	if r.ice != nil {
		if err := r.ice.documentIceberg(ctx, r.schemaDocs); err != nil {
			return err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(r.schemaDocs)) {
		if err := r.up.sendObject(ctx, k, r.schemaDocs[k]); err != nil {
			return err // an earlier upload's failure, which names its object, or the run's end
		}
		delete(r.schemaDocs, k)
	}
	if err := r.sendDeadLetters(ctx); err != nil {
		return err // as above; their own upload's failure comes from wait
	}
	if err := r.up.wait(ctx); err != nil {
		return err
	}
	n, err := r.commits.Commit(ctx)
	if err != nil {
		return err
	}
	r.lastCommit = r.cfg.Now()
	if n > 0 {
		r.cfg.Observer.Checkpointed(r.cfg.Now())
		r.log.Info("checkpoint written", "reason", reason, "partitions", n)
	}
	r.cfg.Observer.Buffered(r.budget.dataBytes(), r.cfg.MaxBufferBytes)
	return limit
}

// filePartitioner is implemented by file sources: the partitions of
// their files, read to the end when the source ends.
type filePartitioner interface{ FilePartitions() []string }

// incompleteReporter is implemented by file sources: the records their
// files ended in, still being written, left for the next run.
type incompleteReporter interface {
	IncompleteRecords() []source.IncompleteRecord
}

// warnDDLWithoutMetadata says once, at the end of a run, which tables had
// DDL records but never got OBJECT_METADATA: such DDL opens no version and
// would otherwise pass without a word.
func (r *runner) warnDDLWithoutMetadata() {
	var waiting []string
	for _, c := range r.cats.m {
		waiting = append(waiting, c.DDLWithoutMetadata()...)
	}
	if len(waiting) == 0 {
		return
	}
	slices.Sort(waiting)
	waiting = slices.Compact(waiting)
	r.log.Warn("DDL records arrived for tables that never got OBJECT_METADATA: they opened no schema version and changed nothing; the tables are written once their metadata comes",
		"tables", waiting[:min(len(waiting), 20)], "count", len(waiting))
}

// finish is the last commit of a run.
func (r *runner) finish(ctx context.Context) error {
	if ir, ok := r.cfg.Source.(incompleteReporter); ok {
		for _, rec := range ir.IncompleteRecords() {
			r.log.Warn("input file ends inside a record (no line ending, brackets left open), most likely one still being written: it is left for the next run, which reads it once it is complete",
				"file", rec.File, "line", rec.Line, "bytes", rec.Bytes)
		}
	}
	r.warnDDLWithoutMetadata()
	if fp, ok := r.cfg.Source.(filePartitioner); ok && r.sawEOF && !r.cats.perPartition {
		for _, name := range fp.FilePartitions() {
			lastRead, offset, found := int64(-1), int64(-1), false
			if ps := r.commits.Partition(name); ps != nil {
				lastRead, offset, found = ps.LastRead(), ps.Offset(), ps.Found()
			} else if cp, ok, err := r.commits.Peek(ctx, name); err != nil {
				// A file emptied since the last run has no records to
				// bring its checkpoint in. Only loaded for the warning
				// below, not claimed: nothing of it is written. What was
				// read must be committed whatever this finds.
				r.log.Warn("could not check an input file's checkpoint at the end of the run", "partition", name, "error", err)
				continue
			} else {
				offset, found = cp.Offset, ok
			}
			if found && lastRead < offset {
				r.log.Warn("input ended before its checkpoint: the file was replaced or truncated since an earlier run, and what it holds now up to the checkpoint was skipped as already exported; delete its checkpoint to export it again",
					"partition", name, "last_offset", lastRead, "checkpoint_offset", offset,
					"checkpoint", checkpoint.Key(name))
			}
		}
	}
	return r.commit(ctx, "shutdown")
}

// shutdownTimeout bounds a shutdown: from the stop (or, for a run whose
// source ended, the start of its last commit) to the end of that commit.
const shutdownTimeout = 2 * time.Minute

// shutdown is the context of the work a run finishes after it is told to
// stop: the stop does not end it (the record in hand is handled, buffers
// are flushed, files uploaded and checkpointed), shutdownTimeout after
// the stop does, uploads included, so that a store that does not answer
// cannot hold the process. What is not uploaded by then is not
// checkpointed: the next run writes it again.
type shutdown struct {
	ctx     context.Context
	cancel  context.CancelCauseFunc
	timeout time.Duration
	unwatch func() bool

	mu    sync.Mutex
	timer *time.Timer
}

func newShutdown(run context.Context, timeout time.Duration) *shutdown {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(run))
	s := &shutdown{ctx: ctx, cancel: cancel, timeout: timeout}
	s.unwatch = context.AfterFunc(run, s.begin)
	return s
}

// begin starts the deadline, once.
func (s *shutdown) begin() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timer == nil {
		s.timer = time.AfterFunc(s.timeout, func() {
			s.cancel(fmt.Errorf("the shutdown deadline (%s) passed", s.timeout))
		})
	}
}

// end releases the deadline's timer and context.
func (s *shutdown) end() {
	s.unwatch()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timer != nil {
		s.timer.Stop()
	}
	s.cancel(context.Canceled)
}
