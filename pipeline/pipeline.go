// Package pipeline wires the exporter together: source → decode → catalog
// → table buffers → Parquet → store, with dead letters and checkpoints.
package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
	"github.com/lakehouse-exporter/lakehouse-exporter/checkpoint"
	"github.com/lakehouse-exporter/lakehouse-exporter/parquetenc"
	"github.com/lakehouse-exporter/lakehouse-exporter/partition"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
	"github.com/lakehouse-exporter/lakehouse-exporter/writer"
	"golang.org/x/sync/errgroup"
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

func (NopObserver) RecordRead(string)                                              {}
func (NopObserver) RecordAccepted(string, string)                                  {}
func (NopObserver) Rejected(string)                                                {}
func (NopObserver) FileDurable(string, int, int, string, time.Duration, time.Time) {}
func (NopObserver) SchemaVersion(string, int)                                      {}
func (NopObserver) Checkpointed(time.Time)                                         {}
func (NopObserver) Buffered(int64, int64)                                          {}
func (NopObserver) SourceLag(string, int64)                                        {}

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
}

// ErrTooManyRejects is wrapped by Run's error when MaxRejects is exceeded.
var ErrTooManyRejects = errors.New("too many rejected records")

type heldRecord struct {
	data []byte
	msg  source.Message
	at   time.Time
}

type runner struct {
	recordsRead atomic.Int64 // sum.Records, for the progress log's goroutine
	cfg         Config
	run         string // names this run in its files, intents and checkpoints
	log         *slog.Logger
	writer      *writer.Writer
	board       *versionBoard // the versions the decoding goroutines convert under; nil without them
	dlq         *deadLetters
	rec         cdc.Record
	stream      []byte
	sum         Summary
	held        map[string][]heldRecord
	heldN       int
	heldB       int64
	logged      map[cdc.Reason]bool
	up          *uploader
	mem         *countingAllocator

	// lastCommit is when the last commit round ended (the run's start
	// before the first).
	lastCommit time.Time
	sawEOF     bool // the source ended: every file was read to its end

	budgetWarned  bool
	budgetRetryAt int64 // the writer's buffered estimate at which to look for a buffer to flush again
	budgetLead    int64 // how far below the budget to flush: what the last budget flush added

	// catalogs holds the schema catalog: one shared one (key "") for
	// sources replayed from their beginning, else one per partition.
	catalogs     map[string]*arrowschema.Catalog
	perPartition bool
	schemaDocs   map[string][]byte // schema descriptions waiting for the next commit
	parts        map[string]*partState
	// released are, for the shared catalog of sources replayed from their
	// beginning, the provisional versions that DML released by a hold
	// limit was written under, in this run or (from the checkpoints) an
	// earlier one: saved in every checkpoint, and marked written again
	// when the replay reaches them (see markReleased).
	released map[checkpoint.VersionMark]bool
	// undated are the tables whose full-load rows were dated by the run.
	undated map[string]bool
}

// partState is what the runner knows about one source partition.
type partState struct {
	cp       *checkpoint.Handle
	lastRead int64 // last offset handled in this run, -1 before any
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
	run := newRunID()
	cfg.Writer.Run = run
	w, err := writer.New(cfg.Writer)
	if err != nil {
		return Summary{}, err
	}
	defer w.Close()
	r := &runner{
		cfg: cfg, log: cfg.Logger, writer: w, mem: mem, dlq: newDeadLetters(cfg.Now, run),
		sum:  Summary{RowsByTable: map[string]int64{}, RejectedBy: map[cdc.Reason]int64{}},
		held: map[string][]heldRecord{}, logged: map[cdc.Reason]bool{}, undated: map[string]bool{},
		catalogs: map[string]*arrowschema.Catalog{}, parts: map[string]*partState{}, schemaDocs: map[string][]byte{},
		released: map[checkpoint.VersionMark]bool{},
	}
	if pp, ok := cfg.Source.(perPartitionCatalog); ok && pp.PerPartitionCatalog() {
		r.perPartition = true
	} else {
		r.catalogs[""] = arrowschema.NewCatalog(cfg.Schema)
	}
	start := cfg.Now()
	r.lastCommit = start
	r.up = newUploader(ctx, cfg.Store, cfg.UploadWorkers, cfg.UploadQueueBytes, r.log, &r.sum, cfg.Observer)
	r.up.run, r.run = run, run
	defer r.up.close() // on every path: no upload goroutine outlives Run

	if fp, ok := cfg.Source.(filePartitioner); ok && !r.perPartition {
		r.loadReleasedMarks(ctx, fp.FilePartitions())
	}
	stopProgress := r.startProgress(ctx)
	err = r.loop(ctx)
	stopProgress()
	if err == nil || errors.Is(err, ErrTooManyRejects) || errors.Is(err, context.Canceled) {
		// Everything accepted so far is written even when the reject limit
		// or a signal stops the run: good data never waits for bad, and a
		// shutdown flushes before it exits.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		if ferr := r.finish(fctx); ferr != nil {
			err = errors.Join(err, ferr)
		}
	}
	r.sum.Elapsed = cfg.Now().Sub(start)
	for _, c := range r.catalogs {
		r.sum.Tables += c.Tables()
	}
	return r.sum, err
}

