// Package pipeline wires the exporter together: source → decode → catalog
// → table buffers → Parquet → store, with dead letters and checkpoints.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
	"github.com/lakehouse-exporter/lakehouse-exporter/checkpoint"
	"github.com/lakehouse-exporter/lakehouse-exporter/partition"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
	"github.com/lakehouse-exporter/lakehouse-exporter/writer"
)

// Store is what the pipeline needs from object storage.
type Store interface {
	Put(ctx context.Context, key string, data []byte) error
	Get(ctx context.Context, key string) ([]byte, error)
	String() string
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
	// InferColumns lets Qlik data messages of a table without a metadata
	// message define its columns (all text) and add new ones.
	InferColumns bool
	// ProgressEvery logs progress at this interval; 0 turns it off.
	ProgressEvery time.Duration
	Logger        *slog.Logger
	Now           func() time.Time
}

// Summary is what a run did.
type Summary struct {
	Records      int64            // messages read
	Skipped      int64            // DML already durable from an earlier run
	RowsByTable  map[string]int64 // rows written to files
	Rejected     int64
	RejectedBy   map[cdc.Reason]int64
	Files        int
	Bytes        int64
	Tables       int
	SchemaEvents int
	Elapsed      time.Duration
}

// ErrTooManyRejects is wrapped by Run's error when MaxRejects is exceeded.
var ErrTooManyRejects = errors.New("too many rejected records")

type heldRecord struct {
	data []byte
	msg  source.Message
	at   time.Time
}

type runner struct {
	cfg     Config
	log     *slog.Logger
	catalog *arrowschema.Catalog
	writer  *writer.Writer
	dlq     *deadLetters
	rec     cdc.Record
	stream  []byte
	sum     Summary
	durable map[string]int64 // source partition → last durable offset from earlier runs
	last    map[string]int64 // source partition → last offset read in this run
	held    map[string][]heldRecord
	heldN   int
	heldB   int64
	logged  map[cdc.Reason]bool
	up      *uploader
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
	if cfg.Writer.Now == nil {
		cfg.Writer.Now = cfg.Now
	}
	w, err := writer.New(cfg.Writer)
	if err != nil {
		return Summary{}, err
	}
	defer w.Close()
	r := &runner{
		cfg: cfg, log: cfg.Logger, catalog: arrowschema.NewCatalog(cfg.Schema), writer: w, dlq: newDeadLetters(cfg.Now),
		sum:  Summary{RowsByTable: map[string]int64{}, RejectedBy: map[cdc.Reason]int64{}},
		last: map[string]int64{}, held: map[string][]heldRecord{}, logged: map[cdc.Reason]bool{},
	}
	start := cfg.Now()
	cp, err := checkpoint.Load(ctx, cfg.Store)
	if err != nil {
		return r.sum, err
	}
	r.up = newUploader(ctx, cfg.Store, cfg.UploadWorkers, cfg.UploadQueueBytes, r.log, &r.sum)
	defer r.up.close() // on every path: no upload goroutine outlives Run
	r.durable = cp.Offsets()

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
	r.sum.Tables = r.catalog.Tables()
	return r.sum, err
}

func (r *runner) loop(ctx context.Context) error {
	lastAgeCheck := r.cfg.Now()
	for {
		m, err := r.cfg.Source.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read input: %w", err)
		}
		r.sum.Records++
		r.last[m.Partition] = m.Offset
		if err := r.handle(ctx, m, m.Value, false); err != nil {
			return err
		}
		if r.sum.Records%1024 == 0 {
			if now := r.cfg.Now(); now.Sub(lastAgeCheck) >= time.Second {
				lastAgeCheck = now
				if err := r.periodic(ctx, now); err != nil {
					return err
				}
			}
		}
	}
}

