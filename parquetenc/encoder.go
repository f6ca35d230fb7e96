// Package parquetenc turns a finished batch of rows (Arrow arrays, their
// schema and key/value metadata) into the bytes of a Parquet file and
// per-column statistics (min/max, nulls, NaNs, value counts and sizes),
// which the lake's table metadata can use as data file metrics.
//
// Pages are written by the package's own encoder for the column shapes the
// exporter produces (flat primitives, a struct of primitives, a list of
// primitives; lean.go says why), and by arrow-go's pqarrow for any other
// shape, which is logged once per table and schema version and counted
// through Observer. An Encoder holds all the state it reuses (scratch
// memory, zstd encoders, helper goroutine tokens); nothing is process-wide,
// and arrow-go's registered codecs are left as they are.
package parquetenc

import (
	"bytes"
	"hash/maphash"
	"log/slog"
	"math"
	"runtime"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	pqschema "github.com/apache/arrow-go/v18/parquet/schema"
)

// Options configure an Encoder. The zero value writes uncompressed files,
// 64-bit integers DELTA_BINARY_PACKED, with the lean encoder where it can.
type Options struct {
	Compression      compress.Compression // the codec; the zero value is uncompressed
	CompressionLevel int                  // the codec's; 0 for its default
	RowGroupRows     int64                // rows per row group; default 128 Ki
	// PlainInts writes 64-bit integers without a dictionary PLAIN instead
	// of DELTA_BINARY_PACKED (for readers that lack the latter).
	PlainInts bool
	// PqarrowOnly leaves every file to pqarrow, the reference the lean
	// encoder is tested against.
	PqarrowOnly bool
	Allocator   memory.Allocator // for arrow-go's buffers; default memory.DefaultAllocator
	CreatedBy   string           // the footer's created_by; default arrow-go's
	// Logger gets the once-per-table-and-version note that pqarrow wrote a
	// file the lean encoder could not; default discards.
	Logger   *slog.Logger
	Observer Observer // counts those files; default none
	// Parallelism bounds the goroutines that encode chunks beside the
	// callers' and the scratch memory and zstd encoders kept; default
	// GOMAXPROCS.
	Parallelism int
}

// Observer is told of every file pqarrow wrote because the lean encoder
// could not.
type Observer interface {
	// EncoderFallback is called once per such file; reason is one of
	// FallbackSchema and FallbackBatch.
	EncoderFallback(reason string)
}

// The reasons a file went to pqarrow.
const (
	// FallbackSchema: the lean encoder cannot write the schema's footer.
	FallbackSchema = "schema"
	// FallbackBatch: the batch has a shape the lean encoder does not
	// write (no rows, a REQUIRED column holding nulls, a nested type).
	FallbackBatch = "batch"
)

// Encoder writes Parquet files. It is safe for concurrent use.
type Encoder struct {
	opts      Options
	zstd      *zstdCodec          // the lean encoder's zstd (zstd.go)
	scratches *lifo[*leanScratch] // a scratch per file and chunk helper encoding at once
	helpers   chan struct{}       // a token per helper goroutine encoding chunks
	seed      maphash.Seed        // hashes strings to judge dictionaries

	mu     sync.Mutex
	logged map[shapeName]bool // table versions whose fallback was logged
}

type shapeName struct {
	table   string
	version int
}

// New returns an Encoder with opts.
func New(opts Options) (*Encoder, error) {
	if opts.CompressionLevel == 0 {
		opts.CompressionLevel = compress.DefaultCompressionLevel
	}
	if opts.RowGroupRows <= 0 {
		opts.RowGroupRows = 128 * 1024
	}
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Parallelism <= 0 {
		opts.Parallelism = runtime.GOMAXPROCS(0)
	}
	// One scratch and zstd encoder per goroutine encoding at once: a file
	// per CPU and a chunk helper per CPU.
	kept := max(8, 2*opts.Parallelism)
	z, err := newZstdCodec(kept)
	if err != nil {
		return nil, err
	}
	return &Encoder{opts: opts, zstd: z, scratches: newLIFO[*leanScratch](kept),
		helpers: make(chan struct{}, opts.Parallelism), seed: maphash.MakeSeed(), logged: map[shapeName]bool{}}, nil
}