// loop reads until the source ends or stopCtx is cancelled. A stop only
// ends fetching: the record in hand is processed with a context that is
// not cancelled, so a shutdown never leaves half-done work.
func (r *runner) loop(stopCtx context.Context) error {
	st := &loopState{ctx: context.WithoutCancel(stopCtx), stopCtx: stopCtx, lastAgeCheck: r.cfg.Now()}
	if r.cfg.NewDecoder == nil || r.cfg.DecodeWorkers < 1 {
		for {
			m, err := r.cfg.Source.Next(stopCtx)
			done, err := r.step(st, m, err, nil, nil, nil)
			if done || err != nil {
				return err
			}
		}
	}
	r.board = newVersionBoard()
	p := newPrefetcher(stopCtx, r.cfg.Source, r.cfg.NewDecoder, r.cfg.DecodeWorkers, r.board, r.perPartition)
	defer p.close()
	for {
		b := p.next()
		if b == nil {
			return nil // the reader stopped: a requested stop
		}
		for i := range b.items[:b.n] {
			it := &b.items[i]
			var m *source.Message
			if it.srcErr == nil {
				m = &it.msg
			}
			done, err := r.step(st, m, it.srcErr, &it.rec, &it.conv, it.decErr)
			if done || err != nil {
				return err
			}
		}
		r.board.post()
		p.recycle(b)
	}
}

type loopState struct {
	ctx, stopCtx context.Context
	lastAgeCheck time.Time
}

// step handles one event of the source: a record (rec is its decoding,
// when it was decoded ahead, and pre its conversion, if it was converted
// ahead), a control, or an error from Next. It reports whether the loop
// is done.
func (r *runner) step(st *loopState, m *source.Message, err error, rec *cdc.Record, pre *writer.Converted, decErr error) (bool, error) {
	ctx := st.ctx
	if r.cfg.Activity != nil {
		r.cfg.Activity.Add(1)
	}
	if err == io.EOF {
		r.sawEOF = true
		return true, nil
	}
	if errors.Is(err, source.ErrIdle) {
		st.lastAgeCheck = r.cfg.Now()
		return false, r.periodic(ctx, st.lastAgeCheck)
	}
	if err != nil {
		if st.stopCtx.Err() != nil {
			return true, nil // a requested stop; finish commits what was read
		}
		return true, fmt.Errorf("read input: %w", err)
	}
	if m.Control != nil {
		return false, r.control(ctx, m.Control)
	}
	ps, err := r.partition(ctx, m.Partition)
	if err != nil {
		return true, err
	}
	r.sum.Records++
	r.recordsRead.Store(r.sum.Records)
	r.cfg.Observer.RecordRead(m.Partition)
	if m.Lag >= 0 && (m.Lag == 0 || r.sum.Records%64 == 0) {
		r.cfg.Observer.SourceLag(m.Partition, m.Lag)
	}
	ps.lastRead = m.Offset
	if rec != nil {
		err = r.handleDecoded(ctx, m, m.Value, rec, pre, decErr, false)
	} else {
		err = r.handle(ctx, m, m.Value, false)
	}
	if err != nil {
		return true, err
	}
	if r.dlq.bytes >= r.dlqFlushBytes() {
		// A stream of bad records must not gather their text in memory
		// until the next commit: the dead letters go out now, under
		// intents the next checkpoint settles, as data files do.
		if err := r.sendDeadLetters(ctx); err != nil {
			return true, err
		}
	}
	if r.sum.Records%1024 == 0 {
		r.cfg.Observer.Buffered(r.dataBytes(), r.cfg.MaxBufferBytes)
		if now := r.cfg.Now(); now.Sub(st.lastAgeCheck) >= time.Second {
			st.lastAgeCheck = now
			if err := r.periodic(ctx, now); err != nil {
				return true, err
			}
		}
	}
	return false, nil
}

// handle processes one record. replay is true for a held record being
// released, which must not be held again.
func (r *runner) handle(ctx context.Context, m *source.Message, data []byte, replay bool) error {
	var err error
	if !m.Oversized {
		err = r.cfg.Decoder.Decode(data, &r.rec)
	}
	return r.handleDecoded(ctx, m, data, &r.rec, nil, err, replay)
}