// handle processes one record. replay is true for a held record being
// released, which must not be held again.
func (r *runner) handle(ctx context.Context, m *source.Message, data []byte, replay bool) error {
	if m.Oversized {
		return r.reject(m, "", cdc.Rejectf(cdc.ReasonOversized, "record of %d bytes is larger than the limit", m.Size))
	}
	if err := r.cfg.Decoder.Decode(data, &r.rec); err != nil {
		if rej, ok := cdc.AsReject(err); ok {
			return r.reject(m, r.rec.Table, rej)
		}
		return err
	}
	rec := &r.rec
	switch rec.Class {
	case cdc.ClassSchema:
		if err := r.catalog.ApplySchemaRecord(rec.SchemaID, rec.Body); err != nil {
			return r.reject(m, "", cdc.Rejectf(cdc.ReasonBadMetadata, "%v", err))
		}
	case cdc.ClassStreamMetadata:
		if string(r.stream) != string(rec.Body) {
			r.stream = append(r.stream[:0], rec.Body...)
			r.log.Info("stream metadata", "source", m.Position, "record", string(rec.Body))
		}
	case cdc.ClassObjectMetadata:
		ev, err := r.catalog.ApplyMetadata(rec.Metadata, rec.Pos, rec.OpTS)
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
		return r.release(ctx, table, false)
	case cdc.ClassDDL:
		ev, err := r.catalog.ApplyDDL(rec.Table, rec.DDL.Statement, rec.Pos, rec.OpTS)
		if err != nil {
			if rej, ok := cdc.AsReject(err); ok {
				return r.reject(m, rec.Table, rej)
			}
			return err
		}
		return r.schemaEvent(ctx, ev)
	case cdc.ClassDML:
		if last, ok := r.durable[m.Partition]; ok && m.Offset <= last {
			r.sum.Skipped++
			return nil
		}
		v := r.catalog.Current(rec.Table)
		if r.cfg.InferColumns && rec.Format == cdc.FormatQlik && (v == nil || v.Metadata.Inferred) {
			var err error
			if v, err = r.infer(ctx, v, rec, m); err != nil {
				return err
			}
		}
		if !replay && (v == nil || v.Hold || len(r.held[rec.Table]) > 0) {
			return r.hold(ctx, m, data, rec.Table)
		}
		if v == nil {
			return r.reject(m, rec.Table, cdc.Rejectf(cdc.ReasonNoMetadata, "no OBJECT_METADATA for %s arrived before the hold limit or the end of the input", rec.Table))
		}
		if !rec.HasOpTS {
			// A Qlik full-load row has no timestamp: date it by its
			// table's metadata message, which Qlik sends at load time.
			rec.OpTS = v.OpenedAtTS
			if rec.OpTS.IsZero() {
				rec.OpTS = r.cfg.Now()
			}
		}
		files, err := r.writer.Append(v, rec, writer.Source{Partition: m.Partition, Offset: m.Offset})
		if err != nil {
			if rej, ok := cdc.AsReject(err); ok {
				return r.reject(m, rec.Table, rej)
			}
			return err
		}
		return r.upload(ctx, files)
	}
	return nil
}

// infer builds a table's columns from the Qlik data messages themselves,
// when no metadata message is available and config allows it: every column
// is text (hints refine them), and a message bringing new columns opens a
// new version with them added.
func (r *runner) infer(ctx context.Context, v *arrowschema.Version, rec *cdc.Record, m *source.Message) (*arrowschema.Version, error) {
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
	ev, err := r.catalog.ApplyMetadata(md, rec.Pos, rec.OpTS)
	if err != nil {
		if rej, ok := cdc.AsReject(err); ok {
			return nil, r.reject(m, rec.Table, rej)
		}
		return nil, err
	}
	if err := r.schemaEvent(ctx, ev); err != nil {
		return nil, err
	}
	return r.catalog.Current(rec.Table), nil
}

func (r *runner) schemaEvent(ctx context.Context, ev *arrowschema.Event) error {
	if ev == nil {
		return nil
	}
	r.sum.SchemaEvents++
	v := ev.Version
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
	if err := r.cfg.Store.Put(ctx, key, describeVersion(v, r.stream, r.cfg.Now())); err != nil {
		return fmt.Errorf("write schema %s: %w", key, err)
	}
	kind := map[arrowschema.EventKind]string{arrowschema.EventOpened: "opened", arrowschema.EventReplaced: "replaced", arrowschema.EventCompleted: "completed"}[ev.Kind]
	r.log.Info("schema version "+kind, "table", v.Table, "version", v.Number, "columns", len(v.Columns),
		"provisional", v.Provisional, "holding", v.Hold, "ddl", v.DDL, "pos", v.OpenedAtPos)
	return nil
}

// hold keeps a DML record until its table's metadata arrives.
func (r *runner) hold(ctx context.Context, m *source.Message, data []byte, table string) error {
	h := heldRecord{data: append([]byte(nil), data...), msg: *m, at: r.cfg.Now()}
	h.msg.Value = h.data
	r.held[table] = append(r.held[table], h)
	r.heldN++
	r.heldB += int64(len(h.data))
	if len(r.held[table]) == 1 {
		r.log.Info("holding DML until metadata arrives", "table", table, "source", m.Position)
	}
	if r.heldN > r.cfg.HoldMaxRecords || r.heldB > r.cfg.HoldMaxBytes {
		return r.releaseOldest(ctx)
	}
	return nil
}

