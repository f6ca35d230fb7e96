// Package writer buffers row changes per table, schema version and date
// partition in Arrow builders and encodes them as Parquet files in memory.
// It never talks to storage: finished files are handed to the caller.
package writer

import (
	"fmt"
	"runtime/debug"
	"sort"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
	"github.com/lakehouse-exporter/lakehouse-exporter/parquetenc"
	"github.com/lakehouse-exporter/lakehouse-exporter/partition"
)

// Source locates a record in its input: a partition (a Kafka partition, an
// input file) and an offset within it.
type Source struct {
	Partition string // a safe path segment
	Offset    int64
}

// File is a finished Parquet file.
type File struct {
	Key             string // relative object key
	Data            []byte
	Table           string
	Version         int
	Rows            int
	Reason          string // why it was rolled: rows, bytes, age, interval, ddl, budget, rebalance, shutdown
	SourcePartition string
	FirstOffset     int64
	LastOffset      int64
	NewestOpTS      time.Time // the latest op_ts of its rows
	// Columns are the statistics of each Parquet leaf column, once
	// encoded.
	Columns []parquetenc.ColumnStats

	estimate int64          // buffered bytes, until encoded
	memBytes int64          // memory its rows hold, until encoded
	expands  int64          // what packed rows will take once unpacked to be encoded
	lean     bool           // the lean encoder writes it (EncodeMemoryBytes)
	enc      *pendingEncode // rows waiting to be encoded (Config.DeferEncode)
}

// Key identifies one open buffer.
type Key struct {
	Table     string
	Version   int
	TimePart  string
	Partition string
}

// Writer owns the open table buffers. It is not safe for concurrent use,
// except that File.Encode of a deferred file prepares its batch
// (Writer.prepare) on the encoding goroutine, which reads only the
// configuration, the codec and the version's file shapes (under their
// lock) beside the buffer it was handed.
type Writer struct {
	cfg        Config
	codec      compress.Compression
	buffers    map[Key]*buffer
	converters map[*arrowschema.Version]*converterPair
	buffered   int64

	partHour   int64 // the hour of the cached time partition
	part       string
	partCached bool

	enc    *parquetenc.Encoder
	arenas arenaPool // where files of packed rows are unpacked (arena.go)
	own    Converted // a record Append converts itself
}

