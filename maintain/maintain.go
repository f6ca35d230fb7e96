// Package maintain keeps the Iceberg tables the exporter publishes fit to
// query: it compacts small data files, expires old snapshots and removes
// orphan files, safely beside a running exporter. One pass, per table:
//
//  1. Compact. The table is loaded, then the pending intents are listed
//     (in that order: a file current in the table whose intent is gone
//     was checkpointed before the listing). Current data files smaller
//     than the target and named by no pending intent (a round not yet
//     checkpointed may still be withdrawn by recovery) are grouped by
//     partition and folder (so by schema version), packed into bins of at
//     most the target's bytes, and each bin is rewritten as one file:
//     rows sorted by op_ts, src_partition, src_offset, encoded by the
//     exporter's own encoder with the inputs' schema and field IDs, in
//     the inputs' folder, named compact-*.parquet, its key/value metadata
//     naming the source ranges it holds (lakehouse.source_ranges, which
//     the checkpoint rebuild reads). The groups' new files replace their
//     old ones, and the snapshots older than ExpireAfter beyond the last
//     KeepSnapshots are expired, in one Iceberg commit per table (one
//     more for every CommitBytes rewritten: partial progress for a large
//     table) (tables.Publisher.Maintain), which retries on a concurrent append
//     and leaves out a group when one of its files is gone; the files of
//     a group left out are deleted.
//  2. Expire, in that same commit: iceberg-go's ExpireSnapshots removes
//     the snapshots and, once the commit landed, deletes the files only
//     they referenced; never a snapshot that holds a round a pending
//     intent names, which the exporter's retry of a commit whose response
//     was lost must still recognise by its round id
//     (the intents are listed after the table state the commit is built
//     on was loaded, so every such round of that state is known).
//  3. Remove orphans. The pending intents are listed, then iceberg-go
//     plans the orphans of the table's data folder (files no snapshot
//     references, older than OrphanAge); a Parquet file of a
//     schema_version folder that no pending intent names and that was
//     written after the table's first recorded commit is deleted (older
//     files may predate the catalog: they were exported without it).
//
// A crash anywhere leaves the table consistent: a commit either landed or
// not, and files written and never committed are orphans the next pass
// removes once they are OrphanAge old.
package maintain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"
	"github.com/lakehouse-exporter/lakehouse-exporter/checkpoint"
	"github.com/lakehouse-exporter/lakehouse-exporter/lakeview"
	"github.com/lakehouse-exporter/lakehouse-exporter/parquetenc"
	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
	"golang.org/x/sync/errgroup"
)

// Store is what a pass needs of the sink.
type Store interface {
	checkpoint.Store
	// String is the sink's URL (file:///DIR, s3://BUCKET/PREFIX): a data
	// file's Iceberg location is it, "/" and the file's key.
	String() string
}

// Observer is told what each table's pass did, for metrics.
type Observer interface {
	TableMaintained(table string, s Summary)
}

// Config is one pass. Zero values mean the documented defaults.
type Config struct {
	Store     Store
	Publisher *tables.Publisher
	// Encoder writes the compacted files; give it the options the
	// exporter runs with (compression, row groups) so the files match.
	Encoder *parquetenc.Encoder
	// TargetFileBytes: files smaller than it are compacted into files of
	// at most it (by the inputs' sizes). Default 128 MiB.
	TargetFileBytes int64
	// CommitBytes: a table's pass commits the groups it has rewritten
	// once their inputs reach this many bytes, so that a crash of a long
	// pass loses at most that much work; the rest (and the expiry) land
	// in its last commit. Default 8 × TargetFileBytes.
	CommitBytes int64
	// BinArrowBytes bounds the rows one compacted file is made from, by
	// their size in Arrow (the files' Parquet bytes say little of it: a
	// dictionary of a few long strings repeated on every row decodes to
	// hundreds of times its size). A bin whose rows pass it is written as
	// several files, each from consecutive inputs. Default 8 ×
	// TargetFileBytes, at most 1 GiB (an Arrow string column holds at
	// most 2 GiB; sorting holds the rows twice).
	BinArrowBytes int64
	// ExpireAfter: snapshots older than it may be expired. Zero: no
	// expiry.
	ExpireAfter time.Duration
	// KeepSnapshots is how many of the newest snapshots are always kept.
	// Default 1 (the current one); iceberg-go refuses fewer.
	KeepSnapshots int
	// OrphanAge: files younger than it are never orphans, whatever
	// references them (an exporter's upload may be under way, or a
	// compaction's commit). Default 24h; negative: no orphan removal.
	OrphanAge time.Duration
	// PublishedSince is when the lake's tables began to be published to
	// the catalog (the lake's catalog mark, pipeline.PublishedSince):
	// files older than it were exported before and are never orphans.
	// Zero: each table's earliest commit that its metadata still
	// records, which expiry moves on (then orphans older than the
	// expiry age are never removed).
	PublishedSince time.Time
	// DryRun reports what the pass would do and writes nothing.
	DryRun bool
	// Tables limits the pass to these source tables (SALES.ORDERS);
	// empty: every table of the sink's _schemas/.
	Tables []string
	// Concurrency is how many tables are maintained at once; memory
	// grows with it (each holds one output file's rows at a time) and
	// so does the catalog's load. Default 4.
	Concurrency int
	// Run names this pass in the files it writes; default a new id.
	Run       string
	Allocator memory.Allocator // default memory.DefaultAllocator
	Logger    *slog.Logger     // default: discard
	Observer  Observer         // default: none; called from several goroutines
}

