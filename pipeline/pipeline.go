// Package pipeline wires the exporter together: source → decode → catalog
// → table buffers → Parquet → store, with dead letters, under the commit
// protocol of package commit.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
	"github.com/lakehouse-exporter/lakehouse-exporter/checkpoint"
	"github.com/lakehouse-exporter/lakehouse-exporter/commit"
	"github.com/lakehouse-exporter/lakehouse-exporter/parquetenc"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
	"github.com/lakehouse-exporter/lakehouse-exporter/writer"
)

// Store is what the pipeline needs from object storage: plain objects, and
// the conditional writes and listing of the checkpoint protocol.
type Store interface {
	checkpoint.Store
	String() string
}

// Observer is told what the pipeline does, for metrics. Every method must
// be cheap and safe for concurrent use (uploads report from their own
// goroutines).
type Observer interface {
	RecordRead(partition string)
	RecordAccepted(table, op string)
	Rejected(reason string)
	FileDurable(table string, rows, bytes int, reason string, upload time.Duration, newestOpTS time.Time)
	SchemaVersion(table string, version int)
	Checkpointed(at time.Time)
	// Buffered reports the memory the data holds (measured) and the budget.
	Buffered(bytes, budget int64)
	SourceLag(partition string, lag int64)
}

// NopObserver ignores everything; embed it to observe only some events.
type NopObserver struct{}

func (NopObserver) RecordRead(string) {}

func (NopObserver) RecordAccepted(string, string) {}

func (NopObserver) Rejected(string) {}

func (NopObserver) FileDurable(string, int, int, string, time.Duration, time.Time) {}

func (NopObserver) SchemaVersion(string, int) {}

func (NopObserver) Checkpointed(time.Time) {}

func (NopObserver) Buffered(int64, int64) {}

func (NopObserver) SourceLag(string, int64) {}

// acker is implemented by sources that are told what is durable (Kafka
// commits offsets); file sources need no acknowledgement: the checkpoint
// in the sink is their progress.
type acker interface {
	Ack(ctx context.Context, offsets map[string]int64) error
}

// perPartitionCatalog is implemented by sources whose partitions are read
// from a stored position rather than from their beginning: each partition
// then keeps its own schema catalog, saved in its checkpoint.
type perPartitionCatalog interface {
	PerPartitionCatalog() bool
}

// Decoder turns raw bytes into a record.
type Decoder interface {
	Decode(data []byte, rec *cdc.Record) error
}

// Config is everything a run needs. Zero values mean the documented
// defaults.
type Config struct {
	Source  source.Source
	Store   Store
	Decoder Decoder
	Schema  arrowschema.Options
	Writer  writer.Config
	// MaxRejects fails the run once more than this many records were
	// rejected; negative means no limit (the default set by the CLI).
	MaxRejects int
	// HoldMaxRecords and HoldMaxBytes bound the DML held while a table
	// waits for its (refreshed) metadata; HoldMaxAge bounds how long.
	// Past a bound, held records are decoded with what is known, or
	// rejected as no_metadata. Defaults: 100,000 records, 64 MiB, 5m.
	HoldMaxRecords int
	HoldMaxBytes   int64
	HoldMaxAge     time.Duration
	// UploadWorkers files are uploaded at once (default 4), and at most
	// UploadQueueBytes of finished files wait for upload (default 256 MiB)
	// before reading pauses.
	UploadWorkers    int
	UploadQueueBytes int64
	// MaxBufferBytes is the memory budget of the data: the open table
	// buffers, the files being encoded and the encoded files waiting for
	// upload, as measured by the Arrow allocator. Past dataShare of it the
	// largest buffers are flushed first and reading waits for uploads; the
	// rest is headroom for decoding and the Go runtime. Default 256 MiB.
	MaxBufferBytes int64
	// NewDecoder, when set, makes a decoder for each of DecodeWorkers
	// goroutines that decode records ahead, in parallel, while their order
	// is kept. Decoder is still used for records replayed from the hold.
	NewDecoder    func() Decoder
	DecodeWorkers int
	// InferColumns lets Qlik data messages of a table without a metadata
	// message define its columns (all text) and add new ones.
	InferColumns bool
	// Catalog, when set, publishes every commit round to Iceberg tables
	// through this catalog (package tables), with the tables' field IDs
	// in the data files; nil writes the files alone.
	Catalog *tables.Config
	// ProgressEvery logs progress at this interval; 0 turns it off.
	ProgressEvery time.Duration
	Logger        *slog.Logger
	Observer      Observer // default: none
	// Activity, when set, counts the loop's turns, so that a readiness
	// probe can tell a stalled pipeline. A count, not the time of the
	// last turn: reading the clock at every record cost 1.3% of the CPU.
	Activity *atomic.Int64
	Now      func() time.Time
}