// New validates cfg and returns a Writer.
func New(cfg Config) (*Writer, error) {
	codec, err := cfg.encoding()
	if err != nil {
		return nil, err
	}
	if cfg.MaxRows <= 0 {
		cfg.MaxRows = 1_000_000
	}
	if cfg.MaxPackedBytes <= 0 {
		cfg.MaxPackedBytes = 32 << 20
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = 128 << 20
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = 5 * time.Minute
	}
	if cfg.Granularity == 0 {
		cfg.Granularity = partition.Daily
	}
	if cfg.Allocator == nil {
		cfg.Allocator = memory.DefaultAllocator
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	enc, err := newEncoder(cfg, codec)
	if err != nil {
		return nil, err
	}
	return &Writer{cfg: cfg, codec: codec, enc: enc, buffers: map[Key]*buffer{}, converters: map[*arrowschema.Version]*converterPair{}}, nil
}

// NewEncoder returns the Parquet encoder of cfg's encoding settings
// (Compression, CompressionLevel, RowGroupRows, IntEncoding, Encoder,
// Allocator, Logger, EncoderObserver) as New makes it: files written by
// other jobs, such as compaction, are then encoded and stamped as the
// exporter's own.
func NewEncoder(cfg Config) (*parquetenc.Encoder, error) {
	codec, err := cfg.encoding()
	if err != nil {
		return nil, err
	}
	return newEncoder(cfg, codec)
}

// encoding validates the encoding settings and fills in their defaults.
func (cfg *Config) encoding() (compress.Compression, error) {
	codec, err := ParseCompression(cfg.Compression)
	if err != nil {
		return 0, err
	}
	if err := CheckCompressionLevel(cfg.Compression, cfg.CompressionLevel); err != nil {
		return 0, err
	}
	if cfg.CompressionLevel == 0 {
		cfg.CompressionLevel = compress.DefaultCompressionLevel
		if codec == compress.Codecs.Zstd {
			cfg.CompressionLevel = 1
		}
	}
	switch cfg.Encoder {
	case "":
		cfg.Encoder = EncoderLean
	case EncoderLean, EncoderArrow:
	default:
		return 0, fmt.Errorf("unknown Parquet encoder %q (want lean or arrow)", cfg.Encoder)
	}
	switch cfg.IntEncoding {
	case "":
		cfg.IntEncoding = IntEncodingDelta
	case IntEncodingDelta, IntEncodingPlain:
	default:
		return 0, fmt.Errorf("unknown integer encoding %q (want delta or plain)", cfg.IntEncoding)
	}
	if cfg.RowGroupRows <= 0 {
		cfg.RowGroupRows = 128 * 1024
	}
	return codec, nil
}

func newEncoder(cfg Config, codec compress.Compression) (*parquetenc.Encoder, error) {
	return parquetenc.New(parquetenc.Options{
		Compression:      codec,
		CompressionLevel: cfg.CompressionLevel,
		RowGroupRows:     cfg.RowGroupRows,
		PlainInts:        cfg.IntEncoding == IntEncodingPlain,
		PqarrowOnly:      cfg.Encoder == EncoderArrow,
		Allocator:        cfg.Allocator,
		CreatedBy:        createdBy(),
		Logger:           cfg.Logger,
		Observer:         cfg.EncoderObserver,
	})
}

// ForgetIdleVersions drops what the writer keeps for schema versions that
// have no open buffer (their converters). A caller that rebuilds its
// schema catalogs (the pipeline, after a rebalance) makes new versions,
// and the old ones' would stay for the life of the run. Files flushed
// and not yet encoded keep their own.
func (w *Writer) ForgetIdleVersions() {
	inUse := make(map[*arrowschema.Version]bool, len(w.buffers))
	for _, b := range w.buffers {
		inUse[b.version] = true
	}
	for v := range w.converters {
		if !inUse[v] {
			delete(w.converters, v)
		}
	}
}

// BufferedBytes is an estimate of the bytes held in open buffers.
func (w *Writer) BufferedBytes() int64 { return w.buffered }

// OpenBuffers is the number of open buffers (files being filled).
func (w *Writer) OpenBuffers() int { return len(w.buffers) }

// Append adds the row change rec, decoded under schema version v, to its
// buffer. A *cdc.RejectError means the record does not fit v and nothing
// was appended. Files completed by the append (the buffer reached its row
// or byte limit) are returned.
func (w *Writer) Append(v *arrowschema.Version, rec *cdc.Record, src Source) ([]*File, error) {
	return w.AppendConverted(v, rec, src, nil)
}

// AppendConverted is Append with rec converted ahead by a Preconverter
// (pre), which is used when it was converted under v; otherwise, or when
// pre is nil, rec is converted here.
func (w *Writer) AppendConverted(v *arrowschema.Version, rec *cdc.Record, src Source, pre *Converted) ([]*File, error) {
	conv := w.converters[v]
	if conv == nil {
		conv = &converterPair{recordConverter: newRecordConverter(v)}
		conv.seg, conv.segErr = partition.TableSegment(v.Table)
		w.converters[v] = conv
	}
	if !pre.Under(v) {
		conv.convertInto(v, rec, &w.own)
		pre = &w.own
	}
	if pre.err != nil {
		return nil, pre.err
	}
	var before []slot
	if pre.withBefore {
		before = pre.before
	}
	partTime := rec.OpTS
	if w.cfg.ProcessingTime {
		partTime = w.cfg.Now()
	}
	if conv.segErr != nil {
		return nil, cdc.Rejectf(cdc.ReasonBadTableName, "%v", conv.segErr)
	}
	seg := conv.seg
	key := Key{Table: v.Table, Version: v.Number, TimePart: w.timePartition(partTime), Partition: src.Partition}
	var files []*File
	b := conv.last
	if b == nil || b.closed || b.key != key {
		b = w.buffers[key]
	}
	if b != nil && b.version != v {
		// Same number, new schema: the refresh completed a provisional
		// version differently. Close the file of the old schema first.
		f, err := w.flush(b, "ddl")
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		b = nil
	}
	if b == nil {
		b = newBuffer(w.cfg.Allocator, key, v, seg, src, w.cfg.Now(), conv.hint, len(w.buffers) >= stageAbove)
		w.buffers[key] = b
		if !conv.announced && w.cfg.FileSchemaAhead != nil {
			conv.announced = true
			w.cfg.FileSchemaAhead(v)
		}
	}
	conv.last = b
	added := b.append(rec, pre.row, before, pre.changed, src, len(w.buffers) > stageAbove)
	w.buffered += added
	switch {
	case b.rows >= w.cfg.MaxRows:
		f, err := w.flush(b, "rows")
		if err != nil {
			return files, err
		}
		files = append(files, f)
	case b.bytes >= w.cfg.MaxBytes, len(b.packed) > 0 && b.bytes >= w.cfg.MaxPackedBytes:
		f, err := w.flush(b, "bytes")
		if err != nil {
			return files, err
		}
		files = append(files, f)
	}
	return files, nil
}

// timePartition is Granularity.TimePartition, remembered for the current
// hour: consecutive changes nearly always share it.
func (w *Writer) timePartition(t time.Time) string {
	hour := t.Unix() / 3600
	if t.Unix() < 0 && t.Unix()%3600 != 0 {
		hour-- // floor, so that an hour before 1970 is one hour too
	}
	if w.partCached && hour == w.partHour {
		return w.part
	}
	w.partHour, w.part, w.partCached = hour, w.cfg.Granularity.TimePartition(t), true
	return w.part
}

// FlushTable closes every open buffer of table (all versions and dates).
func (w *Writer) FlushTable(table, reason string) ([]*File, error) {
	return w.flushWhere(func(b *buffer) bool { return b.key.Table == table }, reason)
}

// Oldest returns when the oldest open buffer got its first row.
func (w *Writer) Oldest() (time.Time, bool) {
	var oldest time.Time
	for _, b := range w.buffers {
		if oldest.IsZero() || b.created.Before(oldest) {
			oldest = b.created
		}
	}
	return oldest, !oldest.IsZero()
}

// MaxAge is the configured file age limit.
func (w *Writer) MaxAge() time.Duration { return w.cfg.MaxAge }

// FlushDue closes buffers older than MaxAge.
func (w *Writer) FlushDue() ([]*File, error) {
	now := w.cfg.Now()
	return w.flushWhere(func(b *buffer) bool { return now.Sub(b.created) >= w.cfg.MaxAge }, "age")
}

// FlushAll closes every open buffer.
func (w *Writer) FlushAll(reason string) ([]*File, error) {
	return w.flushWhere(func(*buffer) bool { return true }, reason)
}

// FlushLargest closes the largest buffers until at most target bytes stay
// buffered and at least minFiles are closed (those past the target only
// while they hold half of what the first did), but never one holding less
// than minBytes: a memory budget too small for the open tables must not
// turn every record into a file.
func (w *Writer) FlushLargest(target, minBytes int64, minFiles int, reason string) ([]*File, error) {
	// Sorted once: a budget flush takes a tenth of hundreds of buffers,
	// and looking for the largest again for each was a scan per file.
	bySize := make([]*buffer, 0, len(w.buffers))
	for _, b := range w.buffers {
		bySize = append(bySize, b)
	}
	sort.Slice(bySize, func(i, j int) bool {
		if bySize[i].bytes != bySize[j].bytes {
			return bySize[i].bytes > bySize[j].bytes
		}
		return bySize[i].key.less(bySize[j].key) // ties in a stable order
	})
	var files []*File
	for _, b := range bySize {
		if w.buffered <= target && len(files) >= minFiles {
			break
		}
		if b.bytes < minBytes || (w.buffered <= target && len(files) > 0 && 2*b.bytes < files[0].estimate) {
			break // the files asked for beyond the target are not worth it this small
		}
		f, err := w.flush(b, reason)
		if err != nil {
			return files, err
		}
		files = append(files, f)
	}
	return files, nil
}

func (w *Writer) flushWhere(pred func(*buffer) bool, reason string) ([]*File, error) {
	var due []*buffer
	for _, b := range w.buffers {
		if pred(b) {
			due = append(due, b)
		}
	}
	// A stable order makes runs reproducible.
	sort.Slice(due, func(i, j int) bool { return due[i].key.less(due[j].key) })
	var files []*File
	for _, b := range due {
		f, err := w.flush(b, reason)
		if err != nil {
			return files, err
		}
		files = append(files, f)
	}
	return files, nil
}

func (k Key) less(o Key) bool {
	if k.Table != o.Table {
		return k.Table < o.Table
	}
	if k.Version != o.Version {
		return k.Version < o.Version
	}
	if k.TimePart != o.TimePart {
		return k.TimePart < o.TimePart
	}
	return k.Partition < o.Partition
}

// Close releases every open buffer without writing it.
func (w *Writer) Close() {
	for k, b := range w.buffers {
		b.release()
		b.closed = true
		delete(w.buffers, k)
	}
	w.buffered = 0
	w.arenas.close()
}

func (w *Writer) flush(b *buffer, reason string) (*File, error) {
	conv := w.converters[b.version]
	if conv != nil && w.cfg.FileSchema != nil {
		conv.shapesMu.Lock()
		asked := conv.fileSchema != nil
		conv.shapesMu.Unlock()
		if !asked {
			sc, err := w.cfg.FileSchema(b.version)
			if err != nil {
				return nil, fmt.Errorf("table %s version %d: %w", b.key.Table, b.key.Version, err)
			}
			conv.shapesMu.Lock()
			conv.fileSchema = sc
			conv.shapesMu.Unlock()
		}
	}
	delete(w.buffers, b.key)
	b.closed = true
	w.buffered -= b.bytes
	if conv != nil {
		// Only a file that filled up predicts the next one; a file cut
		// short by the budget, age or a commit would make the next
		// reserve memory it may never use, against the budget. Packed
		// rows say nothing of their columns' sizes until unpacked, and
		// the next buffer of many would pack its rows too.
		conv.hint = nil
		if (reason == "rows" || reason == "bytes") && len(b.packed) == 0 {
			conv.hint = b.sizeHint()
		}
	}
	f := &File{
		Key:             partition.DataDir(b.seg, b.key.Version, b.key.TimePart) + "/" + partition.DataFileName(b.key.Partition, b.firstOffset, w.cfg.Run),
		Table:           b.key.Table,
		Version:         b.key.Version,
		Rows:            b.rows,
		Reason:          reason,
		SourcePartition: b.key.Partition,
		FirstOffset:     b.firstOffset,
		LastOffset:      b.lastOffset,
		NewestOpTS:      b.newestOpTS,
		estimate:        b.bytes,
		lean:            w.cfg.Encoder == EncoderLean,
	}
	// The buffer itself waits, and becomes a record batch when it is
	// encoded (with DeferEncode, on the goroutine that encodes it): packed
	// rows are a third of the columns they become, which only the
	// encoding needs, one file per encoding goroutine at a time; and
	// making the batch (the metacolumns, the before image spread to
	// Arrow's layout) took the reading goroutine away from its records
	// while the decoders waited (4 tables: 0.74 s of CPU).
	f.enc = &pendingEncode{buf: b, conv: conv, w: w}
	// op_type and src_partition are written with the batch.
	f.memBytes = b.heldBytes() + int64(b.rows)*int64(len("REFRESH")+len(b.key.Partition)+8)
	if len(b.packed) > 0 {
		// The estimate is of the values; unpacked columns hold about a
		// quarter more (offsets, bitmaps, the strings' reserve).
		f.expands = b.bytes + b.bytes/4
	}
	if !w.cfg.DeferEncode {
		if err := f.Encode(); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// pendingEncode is a finished record batch waiting to become Parquet, or
// a flushed buffer that becomes one when it is encoded.
type pendingEncode struct {
	// buf, when set, is the flushed buffer that prepare makes the batch
	// of (with conv and w) on the encoding goroutine.
	buf  *buffer
	conv *converterPair
	w    *Writer

	batch arrow.RecordBatch
	kv    [][2]string
	enc   *parquetenc.Encoder
	shape *parquetenc.Shape // schema, properties and metadata the file is encoded with
}

// prepare turns a buffer into an immutable record batch; encoding it can
// then happen on another goroutine while the buffer's builders are gone.
// conv is the version's (nil in tests that build buffers alone); prepare
// reads nothing else of the writer that Append changes, so a buffer taken
// out of it can be prepared on any goroutine.
func (w *Writer) prepare(b *buffer, conv *converterPair) *pendingEncode {
	rec := b.newRecordBatch()
	defer rec.Release()
	// A column the source declares NOT NULL is written REQUIRED unless this
	// file holds a null in it (a partial image leaves it out): the data
	// wins over the declaration, and readers union both kinds of file.
	var nulls []byte
	for i, f := range b.version.Schema.Fields() {
		if !f.Nullable {
			nulls = append(nulls, '0'+byte(b2i(rec.Column(i).NullN() > 0)))
		}
	}
	shapes := map[string]*parquetenc.Shape{}
	base := b.version.Schema
	if conv != nil {
		conv.shapesMu.Lock()
		defer conv.shapesMu.Unlock()
		if conv.shapes == nil {
			conv.shapes = map[string]*parquetenc.Shape{}
		}
		shapes = conv.shapes
		if conv.fileSchema != nil {
			base = conv.fileSchema
		}
	}
	shape := shapes[string(nulls)]
	if shape == nil {
		fields := append([]arrow.Field(nil), base.Fields()...)
		for i := range fields {
			if !fields[i].Nullable && rec.Column(i).NullN() > 0 {
				fields[i].Nullable = true
			}
		}
		md := base.Metadata()
		shape = w.enc.NewShape(arrow.NewSchema(fields, &md), b.key.Table, b.key.Version)
		shapes[string(nulls)] = shape
	}
	return &pendingEncode{
		batch: array.NewRecordBatch(shape.Schema(), rec.Columns(), rec.NumRows()),
		shape: shape,
		kv: [][2]string{
			{"lakehouse.table", b.key.Table},
			{"lakehouse.schema_version", strconv.Itoa(b.key.Version)},
			{"lakehouse.source_partition", b.key.Partition},
			{"lakehouse.first_offset", strconv.FormatInt(b.firstOffset, 10)},
			{"lakehouse.last_offset", strconv.FormatInt(b.lastOffset, 10)},
			{"lakehouse.first_pos", b.firstPos},
			{"lakehouse.last_pos", string(b.lastPos)},
		},
		enc: w.enc,
	}
}

// Encode turns the file's rows into Parquet bytes (Data), once; it is safe
// to call from any goroutine, but not from two at once.
func (f *File) Encode() error {
	if f.enc == nil {
		return nil
	}
	e := f.enc
	f.enc = nil
	if b := e.buf; b != nil {
		if b.opTS == nil && e.w != nil {
			// The columns are made now, from packed rows, and are
			// garbage once the file is encoded: into an arena, taken
			// back after the batch is released (below).
			a := e.w.arenas.get(e.w.cfg.Allocator, int(e.w.cfg.MaxPackedBytes/4))
			b.colMem = a
			defer e.w.arenas.put(a)
		}
		e = e.w.prepare(b, e.conv)
		b.release()
	}
	defer e.batch.Release()
	res, err := e.enc.Encode(e.shape, e.batch, e.kv)
	if err != nil {
		return fmt.Errorf("encode %s: %w", f.Key, err)
	}
	f.Data, f.Columns = res.Data, res.Columns
	return nil
}

// Release frees the rows of a file that will not be encoded.
func (f *File) Release() {
	switch {
	case f.enc == nil:
	case f.enc.buf != nil:
		f.enc.buf.release()
	default:
		f.enc.batch.Release()
	}
	f.enc = nil
}

// MemoryBytes is the memory the file's rows held when it was flushed: the
// packed blocks and the allocated size of the columns, which grow by
// doubling, with the metacolumns written with its batch (the lists' and
// Qlik's builders, rarely more than a null a row, not counted).
func (f *File) MemoryBytes() int64 { return f.memBytes }

// EncodeMemoryBytes is what encoding the file takes beside the memory
// the counting allocator sees (its rows', and the columns packed rows
// are unpacked into): the encoder's pages and output, in byte slices.
// pqarrow's took up to about the file's own Arrow memory. The lean
// encoder's are its output and pooled scratch: on the benchmark's rows
// 0.3 (50,000 rows) of the file's memory, and for values that do not
// compress the values' own size, which the writer's estimate of the
// buffer is; so the estimate is counted when it is less. Counting all of
// the file's memory held reading back for a quarter of the main loop's
// time on the 4-table stream (a runtime trace's waits in the budget).
func (f *File) EncodeMemoryBytes() int64 {
	n := max(f.memBytes, f.expands)
	if f.lean {
		n = min(n, f.estimate)
	}
	return n
}

// Size is the file's encoded size, or an estimate before encoding.
func (f *File) Size() int64 {
	if f.Data != nil {
		return int64(len(f.Data))
	}
	return f.estimate
}

// applyQlikMasks marks the columns that columnMask leaves out as absent
// (never as null: Qlik sends null for a column it could not replicate),
// unless the message carries a value for them, and returns the names of
// the columns changeMask names.
//
// A mask's bits are the ordinals of the table's metadata message. Columns
// inferred from the data have no ordinals (theirs is the order they were
// first seen in), so their masks are not read: read by that order they
// dropped values that were sent and named columns that were not changed.
func applyQlikMasks(v *arrowschema.Version, rec *cdc.Record, conv *recordConverter, withBefore bool) ([]string, error) {
	if v.Metadata.Inferred {
		return nil, nil
	}
	if rec.Qlik.ColumnMask != "" {
		if err := conv.columnMask.parse("columnMask", rec.Qlik.ColumnMask, v); err != nil {
			return nil, err
		}
		for _, i := range conv.columnMask.absentColumns(v) {
			// A value the message does carry is kept: the mask says a
			// null may stand for a value not replicated, not that a
			// value sent is void.
			if conv.row.slots[i].state != slotSet {
				conv.row.slots[i].state = slotAbsent
			}
			if withBefore && conv.before.slots[i].state != slotSet {
				conv.before.slots[i].state = slotAbsent
			}
		}
	}
	if rec.Qlik.ChangeMask == "" {
		return nil, nil
	}
	m := &conv.changeMask
	if err := m.parse("changeMask", rec.Qlik.ChangeMask, v); err != nil {
		return nil, err
	}
	if m.names == nil {
		m.names = []string{}
		for _, o := range m.mask.Ordinals() {
			m.names = append(m.names, v.FieldName(o-1)) // as the data files name it
		}
	}
	return m.names, nil
}

// createdBy names the writer in each file's footer in the form parquet-mr
// parses ("app version V (build B)"): Spark warns of a created_by it
// cannot parse and trusts no deprecated statistics of such files.
func createdBy() string {
	version, build := "devel", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			version = v
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				build = " (build " + s.Value[:12] + ")"
			}
		}
	}
	return "lakehouse-exporter version " + version + build
}