// release replays the held records of table. With force, they are decoded
// with whatever version is in force (or rejected if none); otherwise only
// when the table has a version that does not hold.
func (r *runner) release(ctx context.Context, table string, force bool) error {
	held := r.held[table]
	if len(held) == 0 {
		return nil
	}
	if v := r.catalog.Current(table); !force && (v == nil || v.Hold) {
		return nil
	}
	delete(r.held, table)
	r.log.Info("releasing held DML", "table", table, "records", len(held), "forced", force)
	for i := range held {
		r.heldN--
		r.heldB -= int64(len(held[i].data))
		if err := r.handle(ctx, &held[i].msg, held[i].data, true); err != nil {
			return err
		}
	}
	return nil
}

// releaseOldest frees the table holding the oldest record when a hold
// bound is reached.
func (r *runner) releaseOldest(ctx context.Context) error {
	var oldest string
	var at time.Time
	for t, h := range r.held {
		if oldest == "" || h[0].at.Before(at) {
			oldest, at = t, h[0].at
		}
	}
	r.log.Warn("hold limit reached: releasing DML without refreshed metadata", "table", oldest)
	return r.release(ctx, oldest, true)
}

func (r *runner) periodic(ctx context.Context, now time.Time) error {
	for t, h := range r.held {
		if now.Sub(h[0].at) >= r.cfg.HoldMaxAge {
			r.log.Warn("hold time limit reached: releasing DML without refreshed metadata", "table", t)
			if err := r.release(ctx, t, true); err != nil {
				return err
			}
		}
	}
	files, err := r.writer.FlushDue()
	if err != nil {
		return err
	}
	return r.upload(ctx, files)
}

func (r *runner) reject(m *source.Message, table string, rej *cdc.RejectError) error {
	r.sum.Rejected++
	r.sum.RejectedBy[rej.Reason]++
	r.dlq.add(m, table, rej)
	if !r.logged[rej.Reason] {
		r.logged[rej.Reason] = true
		r.log.Warn("record rejected to the dead-letter output (further rejects of this kind are counted, not logged)",
			"reason", rej.Reason, "error", rej.Detail, "source", m.Position)
	}
	if r.cfg.MaxRejects >= 0 && r.sum.Rejected > int64(r.cfg.MaxRejects) {
		return fmt.Errorf("%w: %d rejected, more than --max-rejects %d; see the _dlq/ folder of the sink", ErrTooManyRejects, r.sum.Rejected, r.cfg.MaxRejects)
	}
	return nil
}

func (r *runner) upload(ctx context.Context, files []*writer.File) error {
	return r.up.send(ctx, files)
}

// finish releases held records, flushes every buffer, writes the dead
// letters and then the checkpoint: the checkpoint comes last so that it
// never claims more than is in storage.
func (r *runner) finish(ctx context.Context) error {
	tables := make([]string, 0, len(r.held))
	for t := range r.held {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	for _, t := range tables {
		if err := r.release(ctx, t, true); err != nil && !errors.Is(err, ErrTooManyRejects) {
			return err
		}
	}
	files, err := r.writer.FlushAll("shutdown")
	if err != nil {
		return err
	}
	if err := r.upload(ctx, files); err != nil {
		return err
	}
	// The checkpoint may only claim what is in storage: wait for uploads.
	if err := r.up.close(); err != nil {
		return err
	}
	for key, data := range r.dlq.drain() {
		if err := r.cfg.Store.Put(ctx, key, data); err != nil {
			return fmt.Errorf("write dead letters %s: %w", key, err)
		}
	}
	cp := checkpoint.Checkpoint{}
	for part, off := range r.durable {
		cp.Set(part, off)
	}
	for part, off := range r.last {
		cp.Set(part, off)
	}
	return checkpoint.Save(ctx, r.cfg.Store, cp, r.cfg.Now())
}

// progressReporter is implemented by sources that know their size.
type progressReporter interface{ Progress() (done, total int64) }

func (r *runner) startProgress(ctx context.Context) (stop func()) {
	pr, ok := r.cfg.Source.(progressReporter)
	if !ok || r.cfg.ProgressEvery <= 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(r.cfg.ProgressEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				d, total := pr.Progress()
				args := []any{"bytes_read", d}
				if total > 0 {
					args = append(args, "percent", fmt.Sprintf("%.1f", 100*float64(d)/float64(total)))
				}
				r.log.Info("progress", args...)
			}
		}
	}()
	return func() { cancel(); <-done }
}
