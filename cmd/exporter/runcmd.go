package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/pipeline"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
	"github.com/robfig/cron/v3"
)

// tempCleaner is a store that can remove what crashed writes left behind.
type tempCleaner interface {
	RemoveStaleTemps(ctx context.Context) (int, error)
}

func (r *runCmd) execute(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) int {
	logger := newLogger(stderr, r.LogFormat, r.LogLevel)
	cfg, openSrc, err := r.pipelineConfig(stdin, logger)
	if ue := (unusableSinkError{}); errors.As(err, &ue) {
		printErr(stderr, "exporter: --sink unusable:", err)
		return exitFailure
	}
	if err != nil {
		printErr(stderr, "exporter: bad configuration:", err)
		return exitUsage
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// The budget bounds the data; without a limit the Go collector
		// lets garbage grow the heap to twice what is live, so the
		// process would use twice the budget. With it, the collector
		// works harder near the budget instead (measured: about 8% more
		// time on the benchmark stream).
		budget := r.MaxBufferBytes
		if budget <= 0 {
			budget = 256 << 20
		}
		limit := max(budget, 64<<20)
		debug.SetMemoryLimit(limit)
		if cfg.Catalog != nil {
			// The tables' states and the commits in flight are outside
			// the budget: held to it, the collector ran almost without
			// pause once 500 tables were loaded (measured: a --once run
			// of the benchmark stream over 500 tables took 19.4 s, 11.1 s
			// with 128 MiB more; 9.0 s without a catalog).
			withTables := func(n int) { debug.SetMemoryLimit(limit + catalogWorkBytes + int64(n)*tableStateBytes) }
			withTables(0)
			cfg.Catalog.TablesHeld = withTables
		}
	}
	stopProfiles, err := r.profileFlags.start(logger)
	if err != nil {
		printErr(stderr, "exporter:", err)
		return exitUsage
	}
	defer stopProfiles()
	if err := checkSink(ctx, cfg.Store); err != nil {
		logger.Error("sink is not usable", "sink", cfg.Store.String(), "error", err)
		printErr(stderr, "exporter:", err)
		return exitFailure
	}
	if cfg.Catalog != nil {
		// Each drain checks it too; checked first here, a scheduled run
		// or its maintenance passes do not go on through another catalog
		// than the lake's (where a pass would take the lake's files for
		// orphans) while only the drains fail.
		if err := pipeline.CheckPublishedTo(ctx, cfg.Store, cfg.Catalog); err != nil {
			printErr(stderr, "exporter:", err)
			if errors.Is(err, pipeline.ErrOtherCatalog) {
				return exitUsage
			}
			return exitFailure
		}
	}
	if tc, ok := cfg.Store.(tempCleaner); ok {
		if n, err := tc.RemoveStaleTemps(ctx); err != nil {
			logger.Warn("cannot remove the temporary files of interrupted runs; they are harmless and ignored", "sink", cfg.Store.String(), "error", err)
		} else if n > 0 {
			logger.Info("removed temporary files that interrupted runs left", "sink", cfg.Store.String(), "files", n)
		}
	}
	if r.MetricsAddr != "" {
		stopServer, err := r.serveMetrics(ctx, &cfg, logger)
		if err != nil {
			printErr(stderr, "exporter: --metrics-addr:", err)
			return exitUsage
		}
		defer stopServer()
	}
	if r.MaintainSchedule != "" {
		stop, err := r.scheduleMaintenance(ctx, cfg, logger)
		if err != nil {
			printErr(stderr, "exporter: --maintain-schedule:", err)
			return exitUsage
		}
		defer stop()
	}
	if r.Schedule != "" {
		return r.scheduled(ctx, cfg, openSrc, logger, stdout, stderr)
	}
	if err := r.drain(ctx, cfg, openSrc, r.Once, logger, stdout); err != nil {
		printErr(stderr, "exporter:", err)
		switch {
		case errors.Is(err, errStoppedEarly):
			return exitInterrupted
		case errors.Is(err, pipeline.ErrCatalogExpected), errors.Is(err, pipeline.ErrOtherCatalog):
			return exitUsage
		}
		return exitFailure
	}
	return exitOK
}

// errStoppedEarly is drain's error when a stop came before the end of a
// source that ends.
var errStoppedEarly = errors.New("stopped before the end of the input")

// What the memory limit allows, beside the budget, when tables are
// published to a catalog: the commits in flight (a round commits 8 tables
// at once, each building its manifests in memory) and the last state of
// each table the publisher keeps (about 150 KB each, measured; twice
// that leaves the collector room).
const (
	catalogWorkBytes = 64 << 20
	tableStateBytes  = 256 << 10
)