// handleDecoded processes one record that a decoder turned into rec (or
// failed to, with decErr); pre, if not nil, is rec converted ahead.
func (r *runner) handleDecoded(ctx context.Context, m *source.Message, data []byte, rec *cdc.Record, pre *writer.Converted, decErr error, replay bool) error {
	if m.Oversized {
		return r.reject(m, "", cdc.Rejectf(cdc.ReasonOversized, "record of %d bytes is larger than the limit", m.Size))
	}
	if decErr != nil {
		if rej, ok := cdc.AsReject(decErr); ok {
			return r.reject(m, rec.Table, rej)
		}
		return decErr
	}
	catalog := r.catalog(m.Partition)
	switch rec.Class {
	case cdc.ClassSchema:
		events, err := catalog.ApplySchemaRecord(rec.SchemaID, rec.Body)
		if err != nil {
			return r.reject(m, "", cdc.Rejectf(cdc.ReasonBadMetadata, "%v", err))
		}
		for _, ev := range events {
			if err := r.schemaEvent(ctx, ev); err != nil {
				return err
			}
		}
	case cdc.ClassStreamMetadata:
		if string(r.stream) != string(rec.Body) {
			r.stream = append(r.stream[:0], rec.Body...)
			r.log.Info("stream metadata", "source", m.Position(), "record", string(rec.Body))
		}
	case cdc.ClassObjectMetadata:
		if rej := checkTableName(rec.Table); rej != nil {
			return r.reject(m, rec.Table, rej)
		}
		r.markReleased(catalog, rec.Table)
		ev, err := catalog.ApplyMetadata(rec.Metadata, rec.Pos, rec.OpTS)
		if err != nil {
			if rej, ok := cdc.AsReject(err); ok {
				return r.reject(m, rec.Table, rej)
			}
			return err
		}
		table := rec.Table
		if err := r.schemaEvent(ctx, ev); err != nil {
			return err
		}
		return r.release(ctx, catalog, table, false)
	case cdc.ClassDDL:
		if rej := checkTableName(rec.Table); rej != nil {
			return r.reject(m, rec.Table, rej)
		}
		ev, err := catalog.ApplyDDL(rec.Table, rec.DDL.Statement, rec.Pos, rec.OpTS)
		if err != nil {
			if rej, ok := cdc.AsReject(err); ok {
				return r.reject(m, rec.Table, rej)
			}
			return err
		}
		return r.schemaEvent(ctx, ev)
	case cdc.ClassDML:
		v := catalog.Current(rec.Table)
		if v != nil && v.Provisional && !v.Hold {
			// Marked on every run alike, the row skipped below or not, so
			// that a replay of the refresh opens the same version.
			if !v.Written() && !r.perPartition {
				// With several input files, whether these rows come
				// before the refresh depends on the order the files are
				// read in: a rerun that reads a grown file's refresh
				// first must still know (markReleased), so the
				// checkpoints say it, as for rows a hold limit released.
				r.released[versionMark(v)] = true
			}
			v.MarkWritten()
		}
		if ps := r.parts[m.Partition]; ps != nil && m.Offset <= ps.cp.Offset {
			// durable since an earlier run: metadata above was replayed,
			// the row change is not written again
			r.sum.Skipped++
			return nil
		}
		if r.cfg.InferColumns && rec.Format == cdc.FormatQlik && (v == nil || v.Metadata.Inferred) {
			var err error
			if v, err = r.infer(ctx, catalog, v, rec, m); err != nil {
				if errors.Is(err, errRejected) {
					return nil // dead-lettered once, not held to be rejected again
				}
				return err
			}
		}
		if v == nil {
			// Its metadata was refused for the name, or is yet to come:
			// not held for metadata that cannot be taken.
			if rej := checkTableName(rec.Table); rej != nil {
				return r.reject(m, rec.Table, rej)
			}
		}
		if !replay && (v == nil || v.Hold || len(r.held[r.heldKey(m.Partition, rec.Table)]) > 0) {
			return r.hold(ctx, m, data, rec.Table)
		}
		if v == nil {
			return r.reject(m, rec.Table, cdc.Rejectf(cdc.ReasonNoMetadata, "no OBJECT_METADATA for %s arrived before the hold limit or the end of the input", rec.Table))
		}
		if !rec.HasOpTS {
			// A Qlik full-load row has no timestamp: date it by its
			// table's metadata message, which Qlik sends at load time.
			// Without one (inferred columns have no metadata message) it
			// is dated by the run: Qlik sends timestamps for CDC only.
			rec.OpTS = v.OpenedAtTS
			if rec.OpTS.IsZero() {
				rec.OpTS = r.cfg.Now()
				if !r.undated[rec.Table] {
					r.undated[rec.Table] = true
					r.log.Warn("full-load rows of a table without lineage.timestamp are dated by the time of the run", "table", rec.Table, "version", v.Number)
				}
			}
		}
		if r.board != nil && !pre.Under(v) {
			r.board.note(r.catalogKey(m.Partition), rec.Table, v)
		}
		files, err := r.writer.AppendConverted(v, rec, writer.Source{Partition: m.Partition, Offset: m.Offset}, pre)
		if err != nil {
			if rej, ok := cdc.AsReject(err); ok {
				return r.reject(m, rec.Table, rej)
			}
			return err
		}
		r.cfg.Observer.RecordAccepted(rec.Table, rec.Op.String())
		r.sum.PeakBufferedBytes = max(r.sum.PeakBufferedBytes, r.writer.BufferedBytes())
		if err := r.upload(ctx, files); err != nil {
			return err
		}
		return r.keepBudget(ctx)
	}
	return nil
}

// checkTableName refuses a table whose name has no folder of the layout
// (partition.TableSegment): its files could be neither written nor
// recovered, and a failed round would stop the run and every later one.
func checkTableName(table string) *cdc.RejectError {
	if _, err := partition.TableSegment(table); err != nil {
		return cdc.Rejectf(cdc.ReasonBadTableName, "%v", err)
	}
	return nil
}