// Summary is what a run did.
type Summary struct {
	Records      int64            // messages read
	Skipped      int64            // records already durable from an earlier run: DML written, rejects dead-lettered
	RowsByTable  map[string]int64 // rows written to files
	Rejected     int64
	RejectedBy   map[cdc.Reason]int64
	Files        int
	Bytes        int64
	Tables       int
	SchemaEvents int
	// PeakBufferedBytes is the most the open table buffers held at once,
	// by the writer's estimate.
	PeakBufferedBytes int64
	// PeakHeldBytes is the most memory the data held at once, measured:
	// Arrow buffers (open, waiting to be encoded, being encoded) and
	// encoded files waiting for upload.
	PeakHeldBytes int64
	Elapsed       time.Duration
	// Ended reports whether the source ended: every file read to its end,
	// a Kafka drain (Once) to its watermarks. A run stopped before (a
	// signal, the reject limit, an error) has not; a continuous Kafka
	// source never does.
	Ended bool
	// Positions is where each partition the run owned at its end stands,
	// by name: after a stop, the next run goes on after Checkpointed.
	Positions []Position
	// BytesRead and BytesTotal are the input bytes read and the input's
	// size, for file sources (BytesTotal is 0 for stdin; both 0 for Kafka).
	BytesRead, BytesTotal int64
}

// Position is where a source partition stands at the end of a run.
type Position struct {
	Partition string
	// LastRead is the offset (for files, the line) of the last record
	// this run read, -1 if none.
	LastRead int64
	// Checkpointed is the last durable offset, -1 if none: a rerun
	// starts after it.
	Checkpointed int64
}

// ErrReadInput is wrapped by Run's error when the source fails; what
// was read before is written and checkpointed.
var ErrReadInput = errors.New("read input")

// ErrTooManyRejects is wrapped by Run's error when MaxRejects is exceeded.
var ErrTooManyRejects = errors.New("too many rejected records")

// runner dispatches the source's events to their jobs: it decodes each
// record and hands it to the table buffers (writer), the hold (DML
// waiting for metadata), the dead letters, or the schema catalogs; the
// commit round (round.go), partition ownership (ownership.go), the memory
// budget (budget.go) and the progress log (progress.go) are their own
// types, and the exactly-once protocol is package commit's.
type runner struct {
	cfg     Config
	log     *slog.Logger
	writer  *writer.Writer
	up      *uploader
	commits *commit.Committer
	cats    *catalogs
	held    *holdQueue
	budget  *budget
	board   *versionBoard // the versions the decoding goroutines convert under; nil without them
	dlq     *deadLetters
	ice     *icebergTables // the Iceberg tables; nil without a catalog
	rec     cdc.Record
	stream  []byte
	sum     Summary
	read    *progress
	logged  map[cdc.Reason]bool
	// schemaDocs are schema descriptions waiting for the next commit.
	schemaDocs map[string][]byte
	// undated are the tables whose full-load rows were dated by the run.
	undated map[string]bool
	// lastCommit is when the last commit round ended (the run's start
	// before the first).
	lastCommit time.Time
	sawEOF     bool // the source ended: every file was read to its end
	// taken are the partitions the run took, in order, perhaps twice.
	taken []string
}