// Summary is what a pass did, for one table or all.
type Summary struct {
	Tables           int
	FilesRewritten   int   // small files replaced
	FilesWritten     int   // compacted files committed
	BytesBefore      int64 // of the files replaced
	BytesAfter       int64 // of the files committed
	Rows             int64 // rows rewritten
	Groups           int   // groups (a partition's files of one schema version) compacted
	Commits          int   // maintenance commits that replaced files (one per table at most)
	GroupsGivenUp    int   // groups whose files were gone or whose commit failed
	SnapshotsExpired int
	Orphans          int   // orphan files removed (listed, in a dry run)
	OrphanBytes      int64 // their bytes
	Duration         time.Duration
	DryRun           bool // nothing was changed: the counts are what a pass would do
}

func (s *Summary) add(o Summary) {
	s.Tables += o.Tables
	s.FilesRewritten += o.FilesRewritten
	s.FilesWritten += o.FilesWritten
	s.BytesBefore += o.BytesBefore
	s.BytesAfter += o.BytesAfter
	s.Rows += o.Rows
	s.Groups += o.Groups
	s.Commits += o.Commits
	s.GroupsGivenUp += o.GroupsGivenUp
	s.SnapshotsExpired += o.SnapshotsExpired
	s.Orphans += o.Orphans
	s.OrphanBytes += o.OrphanBytes
}