// infer builds a table's columns from the Qlik data messages themselves,
// when no metadata message is available and config allows it: every column
// is text (hints refine them), and a message bringing new columns opens a
// new version with them added.
func (r *runner) infer(ctx context.Context, catalog *arrowschema.Catalog, v *arrowschema.Version, rec *cdc.Record, m *source.Message) (*arrowschema.Version, error) {
	md := cdc.TableMetadata{Table: rec.Table, Format: cdc.FormatQlik, Inferred: true}
	known := map[string]bool{}
	if v != nil {
		md.Columns = append(md.Columns, v.Metadata.Columns...)
		for _, c := range md.Columns {
			known[c.Name] = true
		}
	}
	grew := false
	for _, im := range []*cdc.Image{&rec.After, &rec.Before} {
		for _, f := range im.Fields {
			if !known[f.Name] {
				known[f.Name] = true
				md.Columns = append(md.Columns, cdc.Column{Name: f.Name, Type: "string", Nullable: true})
				grew = true
			}
		}
	}
	if !grew {
		return v, nil
	}
	r.markReleased(catalog, rec.Table)
	ev, err := catalog.ApplyMetadata(md, rec.Pos, rec.OpTS)
	if err != nil {
		if rej, ok := cdc.AsReject(err); ok {
			if err := r.reject(m, rec.Table, rej); err != nil {
				return nil, err
			}
			return nil, errRejected
		}
		return nil, err
	}
	if err := r.schemaEvent(ctx, ev); err != nil {
		return nil, err
	}
	return catalog.Current(rec.Table), nil
}

// errRejected says the record was dead-lettered already.
var errRejected = errors.New("record rejected")

func (r *runner) schemaEvent(ctx context.Context, ev *arrowschema.Event) error {
	if ev == nil {
		return nil
	}
	r.sum.SchemaEvents++
	v := ev.Version
	r.cfg.Observer.SchemaVersion(v.Table, v.Number)
	if ev.Kind != arrowschema.EventCompleted {
		files, err := r.writer.FlushTable(v.Table, "ddl")
		if err != nil {
			return err
		}
		if err := r.upload(ctx, files); err != nil {
			return err
		}
	}
	seg, err := partition.TableSegment(v.Table)
	if err != nil {
		return err
	}
	key := partition.SchemaKey(seg, v.Number)
	// Written at the next commit, off the decoding goroutine: a version
	// described twice before then (opened by a DDL, completed by its
	// metadata) is written once, with its final content.
	r.schemaDocs[key] = describeVersion(v, r.stream, r.cfg.Now())
	kind := map[arrowschema.EventKind]string{arrowschema.EventOpened: "opened", arrowschema.EventReplaced: "replaced", arrowschema.EventCompleted: "completed"}[ev.Kind]
	r.log.Info("schema version "+kind, "table", v.Table, "version", v.Number, "columns", len(v.Columns),
		"provisional", v.Provisional, "holding", v.Hold, "ddl", v.DDL, "pos", v.OpenedAtPos)
	if ev.Kind != arrowschema.EventCompleted {
		for i, c := range v.Columns {
			if name := v.FieldName(i); name != c.Name {
				r.log.Warn("column written under another name: readers with Hive partitioning would show the folder's value under its own; _schemas/ records both names",
					"table", v.Table, "version", v.Number, "column", c.Name, "written_as", name)
			}
		}
	}
	return nil
}

// versionMark names v in a checkpoint.
func versionMark(v *arrowschema.Version) checkpoint.VersionMark {
	return checkpoint.VersionMark{Table: v.Table, Version: v.Number, OpenedAtPos: v.OpenedAtPos}
}

// markReleased marks the version in force for table written, before its
// refresh is applied, when it is provisional and an earlier run (or this
// one) wrote DML under it, released by a hold limit or read from another
// input file: a replay that
// skipped those rows as durable then opens the same next version as that
// run did, instead of replacing the version its files were written with.
// (Kafka partitions need none of this: their checkpoints keep the whole
// catalog, marks included, and are not replayed from their start.)
func (r *runner) markReleased(catalog *arrowschema.Catalog, table string) {
	if v := catalog.Current(table); v != nil && v.Provisional && r.released[versionMark(v)] {
		v.MarkWritten()
	}
}

// loadReleasedMarks reads the version marks of every input file's
// checkpoint before any record is read: a file read early may refresh a
// version whose mark only a later file's checkpoint holds (the run that
// marked it did not rewrite the earlier file's). Only read, not claimed;
// a checkpoint that cannot be read now is read again when its file is.
func (r *runner) loadReleasedMarks(ctx context.Context, partitions []string) {
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, name := range partitions {
		g.Go(func() error {
			cp, err := checkpoint.Load(gctx, r.cfg.Store, name)
			if err != nil {
				r.log.Warn("could not read an input file's checkpoint before the run; it is read again with the file", "partition", name, "error", err)
				return nil
			}
			mu.Lock()
			defer mu.Unlock()
			r.addReleased(cp.WrittenVersions)
			return nil
		})
	}
	g.Wait()
}

// addReleased adds the marks a checkpoint names to r.released.
func (r *runner) addReleased(marks []checkpoint.VersionMark) {
	for _, m := range marks {
		r.released[m] = true
	}
}

// releasedMarks lists r.released in a stable order, for a checkpoint.
func (r *runner) releasedMarks() []checkpoint.VersionMark {
	if len(r.released) == 0 {
		return nil
	}
	out := make([]checkpoint.VersionMark, 0, len(r.released))
	for m := range r.released {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Table != b.Table {
			return a.Table < b.Table
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.OpenedAtPos < b.OpenedAtPos
	})
	return out
}

// catalogKey is the key of partition's catalog in catalogs.
func (r *runner) catalogKey(partition string) string { return catalogKey(r.perPartition, partition) }

// catalogKey is partition's catalog's key: "" when one catalog serves
// every partition.
func catalogKey(perPartition bool, partition string) string {
	if !perPartition {
		return ""
	}
	return partition
}