// stopPosition tells where a run stopped: the records read, the input
// bytes read of its size (files), and each partition's last offset read
// and checkpointed (files: lines).
func stopPosition(sum pipeline.Summary) []any {
	args := []any{"records_read", sum.Records}
	if sum.BytesRead > 0 || sum.BytesTotal > 0 {
		args = append(args, "bytes_read", sum.BytesRead)
		if sum.BytesTotal > 0 {
			args = append(args, "bytes_total", sum.BytesTotal)
		}
	}
	type position struct {
		Name         string `json:"name"`
		LastRead     int64  `json:"last_read"`
		Checkpointed int64  `json:"checkpointed"`
	}
	var ps []position
	for _, p := range sum.Positions {
		ps = append(ps, position{p.Partition, p.LastRead, p.Checkpointed})
	}
	return append(args, "partitions", ps)
}

// drain runs the pipeline once over a freshly opened source. Shutdown on
// SIGINT/SIGTERM, in order: stop fetching, flush every buffer, upload,
// write the checkpoints, commit the Kafka offsets, leave the group.
func (r *runCmd) drain(ctx context.Context, cfg pipeline.Config, openSrc func(once bool) (source.Source, error), once bool, logger *slog.Logger, stdout io.Writer) error {
	src, err := openSrc(once)
	if err != nil {
		return err
	}
	defer src.Close()
	cfg.Source = src
	if r.stall != nil {
		r.stall.draining(true)
		defer r.stall.draining(false) // between drains nothing can stall
	}
	logger.Info("export starting", "source", redactSource(r.Source), "sink", cfg.Store.String(), "format", r.Format, "once", once)
	sum, err := pipeline.Run(ctx, cfg)
	// A file source always ends; Kafka only in a drain, and a continuous
	// one is stopped by a signal as its normal end.
	_, files := src.(*source.Files)
	ends := once || files
	printSummary(stdout, sum, ends, err != nil)
	if err != nil {
		logger.Error("export failed", append([]any{"error", err, "input_finished", sum.Ended}, stopPosition(sum)...)...)
		if ends && !sum.Ended && (errors.Is(err, pipeline.ErrTooManyRejects) || errors.Is(err, pipeline.ErrReadInput)) {
			// The reject limit and a failing input stop a run as a signal
			// does: what was read is durable, its rejects included, which
			// a rerun skips and does not count again.
			return fmt.Errorf("%w; the run stopped before the end of the input after %d records: what was read is written and checkpointed, and the same command run again goes on from there", err, sum.Records)
		}
		return err
	}
	if ends && !sum.Ended {
		logger.Warn("export stopped before the end of the input: what was read is written and checkpointed; run the same command again to finish",
			stopPosition(sum)...)
		return fmt.Errorf("%w after %d records (see the summary and the log for each partition's position); what was read is written and checkpointed: run the same command again to finish", errStoppedEarly, sum.Records)
	}
	logger.Info("export finished", "records", sum.Records, "rejected", sum.Rejected, "files", sum.Files, "seconds", sum.Elapsed.Seconds())
	return nil
}

// cronParser reads --schedule and --maintain-schedule.
var cronParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// scheduled keeps the process up and drains the source on every tick of
// the cron schedule; a tick that comes while a drain still runs is skipped.
func (r *runCmd) scheduled(ctx context.Context, cfg pipeline.Config, openSrc func(bool) (source.Source, error), logger *slog.Logger, stdout, stderr io.Writer) int {
	loc, err := time.LoadLocation(r.ScheduleTimezone)
	if err != nil {
		printErr(stderr, "exporter: --schedule-timezone:", err)
		return exitUsage
	}
	sched, err := cronParser.Parse(r.Schedule)
	if err != nil {
		printErr(stderr, "exporter: --schedule:", err)
		return exitUsage
	}
	c := cron.New(cron.WithLocation(loc), cron.WithChain(cron.SkipIfStillRunning(cron.DiscardLogger)))
	var cutShort atomic.Bool // the stop came during a drain
	c.Schedule(sched, cron.FuncJob(func() {
		if ctx.Err() != nil {
			return
		}
		err := r.drain(ctx, cfg, openSrc, true, logger, stdout)
		switch {
		case errors.Is(err, errStoppedEarly):
			cutShort.Store(true) // drain logged where it stopped
		case err != nil:
			logger.Error("scheduled drain failed; the next tick tries again", "error", err)
		}
	}))
	logger.Info("waiting for the schedule", "schedule", r.Schedule, "timezone", loc.String(), "next", sched.Next(time.Now().In(loc)))
	c.Start()
	<-ctx.Done()
	<-c.Stop().Done() // let a running drain finish its shutdown
	if cutShort.Load() {
		printErr(stderr, "exporter: the stop came during a drain, before the end of its input; what was read is written and checkpointed: the next start finishes it")
		return exitInterrupted
	}
	return exitOK
}