// String is the summary line a pass prints.
func (s Summary) String() string {
	if s.DryRun {
		return fmt.Sprintf("dry run over %d tables in %s, nothing changed: would rewrite %d files into %d (%d rows, %d bytes); would expire %d snapshots; would remove %d orphans (%d bytes)",
			s.Tables, s.Duration.Round(time.Millisecond), s.FilesRewritten, s.FilesWritten, s.Rows, s.BytesBefore,
			s.SnapshotsExpired, s.Orphans, s.OrphanBytes)
	}
	return fmt.Sprintf("maintained %d tables in %s: %d files rewritten into %d (%d rows, %d → %d bytes) in %d groups and %d commits, %d groups given up; %d snapshots expired; %d orphans removed (%d bytes)",
		s.Tables, s.Duration.Round(time.Millisecond), s.FilesRewritten, s.FilesWritten, s.Rows, s.BytesBefore, s.BytesAfter,
		s.Groups, s.Commits, s.GroupsGivenUp, s.SnapshotsExpired, s.Orphans, s.OrphanBytes)
}

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	var problems []string
	if c.Store == nil {
		problems = append(problems, "no store")
	}
	if c.Publisher == nil {
		problems = append(problems, "no catalog: compaction swaps files atomically for readers through the tables' metadata, which only a catalog keeps; give --catalog (hadoop, sql, rest or glue) as the exporter's run was given")
	}
	if c.Encoder == nil {
		problems = append(problems, "no encoder")
	}
	if c.TargetFileBytes < 0 {
		problems = append(problems, "target-file-bytes must not be negative")
	}
	if c.ExpireAfter < 0 {
		problems = append(problems, "expire-after must not be negative")
	}
	if c.KeepSnapshots < 0 {
		problems = append(problems, "keep-snapshots must not be negative")
	}
	if len(problems) > 0 {
		return errors.New("maintain: " + strings.Join(problems, "; "))
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.TargetFileBytes == 0 {
		c.TargetFileBytes = 128 << 20
	}
	if c.CommitBytes <= 0 {
		c.CommitBytes = 8 * c.TargetFileBytes
	}
	if c.BinArrowBytes <= 0 {
		c.BinArrowBytes = min(8*c.TargetFileBytes, 1<<30)
	}
	if c.KeepSnapshots == 0 {
		c.KeepSnapshots = 1
	}
	if c.OrphanAge == 0 {
		c.OrphanAge = 24 * time.Hour
	}
	if c.Run == "" {
		c.Run = newRunID()
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 4
	}
	if c.Allocator == nil {
		c.Allocator = memory.DefaultAllocator
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Run makes one pass over the tables and returns what it did. A table
// that fails does not stop the others; the error names each.
func Run(ctx context.Context, cfg Config) (Summary, error) {
	if err := cfg.Validate(); err != nil {
		return Summary{}, err
	}
	cfg = cfg.withDefaults()
	start := time.Now()
	names := slices.Clone(cfg.Tables) // sorted below: the caller's stays as it is
	if len(names) == 0 {
		reg, err := lakeview.ReadRegistry(ctx, cfg.Store)
		if err != nil {
			return Summary{}, fmt.Errorf("maintain: read the tables of the sink's _schemas/: %w", err)
		}
		for name := range reg {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	var (
		mu    sync.Mutex // guards total, errs and done
		total Summary
		errs  []error
		done  int
	)
	pages := newRecyclingAllocator() // for every table's reads
	var g errgroup.Group
	g.SetLimit(cfg.Concurrency)
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			mu.Lock() // the passes started append to errs too
			errs = append(errs, err)
			mu.Unlock()
			break
		}
		g.Go(func() error {
			t := &tablePass{cfg: cfg, pages: pages, name: name, log: cfg.Logger.With("table", name)}
			tstart := time.Now()
			s, err := t.run(ctx)
			cfg.Publisher.Forget(name)
			s.Tables, s.Duration, s.DryRun = 1, time.Since(tstart), cfg.DryRun
			if cfg.Observer != nil {
				cfg.Observer.TableMaintained(name, s)
			}
			mu.Lock()
			defer mu.Unlock()
			done++
			attrs := []any{"progress", fmt.Sprintf("%d/%d", done, len(names)), "files_rewritten", s.FilesRewritten,
				"files_written", s.FilesWritten, "bytes_before", s.BytesBefore, "bytes_after", s.BytesAfter,
				"snapshots_expired", s.SnapshotsExpired, "orphans", s.Orphans, "dry_run", cfg.DryRun, "duration", s.Duration}
			if err != nil {
				errs = append(errs, fmt.Errorf("table %s: %w", name, err))
				t.log.Error("table maintenance failed", append(attrs, "error", err)...)
			} else {
				t.log.Info("table maintained", attrs...)
			}
			total.add(s)
			return nil
		})
	}
	g.Wait()
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	total.Duration, total.DryRun = time.Since(start), cfg.DryRun
	return total, errors.Join(errs...)
}

// tablePass is one table's pass.
type tablePass struct {
	cfg Config
	// pages allocates the Parquet page readers' buffers (recycle.go);
	// the rows read are Arrow arrays of cfg.Allocator.
	pages   memory.Allocator
	name    string
	log     *slog.Logger
	pending map[string]bool // keys pending intents name (pendingFiles)
	listed  time.Time       // when pending was listed
	// foreign is a data file of the table outside the sink, set when
	// none of its files is inside (compact): the sink is given another
	// way than the exporter's, and every file would pass for an orphan.
	foreign string
	// committed: a commit of this pass landed, at committedAt; after
	// the pending intents were listed (listed), the table the publisher
	// holds is a state on the far side of the listing, and expiry and
	// orphan removal need not load the table again (tableAfterListing).
	committed   bool
	committedAt time.Time
	// locationsChecked: compaction saw the table's files and checked
	// that they are under the sink (foreign); orphan removal needs that.
	locationsChecked bool
}

// pendingThenTable lists the pending intents and then takes the table,
// the order expiry and orphan removal need (compaction needs the other
// one; see the package comment).
func (t *tablePass) pendingThenTable(ctx context.Context) (map[string]bool, *table.Table, error) {
	pending, err := t.pendingFiles(ctx)
	if err != nil {
		return nil, nil, err
	}
	tbl, err := t.tableAfterListing(ctx)
	if err != nil {
		return nil, nil, err
	}
	return pending, tbl, nil
}

// tableAfterListing returns the table as it was at some instant after the
// pending intents were listed: the state this pass's last commit left in
// the publisher, or a fresh load. Loading reads and parses the whole
// metadata file, which holds every snapshot: a load per step was a
// large share of a small table's pass.
func (t *tablePass) tableAfterListing(ctx context.Context) (*table.Table, error) {
	if t.committed && t.committedAt.After(t.listed) {
		return t.cfg.Publisher.CachedTable(ctx, t.name)
	}
	return t.cfg.Publisher.LoadTable(ctx, t.name)
}

func (t *tablePass) run(ctx context.Context) (Summary, error) {
	var s Summary
	if _, err := t.cfg.Publisher.Identifier(t.name); errors.Is(err, tables.ErrBadName) {
		// Its records go to the dead letters; a table an older version
		// published under such a name is left alone, as its locations
		// may be read as another table's.
		t.log.Warn("not maintained: the name cannot be an Iceberg table here", "error", err)
		return s, nil
	}
	var errs []error
	if err := t.compact(ctx, &s); err != nil {
		if isNoSuchTable(err) {
			t.log.Info("no Iceberg table: nothing to maintain (the table was never published through this catalog)")
			return s, nil
		}
		errs = append(errs, fmt.Errorf("compact and expire: %w", err))
	}
	if t.cfg.ExpireAfter > 0 && t.cfg.DryRun {
		if err := t.expireDryRun(ctx, &s); err != nil {
			errs = append(errs, fmt.Errorf("expire snapshots: %w", err))
		}
	}
	if t.cfg.OrphanAge > 0 {
		if err := t.removeOrphans(ctx, &s); err != nil {
			errs = append(errs, fmt.Errorf("remove orphans: %w", err))
		}
	}
	return s, errors.Join(errs...)
}
