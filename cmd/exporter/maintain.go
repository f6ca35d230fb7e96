package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/maintain"
	"github.com/lakehouse-exporter/lakehouse-exporter/metrics"
	"github.com/lakehouse-exporter/lakehouse-exporter/pipeline"
	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
	"github.com/lakehouse-exporter/lakehouse-exporter/writer"
	"github.com/robfig/cron/v3"
)

type maintainCmd struct {
	sinkFlags    `embed:""`
	catalogFlags `embed:""`

	TargetFileBytes int64         `help:"Compact data files smaller than this into files of at most this size (by the inputs' bytes), per table, partition and schema version." default:"134217728"`
	ExpireAfter     time.Duration `help:"Expire snapshots older than this (beyond --keep-snapshots) and delete the files only they referenced; 0 expires nothing. Time travel reaches back this far." default:"168h"`
	KeepSnapshots   int           `help:"Always keep this many of each table's newest snapshots." default:"10"`
	OrphanAge       time.Duration `help:"Delete files of the tables' folders that no snapshot and no pending intent references once they are this old; 0 removes no orphans. Keep it well above the longest commit round and compaction." default:"24h"`
	DryRun          bool          `help:"Report what would be compacted, expired and removed (orphans are listed in the log); change nothing."`
	Table           []string      `help:"Maintain only this source table (SALES.ORDERS). Repeatable; default every table of the sink."`
	Concurrency     int           `help:"Tables maintained at once; each holds one compacted file's rows in memory at a time." default:"4"`

	RowGroupRows     int64  `help:"Rows per Parquet row group of the compacted files (as run's)." default:"131072"`
	Compression      string `help:"Parquet compression of the compacted files (as run's): zstd, snappy, gzip or none." default:"zstd" enum:"zstd,snappy,gzip,none"`
	CompressionLevel int    `help:"Codec level (as run's); 0 picks zstd 1." default:"0"`
	ParquetEncoder   string `help:"Who writes the compacted files' pages (as run's): lean or arrow." default:"lean" enum:"lean,arrow"`
	IntEncoding      string `help:"64-bit integer encoding of the compacted files (as run's): delta or plain." default:"delta" enum:"delta,plain"`

	MetricsTextfile string `name:"metrics-textfile" help:"Write the pass's metrics (exporter_maintain_*: files rewritten, bytes before and after, snapshots expired, orphans removed, time per table) to this file in Prometheus' text format when it ends, for node_exporter's textfile collector." type:"path"`

	LogFormat    string `help:"Log format: auto (text on a terminal, JSON otherwise), text or json." default:"auto" enum:"auto,text,json"`
	LogLevel     string `help:"Log level: debug, info, warn or error." default:"info" enum:"debug,info,warn,error"`
	profileFlags `embed:""`
}

// errNoCatalog is maintain's refusal without --catalog.
var errNoCatalog = errors.New("maintain needs the Iceberg catalog the tables are published through: compaction replaces many small files by a few large ones, and only the tables' metadata lets readers switch from the old files to the new ones at one instant (without it a reader globbing the folders would see rows twice or not at all). Publish the tables with `exporter run --catalog hadoop|sql|rest|glue ...`, then give maintain the same --catalog flags (see docs/maintenance.md)")

func (c *maintainCmd) run(ctx context.Context, stdout, stderr io.Writer) int {
	logger := newLogger(stderr, c.LogFormat, c.LogLevel)
	if c.Catalog == "" {
		printErr(stderr, "exporter maintain:", errNoCatalog)
		return exitUsage
	}
	paceCollector(c.Concurrency, c.TargetFileBytes)
	stopProfiles, err := c.profileFlags.start(logger)
	if err != nil {
		printErr(stderr, "exporter maintain:", err)
		return exitUsage
	}
	defer stopProfiles()
	m := metrics.New()
	sum, err := c.pass(ctx, logger, maintainObserver{m})
	if c.MetricsTextfile != "" {
		if werr := m.WriteTextfile(c.MetricsTextfile); werr != nil {
			err = errors.Join(err, fmt.Errorf("write the metrics to %s: %w", c.MetricsTextfile, werr))
		}
	}
	if err != nil {
		printErr(stderr, "exporter maintain:", err)
		if errors.Is(err, pipeline.ErrOtherCatalog) {
			return exitUsage
		}
		return exitFailure
	}
	fmt.Fprintln(stdout, sum)
	return exitOK
}

// maintainObserver hands each table's pass to the metrics.
type maintainObserver struct{ m *metrics.Metrics }

func (o maintainObserver) TableMaintained(table string, s maintain.Summary) {
	o.m.TableMaintained(table, metrics.MaintainCounts{FilesRewritten: s.FilesRewritten, FilesWritten: s.FilesWritten,
		BytesBefore: s.BytesBefore, BytesAfter: s.BytesAfter, SnapshotsExpired: s.SnapshotsExpired, Orphans: s.Orphans, Took: s.Duration})
}