// Shape is what encoding needs of an Arrow schema, derived once and shared
// by the files of that schema: with hundreds of tables under a small
// budget files are small, and deriving the Parquet schema and serializing
// the Arrow schema cost 8% of encoding.
type Shape struct {
	name     shapeName
	schema   *arrow.Schema
	opts     []parquet.WriterProperty // what props was made of: pqarrow's path adds to it
	props    *parquet.WriterProperties
	arrProps pqarrow.ArrowWriterProperties
	pq       *pqschema.Schema // nil once the lean encoder has its leaves and footer
	pqErr    error
	leaves   []leafColumn
	columns  []columnInfo              // each leaf's identity in the statistics
	kv       metadata.KeyValueMetadata // the Arrow schema's metadata and ARROW:schema
	footer   *footerShape              // the lean encoder's; nil when it cannot be made
}

// Schema is the Arrow schema the shape was made for.
func (sh *Shape) Schema() *arrow.Schema { return sh.schema }

// NewShape derives the shape of files with schema sc, which hold rows of
// version of table (for the log of a fallback). An error in sc is
// reported by Encode.
func (e *Encoder) NewShape(sc *arrow.Schema, table string, version int) *Shape {
	sh := &Shape{name: shapeName{table, version}, schema: sc, opts: []parquet.WriterProperty{
		parquet.WithCompression(e.opts.Compression),
		parquet.WithCompressionLevel(e.opts.CompressionLevel),
		parquet.WithStats(true),
		parquet.WithMaxRowGroupLength(e.opts.RowGroupRows),
		parquet.WithAllocator(e.opts.Allocator),
	}}
	if e.opts.CreatedBy != "" {
		sh.opts = append(sh.opts, parquet.WithCreatedBy(e.opts.CreatedBy))
	}
	sh.props = parquet.NewWriterProperties(sh.opts...)
	sh.arrProps = pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(e.opts.Allocator), pqarrow.WithStoreSchema())
	sh.pq, sh.pqErr = pqarrow.ToParquet(sc, sh.props, sh.arrProps)
	if sh.pqErr != nil {
		return sh
	}
	sh.columns = columnInfos(sh.pq)
	if !e.opts.PlainInts {
		if delta := deltaEncodings(sh.pq); len(delta) > 0 {
			sh.opts = append(sh.opts, delta...)
			sh.props = parquet.NewWriterProperties(sh.opts...)
		}
	}
	if !e.opts.PqarrowOnly {
		sh.kv = leanKeyValues(sc, e.opts.Allocator)
		sh.footer, _ = newFooterShape(sh.pq, sh.props) // without it, pqarrow writes the files
		if sh.footer != nil {
			sh.leaves, sh.pq = leafColumns(sh.pq), nil // pqarrow's rare files make it again
		}
	}
	return sh
}

// deltaEncodings sets DELTA_BINARY_PACKED for each 64-bit integer leaf
// of sc; it is set per column because arrow-go refuses it for the others.
func deltaEncodings(sc *pqschema.Schema) []parquet.WriterProperty {
	var opts []parquet.WriterProperty
	for i := range sc.NumColumns() {
		if col := sc.Column(i); col.PhysicalType() == parquet.Types.Int64 {
			opts = append(opts, parquet.WithEncodingFor(col.Path(), parquet.Encodings.DeltaBinaryPacked))
		}
	}
	return opts
}

// Result is an encoded file.
type Result struct {
	Data    []byte
	Rows    int64
	Columns []ColumnStats // one per Parquet leaf column, in schema order
	// Fallback is why pqarrow wrote the file (FallbackSchema,
	// FallbackBatch), or "" when the lean encoder did or pqarrow was
	// asked for.
	Fallback string
}