// catalog returns the schema catalog that partition's records use.
func (r *runner) catalog(partition string) *arrowschema.Catalog {
	if !r.perPartition {
		return r.catalogs[""]
	}
	c := r.catalogs[partition]
	if c == nil {
		c = arrowschema.NewCatalog(r.cfg.Schema)
		r.catalogs[partition] = c
	}
	return c
}

// withdraw deletes the files (data and dead letters) this run wrote for a
// partition it has lost since its last checkpoint, and their intents: the
// new owner's recovery may have run before they were uploaded, and would
// never see them.
func (r *runner) withdraw(ctx context.Context, name string) {
	intents, files := r.up.takeIntents(name)
	failed := false
	for _, k := range files {
		if err := r.cfg.Store.Delete(ctx, k); err != nil {
			failed = true
			r.log.Warn("could not delete a file of a partition this instance lost; its intent is kept, for the partition's next claim to delete it", "partition", name, "key", k, "error", err)
		}
	}
	if !failed {
		for _, k := range intents {
			if err := r.cfg.Store.Delete(ctx, k); err != nil {
				r.log.Warn("could not delete an intent of a partition this instance lost; its files are gone", "partition", name, "key", k, "error", err)
			}
		}
	}
	r.log.Warn("partition taken over by another instance: this instance's files of it since its last checkpoint are deleted", "partition", name, "files", len(files))
}