func (c *maintainCmd) pass(ctx context.Context, logger *slog.Logger, obs maintain.Observer) (maintain.Summary, error) {
	enc, err := writer.NewEncoder(writer.Config{Compression: c.Compression, CompressionLevel: c.CompressionLevel,
		RowGroupRows: c.RowGroupRows, IntEncoding: c.IntEncoding, Encoder: c.ParquetEncoder, Logger: logger})
	if err != nil {
		return maintain.Summary{}, err
	}
	st, err := c.openLake(ctx, logger)
	if err != nil {
		return maintain.Summary{}, err
	}
	cfg, err := c.config(st, tables.ByDay)
	if err != nil {
		return maintain.Summary{}, err
	}
	if err := pipeline.CheckPublishedTo(ctx, st, cfg); err != nil {
		// Through another catalog, every file of the lake is an orphan.
		return maintain.Summary{}, err
	}
	pub, err := tables.Open(ctx, *cfg, logger)
	if err != nil {
		return maintain.Summary{}, fmt.Errorf("open the Iceberg catalog: %w", err)
	}
	defer pub.Close()
	orphanAge := c.OrphanAge
	if orphanAge == 0 {
		orphanAge = -1
	}
	since, err := publishedSince(ctx, st, orphanAge > 0, logger)
	if err != nil {
		return maintain.Summary{}, err
	}
	if since.IsZero() {
		orphanAge = -1
	}
	keep := c.KeepSnapshots
	if keep < 1 {
		keep = 1
	}
	return maintain.Run(ctx, maintain.Config{Store: st, Publisher: pub, Encoder: enc, TargetFileBytes: c.TargetFileBytes,
		ExpireAfter: c.ExpireAfter, KeepSnapshots: keep, OrphanAge: orphanAge, PublishedSince: since, DryRun: c.DryRun, Tables: c.Table,
		Concurrency: c.Concurrency, Logger: logger, Observer: obs})
}

// publishedSince returns when the lake's tables began to be published
// (its catalog mark), or zero, with a warning if orphans were to be
// removed, when the lake has no mark: a lake whose publishing was stopped
// (its mark deleted) holds files that never reached the tables, which
// would pass for orphans.
func publishedSince(ctx context.Context, st pipeline.Store, removesOrphans bool, logger *slog.Logger) (time.Time, error) {
	since, marked, err := pipeline.PublishedSince(ctx, st)
	if err != nil {
		return time.Time{}, err
	}
	if !marked && removesOrphans {
		logger.Warn("orphan files are not removed: the lake has no catalog mark (_checkpoints/iceberg-catalog.json), so files exported without the catalog cannot be told from orphans; an exporter run with the catalog marks it")
	}
	return since, nil
}

// paceCollector sets the Go collector's pace for a maintenance pass,
// unless GOGC or GOMEMLIMIT says otherwise. A pass reads many small files
// and drops each one's reader buffers at once, while what it keeps (a bin
// per table being compacted) is small: at the default pace (collect when
// the heap doubles) the collector ran every few files and took about a
// fifth of the pass's CPU (measured on BenchmarkMaintainPass). Collecting
// when the heap has grown fivefold, under a limit of what the bins may
// hold (a bin of Parquet bytes takes a few times that in Arrow, twice
// while it is sorted), keeps the heap bounded either way.
func paceCollector(concurrency int, targetFileBytes int64) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(400)
	debug.SetMemoryLimit(max(1<<30, int64(max(concurrency, 1))*targetFileBytes*8))
}

// scheduleMaintenance runs a maintenance pass with exporter maintain's
// defaults on each tick of --maintain-schedule, until ctx ends; stop
// waits for a running pass.
func (r *runCmd) scheduleMaintenance(ctx context.Context, cfg pipeline.Config, logger *slog.Logger) (stop func(), err error) {
	if cfg.Catalog == nil {
		return nil, errors.New("maintenance needs the Iceberg catalog: give --catalog too")
	}
	st, ok := cfg.Store.(maintain.Store)
	if !ok {
		return nil, fmt.Errorf("the sink %s cannot be maintained", cfg.Store.String())
	}
	loc, err := time.LoadLocation(r.ScheduleTimezone)
	if err != nil {
		return nil, err
	}
	sched, err := cronParser.Parse(r.MaintainSchedule)
	if err != nil {
		return nil, err
	}
	enc, err := writer.NewEncoder(writer.Config{Compression: r.Compression, CompressionLevel: r.CompressionLevel,
		RowGroupRows: r.RowGroupRows, IntEncoding: r.IntEncoding, Encoder: r.ParquetEncoder, Logger: logger})
	if err != nil {
		return nil, err
	}
	log := logger.With("job", "maintain")
	c := cron.New(cron.WithLocation(loc), cron.WithChain(cron.SkipIfStillRunning(cron.DiscardLogger)))
	c.Schedule(sched, cron.FuncJob(func() {
		if ctx.Err() != nil {
			return
		}
		tcfg := *cfg.Catalog
		tcfg.TablesHeld = nil // the export's tables set the memory limit; a pass holds a few at a time
		pub, err := tables.Open(ctx, tcfg, log)
		if err != nil {
			log.Error("maintenance pass not run: cannot open the Iceberg catalog; the next tick tries again", "error", err)
			return
		}
		defer pub.Close()
		var obs maintain.Observer
		if m, ok := cfg.Observer.(*metrics.Metrics); ok { // --metrics-addr: the exporter_maintain_* series too
			obs = maintainObserver{m}
		}
		since, err := publishedSince(ctx, st, true, log)
		if err != nil {
			log.Error("maintenance pass not run: cannot read the lake's catalog mark; the next tick tries again", "error", err)
			return
		}
		orphanAge := time.Duration(0) // the default
		if since.IsZero() {
			orphanAge = -1
		}
		sum, err := maintain.Run(ctx, maintain.Config{Store: st, Publisher: pub, Encoder: enc,
			ExpireAfter: 168 * time.Hour, KeepSnapshots: 10, OrphanAge: orphanAge, PublishedSince: since, Logger: log, Observer: obs})
		if err != nil {
			log.Error("maintenance pass failed; the next tick tries again", "error", err, "summary", sum.String())
			return
		}
		log.Info("maintenance pass done", "summary", sum.String())
	}))
	c.Start()
	return func() { <-c.Stop().Done() }, nil
}
