package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
	"github.com/lakehouse-exporter/lakehouse-exporter/partition"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
	"github.com/lakehouse-exporter/lakehouse-exporter/writer"
)

// loop reads until the source ends or stopCtx is cancelled. A stop only
// ends fetching: the record in hand is processed with ctx, which the stop
// does not cancel (only the shutdown's deadline ends it), so a shutdown
// never leaves half-done work.
func (r *runner) loop(stopCtx, ctx context.Context) error {
	st := &loopState{ctx: ctx, stopCtx: stopCtx, lastAgeCheck: r.cfg.Now()}
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
	p := newPrefetcher(stopCtx, r.cfg.Source, r.cfg.NewDecoder, r.cfg.DecodeWorkers, r.board, r.cats.perPartition)
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
		return true, fmt.Errorf("%w: %w", ErrReadInput, err)
	}
	if m.Control != nil {
		return false, r.control(ctx, m.Control)
	}
	ps, err := r.partition(ctx, m.Partition)
	if err != nil {
		return true, err
	}
	if m.Skip {
		// Offsets without a record to export (transaction markers, an
		// aborted transaction, records compaction removed): read, so that
		// a checkpoint covers them.
		ps.Read(m.Offset)
		return false, nil
	}
	r.sum.Records++
	r.read.count.Store(r.sum.Records)
	r.cfg.Observer.RecordRead(m.Partition)
	if m.Lag >= 0 && (m.Lag == 0 || r.sum.Records%64 == 0) {
		r.cfg.Observer.SourceLag(m.Partition, m.Lag)
	}
	ps.Read(m.Offset)
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
		r.cfg.Observer.Buffered(r.budget.dataBytes(), r.cfg.MaxBufferBytes)
	}
	// The clock is read every few records: a source that is slow but
	// never idle for a second (ErrIdle, above) would otherwise wait 1,024
	// records for its age flushes and commit rounds, minutes apart.
	if r.sum.Records%16 == 0 {
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
	if !m.Oversized && m.Damaged == "" {
		err = r.cfg.Decoder.Decode(data, &r.rec)
	}
	return r.handleDecoded(ctx, m, data, &r.rec, nil, err, replay)
}

// handleDecoded processes one record that a decoder turned into rec (or
// failed to, with decErr); pre, if not nil, is rec converted ahead.
func (r *runner) handleDecoded(ctx context.Context, m *source.Message, data []byte, rec *cdc.Record, pre *writer.Converted, decErr error, replay bool) error {
	if m.Oversized {
		return r.reject(m, "", cdc.Rejectf(cdc.ReasonOversized, "record of %d bytes is larger than the limit; the dead letter keeps its first %d bytes, the other %d are dropped", m.Size, len(m.Value), m.Size-int64(len(m.Value))))
	}
	if m.Damaged != "" {
		return r.reject(m, "", cdc.Rejectf(cdc.ReasonMalformedJSON, "%s", m.Damaged))
	}
	if decErr != nil {
		if rej, ok := cdc.AsReject(decErr); ok {
			return r.reject(m, rec.Table, rej)
		}
		return decErr
	}
	catalog := r.cats.of(m.Partition)
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
		if rej := r.checkTableName(rec.Table); rej != nil {
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
		if rej := r.checkTableName(rec.Table); rej != nil {
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
			if !v.Written() && !r.cats.perPartition {
				// With several input files, whether these rows come
				// before the refresh depends on the order the files are
				// read in: a rerun that reads a grown file's refresh
				// first must still know (markReleased), so the
				// checkpoints say it, as for rows a hold limit released.
				r.commits.MarkReleased(versionMark(v))
			}
			v.MarkWritten()
		}
		if v == nil {
			// Its metadata was refused for the name, or is yet to come
			// (or to be inferred from this record): not held for, nor
			// inferred into, a table that cannot be written.
			if rej := r.checkTableName(rec.Table); rej != nil {
				return r.reject(m, rec.Table, rej)
			}
		}
		if r.cfg.InferColumns && rec.Format == cdc.FormatQlik && (v == nil || v.Metadata.Inferred) {
			// Also for a record skipped below: its columns are metadata,
			// replayed like a metadata record's, so that a rerun builds
			// the versions the first run did.
			var err error
			if v, err = r.infer(ctx, catalog, v, rec, m); err != nil {
				if errors.Is(err, errRejected) {
					return nil // dead-lettered once, not held to be rejected again
				}
				return err
			}
		}
		if ps := r.commits.Partition(m.Partition); ps != nil && ps.Durable(m.Offset) {
			// durable since an earlier run: metadata above was replayed,
			// the row change is not written again
			r.sum.Skipped++
			return nil
		}
		if !replay && (v == nil || v.Hold || r.held.holding(r.heldKey(m.Partition, rec.Table))) {
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
			r.board.note(r.cats.key(m.Partition), rec.Table, v)
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
		return r.budget.keep(ctx)
	}
	return nil
}

// checkTableName refuses a table whose name has no folder of the layout
// (partition.TableSegment), or, with a catalog, no Iceberg identifier: its
// files could be neither written, published nor recovered, and a failed
// round would stop the run and every later one.
func (r *runner) checkTableName(table string) *cdc.RejectError {
	seg, err := partition.TableSegment(table)
	if err != nil {
		return cdc.Rejectf(cdc.ReasonBadTableName, "%v", err)
	}
	if r.ice != nil {
		if _, err := r.ice.pub.Identifier(table); err != nil {
			return cdc.Rejectf(cdc.ReasonBadTableName, "no Iceberg table name: %v", err)
		}
		if err := r.ice.pub.CheckSource(r.ice.ctx, table); err != nil {
			return cdc.Rejectf(cdc.ReasonBadTableName, "no Iceberg table of its own: %v", err)
		}
		if err := tables.CheckDataFolder(r.cfg.Store.String(), seg); err != nil {
			return cdc.Rejectf(cdc.ReasonBadTableName, "table %q cannot be an Iceberg table here: %v", table, err)
		}
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
	if r.ice != nil {
		r.ice.noteVersion(v) // its renames, for the next version that writes a file
	}
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

func (r *runner) reject(m *source.Message, table string, rej *cdc.RejectError) error {
	if ps := r.commits.Partition(m.Partition); ps != nil && ps.Durable(m.Offset) {
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

func (r *runner) upload(ctx context.Context, files []*writer.File) error {
	return r.up.send(ctx, files)
}