// claim loads a partition's checkpoint, settles the intents it covers and
// claims the partition for this run, before anything is deleted: a run
// still writing the partition is fenced first, so the files of its round
// in flight, deleted next, can never be committed by it. A checkpoint
// written between the load and the claim (the previous owner's last
// commit at a rebalance) is loaded again, a few times.
func (r *runner) claim(ctx context.Context, name string, now time.Time) (*checkpoint.Handle, *checkpoint.Recovery, error) {
	for attempt := 0; ; attempt++ {
		cp, err := checkpoint.Load(ctx, r.cfg.Store, name)
		if err != nil {
			return nil, nil, err
		}
		rec, err := checkpoint.StartRecovery(ctx, r.cfg.Store, cp.Checkpoint)
		if err != nil {
			return nil, nil, fmt.Errorf("recover partition %s: %w", name, err)
		}
		err = cp.Claim(ctx, r.cfg.Store, r.run, now)
		if err == nil {
			return cp, rec, nil
		}
		if !errors.Is(err, checkpoint.ErrFenced) {
			return nil, nil, err
		}
		if attempt == 2 {
			return nil, nil, fmt.Errorf("partition %s is being exported by another instance, which keeps writing its checkpoint: %w; run one instance per input (for Kafka, one consumer group member per partition)", name, err)
		}
		select {
		case <-time.After(time.Duration(attempt+1) * 200 * time.Millisecond):
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
}

// newRunID names a run: eight random hex digits.
func newRunID() string {
	var b [4]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// partition returns a partition's state, loading its checkpoint and
// settling what an earlier run left unfinished the first time it is seen.
func (r *runner) partition(ctx context.Context, name string) (*partState, error) {
	if ps := r.parts[name]; ps != nil {
		return ps, nil
	}
	cp, err := r.take(ctx, name, r.cfg.Now())
	if err != nil {
		return nil, err
	}
	return r.adopt(name, cp)
}

// take is the storage side of taking a partition: its claim and the
// recovery after it. It touches no runner state, so the partitions of an
// assignment are taken in parallel.
func (r *runner) take(ctx context.Context, name string, now time.Time) (*checkpoint.Handle, error) {
	cp, rec, err := r.claim(ctx, name, now)
	if err != nil {
		return nil, err
	}
	deleted, err := rec.DeleteUncovered(ctx)
	if err != nil {
		return nil, fmt.Errorf("recover partition %s: %w", name, err)
	}
	if deleted > 0 {
		r.log.Info("removed files past the checkpoint; their records are read again", "partition", name, "files", deleted, "checkpoint_offset", cp.Offset)
	}
	return cp, nil
}

// adopt makes the state of a partition taken with checkpoint cp.
func (r *runner) adopt(name string, cp *checkpoint.Handle) (*partState, error) {
	if r.perPartition {
		c := arrowschema.NewCatalog(r.cfg.Schema)
		if len(cp.Catalog) > 0 {
			var snap arrowschema.Snapshot
			if err := json.Unmarshal(cp.Catalog, &snap); err != nil {
				return nil, fmt.Errorf("checkpoint of %s: catalog snapshot: %w", name, err)
			}
			restored, err := arrowschema.RestoreCatalog(r.cfg.Schema, snap)
			if err != nil {
				return nil, fmt.Errorf("checkpoint of %s: %w", name, err)
			}
			c = restored
		}
		r.catalogs[name] = c
	} else {
		r.addReleased(cp.WrittenVersions)
	}
	ps := &partState{cp: cp, lastRead: -1}
	r.parts[name] = ps
	return ps, nil
}

// control handles partition ownership events of the source.
func (r *runner) control(ctx context.Context, c *source.Control) error {
	if c.Resume != nil {
		// Each take is a few requests to the store; one after another
		// they held up the assignment by that much per partition.
		var todo []string
		for _, p := range c.Partitions {
			if r.parts[p] == nil {
				todo = append(todo, p)
			}
		}
		taken := make([]*checkpoint.Handle, len(todo))
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(8)
		now := r.cfg.Now() // Config.Now need not be safe for concurrent use
		for i, p := range todo {
			g.Go(func() error {
				cp, err := r.take(gctx, p, now)
				taken[i] = cp
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		for i, p := range todo {
			if _, err := r.adopt(p, taken[i]); err != nil {
				return err
			}
		}
		resume := map[string]int64{}
		for _, p := range c.Partitions {
			ps, err := r.partition(ctx, p)
			if err != nil {
				return err
			}
			if ps.cp.Offset >= 0 {
				// (A checkpoint of no progress, written by a claim, leaves
				// the start to the source's own rule.)
				resume[p] = ps.cp.Offset + 1
			}
		}
		c.Resume <- resume
		return nil
	}
	// Giving up every partition: make all of it durable first, then forget
	// it, since another instance may own it next.
	err := r.commit(ctx, "rebalance")
	if err == nil {
		r.parts = map[string]*partState{}
		if r.perPartition {
			r.catalogs = map[string]*arrowschema.Catalog{}
		}
	}
	c.Done <- err
	return err
}

func (r *runner) heldKey(partition, table string) string {
	return r.catalogKey(partition) + "\x00" + table
}

// hold keeps a DML record until its table's metadata arrives.
func (r *runner) hold(ctx context.Context, m *source.Message, data []byte, table string) error {
	h := heldRecord{data: append([]byte(nil), data...), msg: *m, at: r.cfg.Now()}
	h.msg.Value = h.data
	key := r.heldKey(m.Partition, table)
	r.held[key] = append(r.held[key], h)
	r.heldN++
	r.heldB += int64(len(h.data))
	if len(r.held[key]) == 1 {
		r.log.Info("holding DML until metadata arrives", "table", table, "source", m.Position())
	}
	if r.heldN > r.cfg.HoldMaxRecords || r.heldB > r.cfg.HoldMaxBytes {
		return r.releaseOldest(ctx)
	}
	return nil
}

// release replays the held records of table. With force, they are decoded
// with whatever version is in force (or rejected if none); otherwise only
// when the table has a version that does not hold.
func (r *runner) release(ctx context.Context, catalog *arrowschema.Catalog, table string, force bool) error {
	for key, held := range r.held {
		if len(held) == 0 || key[strings.IndexByte(key, 0)+1:] != table || r.catalog(held[0].msg.Partition) != catalog {
			continue
		}
		v := catalog.Current(table)
		if !force && (v == nil || v.Hold) {
			return nil
		}
		if force && v != nil && v.Provisional {
			// Written under a version that holds: a refresh with other
			// columns must then open the next one. A rerun that skips
			// these rows as durable cannot tell, so the checkpoints of a
			// source replayed from its start say it.
			v.MarkWritten()
			if !r.perPartition {
				r.released[versionMark(v)] = true
			}
		}
		delete(r.held, key)
		r.log.Info("releasing held DML", "table", table, "records", len(held), "forced", force)
		for i := range held {
			r.heldN--
			r.heldB -= int64(len(held[i].data))
			if err := r.handle(ctx, &held[i].msg, held[i].data, true); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *runner) releaseKey(ctx context.Context, key string) error {
	held := r.held[key]
	if len(held) == 0 {
		return nil
	}
	return r.release(ctx, r.catalog(held[0].msg.Partition), key[strings.IndexByte(key, 0)+1:], true)
}

// releaseOldest frees the table holding the oldest record when a hold
// bound is reached.
func (r *runner) releaseOldest(ctx context.Context) error {
	var oldest string
	var at time.Time
	for k, h := range r.held {
		if oldest == "" || h[0].at.Before(at) {
			oldest, at = k, h[0].at
		}
	}
	r.log.Warn("hold limit reached: releasing DML without refreshed metadata", "table", oldest[strings.IndexByte(oldest, 0)+1:])
	return r.releaseKey(ctx, oldest)
}

// periodic runs time-based work: held DML past its age limit is released,
// and once the oldest open buffer reaches the file age limit, everything is
// flushed and checkpointed (a commit round).
func (r *runner) periodic(ctx context.Context, now time.Time) error {
	// Also here, not only every 1,024 records: a trickle of records (or
	// an idle source) must not leave the memory gauges at zero.
	r.cfg.Observer.Buffered(r.dataBytes(), r.cfg.MaxBufferBytes)
	for k, h := range r.held {
		if now.Sub(h[0].at) >= r.cfg.HoldMaxAge {
			r.log.Warn("hold time limit reached: releasing DML without refreshed metadata", "table", k[strings.IndexByte(k, 0)+1:])
			if err := r.releaseKey(ctx, k); err != nil {
				return err
			}
		}
	}
	since := now.Sub(r.lastCommit)
	holdOver := r.heldN == 0 || since >= r.writer.MaxAge()+r.cfg.HoldMaxAge
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
	if since >= r.writer.MaxAge() && r.readPastCheckpoint() && holdOver {
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

// readPastCheckpoint reports whether records were read past some
// partition's checkpoint, that a commit would make durable.
func (r *runner) readPastCheckpoint() bool {
	for _, ps := range r.parts {
		if ps.lastRead > ps.cp.Offset {
			return true
		}
	}
	return false
}

func (r *runner) reject(m *source.Message, table string, rej *cdc.RejectError) error {
	if ps := r.parts[m.Partition]; ps != nil && m.Offset <= ps.cp.Offset {
		// The run that made this offset durable dead-lettered the record
		// (dead letters are written before the checkpoint). A replay of
		// the input from its start must not write it again, nor count it
		// against the reject limit.
		r.sum.Skipped++
		return nil
	}
	r.sum.Rejected++
	r.sum.RejectedBy[rej.Reason]++
	r.cfg.Observer.Rejected(string(rej.Reason))
	r.dlq.add(m, table, rej)
	if !r.logged[rej.Reason] {
		r.logged[rej.Reason] = true
		r.log.Warn("record rejected to the dead-letter output (further rejects of this kind are counted, not logged)",
			"reason", rej.Reason, "error", rej.Detail, "source", m.Position())
	}
	if r.cfg.MaxRejects >= 0 && r.sum.Rejected > int64(r.cfg.MaxRejects) {
		return fmt.Errorf("%w: %d rejected, more than --max-rejects %d; see the _dlq/ folder of the sink", ErrTooManyRejects, r.sum.Rejected, r.cfg.MaxRejects)
	}
	return nil
}

// sendDeadLetters queues the dead letters held so far for upload.
func (r *runner) sendDeadLetters(ctx context.Context) error {
	for _, f := range r.dlq.drain() {
		if err := r.up.sendDeadLetters(ctx, f); err != nil {
			return err
		}
	}
	return nil
}

// dlqFlushBytes is how much dead-letter text is held before it is sent
// ahead of the commit: a sixteenth of the budget (16 MiB under 256 MiB).
func (r *runner) dlqFlushBytes() int { return int(r.cfg.MaxBufferBytes / 16) }

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

// dataBytes is the memory the data holds now.
func (r *runner) dataBytes() int64 {
	return r.mem.inUse.Load() + r.up.encoded.Load() + r.up.encoding.Load()
}

// keepBudget keeps the data's memory under its share of the budget. When
// most of it sits in open buffers, the largest are flushed first (so that
// many small tables keep filling whole files); then reading waits until
// encoding and uploading have freed enough: a slow store stops the input
// instead of growing the process.
func (r *runner) keepBudget(ctx context.Context) error {
	limit := int64(float64(r.cfg.MaxBufferBytes) * dataShare)
	held := r.dataBytes()
	r.sum.PeakHeldBytes = max(r.sum.PeakHeldBytes, held)
	// A flush adds its files' memory again while they encode, so flushing
	// at the limit stopped reading until they were done. Flushing early,
	// by what the last flush added, lets them encode while reading goes on.
	early := r.up.inflight.Load() == 0 && held+r.budgetLead > limit
	if held <= limit && !early {
		return nil
	}
	if open := held - r.up.inflight.Load(); open > limit/2 && r.writer.BufferedBytes() >= r.budgetRetryAt {
		minFiles := min(runtime.GOMAXPROCS(0), max(1, r.writer.OpenBuffers()/2))
		before := r.up.inflight.Load()
		files, err := r.writer.FlushLargest(int64(float64(r.writer.BufferedBytes())*budgetKeep), minBudgetFileBytes, minFiles, "budget")
		if uerr := r.upload(ctx, files); err == nil {
			err = uerr
		}
		if err != nil {
			return err
		}
		if len(files) > 0 {
			r.budgetLead = min(max(0, r.up.inflight.Load()-before), int64(float64(limit)*maxBudgetLead))
		}
		r.budgetRetryAt = 0
		if len(files) == 0 {
			// Every open buffer is below the smallest file worth writing;
			// looking for one again before they have grown would cost a
			// scan of all buffers per record.
			r.budgetRetryAt = r.writer.BufferedBytes() + minBudgetFileBytes
		}
		if len(files) == 0 && held > limit && r.up.inflight.Load() == 0 && !r.budgetWarned {
			// The budget cannot hold this many tables.
			r.budgetWarned = true
			r.log.Warn("memory budget too small for the open tables: buffers are kept past it rather than written as files of a few rows; raise --max-buffer-bytes",
				"budget", r.cfg.MaxBufferBytes, "held", held, "open_buffers", r.writer.OpenBuffers())
		}
	}
	for r.dataBytes() > limit && r.up.inflight.Load() > 0 {
		if err := r.up.waitProgress(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (r *runner) upload(ctx context.Context, files []*writer.File) error {
	return r.up.send(ctx, files)
}

// commit makes everything read so far durable, in the order the protocol
// needs: held records are released, every buffer is flushed, every file is
// uploaded, dead letters too (each after its intent), then each
// partition's checkpoint (fenced), and only then is the source told.
func (r *runner) commit(ctx context.Context, reason string) error {
	keys := make([]string, 0, len(r.held))
	for k := range r.held {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := r.releaseKey(ctx, k); err != nil && !errors.Is(err, ErrTooManyRejects) {
			return err
		}
	}
	files, err := r.writer.FlushAll(reason)
	if err != nil {
		return err
	}
	r.budgetRetryAt = 0
	if err := r.upload(ctx, files); err != nil {
		return err
	}
	keys = keys[:0]
	for k := range r.schemaDocs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := r.up.sendObject(ctx, k, r.schemaDocs[k]); err != nil {
			return err // an earlier upload's failure, which names its object, or the run's end
		}
		delete(r.schemaDocs, k)
	}
	if err := r.sendDeadLetters(ctx); err != nil {
		return err // as above; their own upload's failure comes from wait
	}
	if err := r.up.wait(); err != nil {
		return err
	}
	acks := map[string]int64{}
	var fenced error
	names := make([]string, 0, len(r.parts))
	for name := range r.parts {
		names = append(names, name)
	}
	sort.Strings(names)
	marks := r.releasedMarks() // the same for every file's checkpoint
	for _, name := range names {
		ps := r.parts[name]
		if ps.lastRead <= ps.cp.Offset {
			continue
		}
		ps.cp.Offset = ps.lastRead
		if r.perPartition {
			snap, err := json.Marshal(r.catalogs[name].Snapshot())
			if err != nil {
				return err
			}
			ps.cp.Catalog = snap
		} else {
			// Every file's checkpoint keeps them all: the files share one
			// catalog, and one file's records may open a version that
			// another's held DML was written under.
			ps.cp.WrittenVersions = marks
		}
		if err := ps.cp.Save(ctx, r.cfg.Store, r.cfg.Now()); err != nil {
			if !errors.Is(err, checkpoint.ErrFenced) {
				return err
			}
			// Lost to another instance: its files are withdrawn, and the
			// other partitions are still checkpointed (or found lost too)
			// before the run stops.
			r.withdraw(ctx, name)
			fenced = errors.Join(fenced, err)
			continue
		}
		intents, _ := r.up.takeIntents(name)
		if err := checkpoint.Settle(ctx, r.cfg.Store, intents); err != nil {
			r.log.Warn("could not remove settled intents; the next start removes them", "partition", name, "error", err)
		}
		acks[name] = ps.cp.Offset
	}
	if a, ok := r.cfg.Source.(acker); ok && len(acks) > 0 {
		if err := a.Ack(ctx, acks); err != nil {
			return errors.Join(fenced, err)
		}
	}
	if fenced != nil {
		return fenced
	}
	r.lastCommit = r.cfg.Now()
	if len(acks) > 0 {
		r.cfg.Observer.Checkpointed(r.cfg.Now())
		r.log.Info("checkpoint written", "reason", reason, "partitions", len(acks))
	}
	r.cfg.Observer.Buffered(r.dataBytes(), r.cfg.MaxBufferBytes)
	return nil
}

// filePartitioner is implemented by file sources: the partitions of
// their files, read to the end when the source ends.
type filePartitioner interface{ FilePartitions() []string }

// incompleteReporter is implemented by file sources: the records their
// files ended in, still being written, left for the next run.
type incompleteReporter interface {
	IncompleteRecords() []source.IncompleteRecord
}

// finish is the last commit of a run.
func (r *runner) finish(ctx context.Context) error {
	if ir, ok := r.cfg.Source.(incompleteReporter); ok {
		for _, rec := range ir.IncompleteRecords() {
			r.log.Warn("input file ends inside a record (no line ending, brackets left open), most likely one still being written: it is left for the next run, which reads it once it is complete",
				"file", rec.File, "line", rec.Line, "bytes", rec.Bytes)
		}
	}
	if fp, ok := r.cfg.Source.(filePartitioner); ok && r.sawEOF && !r.perPartition {
		ended := map[string]*partState{}
		for name, ps := range r.parts {
			ended[name] = ps
		}
		for _, name := range fp.FilePartitions() {
			// A file emptied since the last run has no records to bring
			// its checkpoint in. Only loaded for the warning below, not
			// claimed: nothing of it is written. What was read must be
			// committed whatever this finds.
			if ended[name] != nil {
				continue
			}
			if cp, err := checkpoint.Load(ctx, r.cfg.Store, name); err != nil {
				r.log.Warn("could not check an input file's checkpoint at the end of the run", "partition", name, "error", err)
			} else {
				ended[name] = &partState{cp: cp, lastRead: -1}
			}
		}
		for name, ps := range ended {
			if ps.cp.Found && ps.lastRead < ps.cp.Offset {
				r.log.Warn("input ended before its checkpoint: the file was replaced or truncated since an earlier run, and what it holds now up to the checkpoint was skipped as already exported; delete its checkpoint to export it again",
					"partition", name, "last_offset", ps.lastRead, "checkpoint_offset", ps.cp.Offset,
					"checkpoint", checkpoint.Key(name))
			}
		}
	}
	return r.commit(ctx, "shutdown")
}

// progressReporter is implemented by sources that know their size.
type progressReporter interface{ Progress() (done, total int64) }

func (r *runner) startProgress(ctx context.Context) (stop func()) {
	if r.cfg.ProgressEvery <= 0 {
		return func() {}
	}
	pr, sized := r.cfg.Source.(progressReporter)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(r.cfg.ProgressEvery)
		defer t.Stop()
		last, lastAt := int64(0), time.Now()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				// Every source reports its records; Kafka, which has no
				// size to measure against, only those.
				n := r.recordsRead.Load()
				args := []any{"records_read", n, "records_per_second", int64(float64(n-last) / now.Sub(lastAt).Seconds())}
				last, lastAt = n, now
				if sized {
					d, total := pr.Progress()
					args = append(args, "bytes_read", d)
					if total > 0 {
						args = append(args, "percent", fmt.Sprintf("%.1f", 100*float64(d)/float64(total)))
					}
				}
				r.log.Info("progress", args...)
			}
		}
	}()
	return func() { cancel(); <-done }
}