// Encode writes rec, whose schema must be sh's, as a Parquet file whose
// key/value metadata is the schema's own, the serialized Arrow schema,
// then kv.
func (e *Encoder) Encode(sh *Shape, rec arrow.RecordBatch, kv [][2]string) (Result, error) {
	if sh.pqErr != nil {
		return Result{}, sh.pqErr
	}
	res := Result{Rows: rec.NumRows()}
	if !e.opts.PqarrowOnly {
		res.Fallback = FallbackSchema
		if sh.footer != nil {
			leaves, err := planLeaves(sh.leaves, rec)
			if err == nil {
				return e.encodeLeanFile(sh, leaves, rec, kv)
			}
			res.Fallback = FallbackBatch
		}
		e.fellBack(sh, res.Fallback)
	}
	pq := sh.pq
	if pq == nil {
		var err error
		if pq, err = pqarrow.ToParquet(sh.schema, sh.props, sh.arrProps); err != nil {
			return Result{}, err
		}
	}
	var leafArrs []arrow.Array
	for _, col := range rec.Columns() {
		leafArrs = leafArrays(col, leafArrs)
	}
	opts := append(append([]parquet.WriterProperty(nil), sh.opts...), dictionaryProperties(pq, rec, e.seed)...)
	nans := make([]int64, pq.NumColumns())
	if len(leafArrs) == len(nans) {
		for i, a := range leafArrs {
			if nans[i] = nanCount(a); nans[i] > 0 {
				// arrow-go's min and max skip NaN: leave them out, as
				// the lean encoder does (statsAcc.encode says why).
				// arrow-go sets statistics per column, not per chunk.
				opts = append(opts, parquet.WithStatsFor(pq.Column(i).ColumnPath().String(), false))
			}
		}
	}
	var buf bytes.Buffer
	fw, err := pqarrow.NewFileWriter(rec.Schema(), &buf, parquet.NewWriterProperties(opts...), sh.arrProps)
	if err != nil {
		return Result{}, err
	}
	for _, p := range kv {
		if err := fw.AppendKeyValueMetadata(p[0], p[1]); err != nil {
			fw.Close()
			return Result{}, err
		}
	}
	if err := fw.Write(rec); err != nil {
		fw.Close()
		return Result{}, err
	}
	if err := fw.Close(); err != nil {
		return Result{}, err
	}
	md, err := fw.FileMetadata()
	if err != nil {
		return Result{}, err
	}
	res.Data = buf.Bytes()
	res.Columns = pqarrowStats(sh.columns, md, nans)
	return res, nil
}

func (e *Encoder) encodeLeanFile(sh *Shape, leaves []leaf, rec arrow.RecordBatch, pairs [][2]string) (Result, error) {
	kv := append(make(metadata.KeyValueMetadata, 0, len(sh.kv)+len(pairs)), sh.kv...)
	for _, p := range pairs {
		kv.Append(p[0], p[1])
	}
	data, rowGroups, err := e.encodeLean(sh.footer, leaves, rec, sh.props, kv)
	if err != nil {
		return Result{}, err
	}
	return Result{Data: data, Rows: rec.NumRows(), Columns: leanStats(sh.columns, leaves, rowGroups)}, nil
}

// fellBack counts a file pqarrow writes for the lean encoder, and logs the
// first of each table version.
func (e *Encoder) fellBack(sh *Shape, reason string) {
	if e.opts.Observer != nil {
		e.opts.Observer.EncoderFallback(reason)
	}
	e.mu.Lock()
	first := !e.logged[sh.name]
	e.logged[sh.name] = true
	e.mu.Unlock()
	if first {
		e.opts.Logger.Info("the lean Parquet encoder does not write this table version's files; pqarrow writes them (slower, same data)",
			"table", sh.name.table, "version", sh.name.version, "reason", reason)
	}
}

// nanCount is the number of NaN values among a's present values (0 when
// a is not floating point).
func nanCount(a arrow.Array) int64 {
	var n int64
	switch a := a.(type) {
	case *array.Float64:
		for i, v := range a.Float64Values() {
			if math.IsNaN(v) && a.IsValid(i) {
				n++
			}
		}
	case *array.Float32:
		for i, v := range a.Float32Values() {
			if math.IsNaN(float64(v)) && a.IsValid(i) {
				n++
			}
		}
	}
	return n
}