// Run consumes the source to its end, writing every accepted row change to
// Parquet files and every rejected record to the dead-letter output.
func Run(ctx context.Context, cfg Config) (Summary, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Observer == nil {
		cfg.Observer = NopObserver{}
	}
	if cfg.HoldMaxRecords <= 0 {
		cfg.HoldMaxRecords = 100_000
	}
	if cfg.HoldMaxBytes <= 0 {
		cfg.HoldMaxBytes = 64 << 20
	}
	if cfg.HoldMaxAge <= 0 {
		cfg.HoldMaxAge = 5 * time.Minute
	}
	if cfg.UploadWorkers <= 0 {
		cfg.UploadWorkers = 4
	}
	if cfg.UploadQueueBytes <= 0 {
		cfg.UploadQueueBytes = 256 << 20
	}
	if cfg.MaxBufferBytes <= 0 {
		cfg.MaxBufferBytes = 256 << 20
	}
	if cfg.Writer.Now == nil {
		cfg.Writer.Now = cfg.Now
	}
	if cfg.Writer.MaxPackedBytes <= 0 {
		// The files expanding at once (an encoding slot per CPU), each
		// counted twice while it encodes, must fit beside the open
		// buffers.
		encoders := min(cfg.UploadWorkers, runtime.GOMAXPROCS(0))
		cfg.Writer.MaxPackedBytes = int64(float64(cfg.MaxBufferBytes)*dataShare) / int64(2*encoders)
	}
	// Compression runs on the upload goroutines, not on the decoder's.
	cfg.Writer.DeferEncode = true
	if cfg.Writer.Logger == nil {
		cfg.Writer.Logger = cfg.Logger
	}
	if o, ok := cfg.Observer.(parquetenc.Observer); ok && cfg.Writer.EncoderObserver == nil {
		cfg.Writer.EncoderObserver = o // an observer that counts encoder fallbacks (metrics.Metrics)
	}
	mem := newCountingAllocator(cfg.Writer.Allocator)
	cfg.Writer.Allocator = mem
	pp, ok := cfg.Source.(perPartitionCatalog)
	cats := newCatalogs(cfg.Schema, ok && pp.PerPartitionCatalog())
	ccfg := commit.Config{Store: cfg.Store, Logger: cfg.Logger, Now: cfg.Now}
	if cats.perPartition {
		ccfg.Catalog = cats.snapshot
	}
	if a, ok := cfg.Source.(acker); ok {
		ccfg.Ack = a.Ack
	}
	ccfg.Run = commit.NewRunID()
	var ice *icebergTables
	if cfg.Catalog != nil {
		tcfg := *cfg.Catalog
		if o, ok := cfg.Observer.(tables.Observer); ok && tcfg.Observer == nil {
			tcfg.Observer = o // an observer that counts commits (metrics.Metrics)
		}
		if err := tables.CheckLocation(cfg.Store.String()); err != nil {
			return Summary{}, fmt.Errorf("the sink: %w", err)
		}
		pub, err := tables.Open(ctx, tcfg, cfg.Logger)
		if err != nil {
			return Summary{}, fmt.Errorf("open the Iceberg catalog: %w", err)
		}
		defer pub.Close()
		// Table preparation outlives a cancelled run: a shutdown still
		// flushes, and its files need their tables.
		ice = newIcebergTables(context.WithoutCancel(ctx), pub, cfg.Store, ccfg.Run, cfg.Logger)
		defer ice.ahead.close() // before the catalog closes
		ccfg.Publisher = ice
		cfg.Writer.FileSchema = ice.fileSchema
		cfg.Writer.FileSchemaAhead = ice.prepareAhead
	}
	if err := checkCatalogMark(ctx, cfg.Store, cfg.Catalog, cfg.Now()); err != nil {
		return Summary{}, err
	}
	commits := commit.New(ccfg)
	cfg.Writer.Run = commits.Run()
	w, err := writer.New(cfg.Writer)
	if err != nil {
		return Summary{}, err
	}
	defer w.Close()
	r := &runner{
		cfg: cfg, log: cfg.Logger, writer: w, commits: commits, cats: cats, ice: ice, dlq: newDeadLetters(cfg.Now, commits.Run()),
		sum:    Summary{RowsByTable: map[string]int64{}, RejectedBy: map[cdc.Reason]int64{}},
		held:   newHoldQueue(cfg.HoldMaxRecords, cfg.HoldMaxBytes, cfg.HoldMaxAge),
		logged: map[cdc.Reason]bool{}, undated: map[string]bool{}, schemaDocs: map[string][]byte{},
		read: &progress{every: cfg.ProgressEvery, log: cfg.Logger},
	}
	start := cfg.Now()
	r.lastCommit = start
	r.up = newUploader(ctx, cfg.Store, commits, cfg.UploadWorkers, cfg.UploadQueueBytes, r.log, &r.sum, cfg.Observer)
	if ice != nil {
		r.up.noteFile = ice.noteFile
	}
	defer r.up.close() // on every path: no upload goroutine outlives Run
	r.budget = newBudget(cfg.MaxBufferBytes, mem, r.up, w, r.log)

	if fp, ok := cfg.Source.(filePartitioner); ok && !cats.perPartition {
		commits.LoadReleasedMarks(ctx, fp.FilePartitions())
	}
	sd := newShutdown(ctx, shutdownTimeout)
	defer sd.end()
	// The uploads end with the shutdown's deadline: what is not uploaded
	// then is not checkpointed, and the next run writes it again.
	defer context.AfterFunc(sd.ctx, r.up.abort)()
	stopProgress := r.read.start(ctx, cfg.Source)
	err = r.loop(ctx, sd.ctx)
	stopProgress()
	if err == nil || errors.Is(err, ErrTooManyRejects) || errors.Is(err, context.Canceled) || errors.Is(err, ErrReadInput) {
		// Everything accepted so far is written even when the reject limit,
		// a signal or a failing input stops the run: good data never waits
		// for bad, a shutdown flushes before it exits, and what was read
		// before the input failed is whole, so the next run goes on after
		// it. (A failing store or checkpoint is not: committing would fail
		// the same way, or, fenced, must not happen.)
		sd.begin()
		if ferr := r.finish(sd.ctx); ferr != nil {
			err = errors.Join(err, ferr)
		}
	}
	// The uploads still queued after a failure end before the summary is
	// taken: counted after it, they added their rows to the summary's
	// map but not their files to its count.
	r.up.close()
	r.sum.Elapsed = cfg.Now().Sub(start)
	r.sum.PeakHeldBytes = r.budget.peak
	r.sum.Tables = cats.tables()
	r.sum.Ended = r.sawEOF
	r.sum.Positions = r.positions()
	if pr, ok := cfg.Source.(progressReporter); ok {
		r.sum.BytesRead, r.sum.BytesTotal = pr.Progress()
	}
	return r.sum, err
}

// positions lists where the partitions the run still owns stand.
func (r *runner) positions() []Position {
	names := slices.Clone(r.taken)
	slices.Sort(names)
	var out []Position
	for _, name := range slices.Compact(names) {
		if ps := r.commits.Partition(name); ps != nil {
			out = append(out, Position{Partition: name, LastRead: ps.LastRead(), Checkpointed: ps.Offset()})
		}
	}
	return out
}
