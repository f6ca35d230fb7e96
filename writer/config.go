package writer

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/parquetenc"
	"github.com/lakehouse-exporter/lakehouse-exporter/partition"
)

// Config is the roll policy and encoding of data files.
type Config struct {
	MaxRows      int           // roll a file at this many rows; default 1,000,000
	MaxBytes     int64         // roll at this many buffered bytes; default 128 MiB
	MaxAge       time.Duration // roll a file this long after its first row; default 5m
	RowGroupRows int64         // rows per Parquet row group; default 128 Ki
	Compression  string        // zstd (default), snappy, gzip or none
	// CompressionLevel is the codec's level; 0 picks zstd level 1, which
	// in the benchmark wrote files about 1% larger than level 3 in about
	// two thirds of the compression time, and the codec's default for
	// the others.
	CompressionLevel int
	// MaxPackedBytes rolls a buffer whose rows are packed (many buffers
	// open: stage.go) at this many buffered bytes, by the same estimate
	// as MaxBytes; default 32 MiB. Packed rows take a third of the memory
	// they expand to when the file is encoded, so a table in a burst
	// among many must not gather more than its expansion can afford.
	MaxPackedBytes int64
	Granularity    partition.Granularity
	// ProcessingTime partitions by the time a row is buffered instead of
	// by op_ts.
	ProcessingTime bool
	Allocator      memory.Allocator // default memory.DefaultAllocator
	// Run, when set, is part of every data file's name (DataFileName).
	Run string
	// DeferEncode leaves Parquet encoding to File.Encode, so that the
	// caller can compress files on other goroutines; by default files are
	// encoded when they are flushed.
	DeferEncode bool
	// Encoder picks who writes the pages: "lean" (the default) writes the
	// exporter's column shapes itself, "arrow" leaves everything to
	// pqarrow, the reference the lean encoder is tested against. Both
	// write the same schema, metadata and values.
	Encoder string
	// IntEncoding is how 64-bit integer and timestamp columns without a
	// dictionary are written: "delta" (DELTA_BINARY_PACKED, the default;
	// delta.go says why) or "plain", for readers that lack the encoding
	// (Spark before 3.3 with its vectorized reader).
	IntEncoding string
	Now         func() time.Time // default time.Now
	// Logger gets the encoder's note that pqarrow writes a table version's
	// files the lean encoder cannot; default discards.
	Logger *slog.Logger
	// EncoderObserver counts those files; default none.
	EncoderObserver parquetenc.Observer
	// FileSchema, when set, is called before a schema version's first
	// file is made, on the goroutine that flushes it, and returns the
	// version's schema as its files are written: the same fields, with
	// metadata added (an Iceberg table's PARQUET:field_id). An error
	// fails that flush, and the next flush of the version asks again.
	FileSchema func(v *arrowschema.Version) (*arrow.Schema, error)
	// FileSchemaAhead, when set, hears of a version when its first row
	// reaches the writer, on the appending goroutine, and must not block:
	// it may start FileSchema's work in the background, so that the
	// version's first file, often many rows later, does not wait for it.
	FileSchemaAhead func(v *arrowschema.Version)
}

// IntEncodings are the values Config.IntEncoding takes.
const (
	IntEncodingDelta = "delta"
	IntEncodingPlain = "plain"
)

// Encoders are the values Config.Encoder takes.
const (
	EncoderLean  = "lean"
	EncoderArrow = "arrow"
)

// ParseCompression maps a codec name to Parquet's; unknown names are an
// error, never a silent fallback.
func ParseCompression(name string) (compress.Compression, error) {
	switch name {
	case "zstd", "":
		return compress.Codecs.Zstd, nil
	case "snappy":
		return compress.Codecs.Snappy, nil
	case "gzip":
		return compress.Codecs.Gzip, nil
	case "none", "uncompressed":
		return compress.Codecs.Uncompressed, nil
	}
	return 0, fmt.Errorf("unknown compression %q (want zstd, snappy, gzip or none)", name)
}

// CheckCompressionLevel reports whether level (0 for the default) suits
// the named codec: zstd takes 1-22, gzip 1-9, the others no level. A bad
// level would otherwise panic inside the codec, on an upload goroutine.
func CheckCompressionLevel(name string, level int) error {
	codec, err := ParseCompression(name)
	if err != nil || level == 0 {
		return err
	}
	switch codec {
	case compress.Codecs.Zstd:
		if level >= 1 && level <= 22 {
			return nil
		}
		return fmt.Errorf("zstd compression level %d: want 1-22 (or 0 for the default, 1)", level)
	case compress.Codecs.Gzip:
		if level >= 1 && level <= 9 {
			return nil
		}
		return fmt.Errorf("gzip compression level %d: want 1-9 (or 0 for the default)", level)
	}
	return fmt.Errorf("compression %s takes no level (got %d)", name, level)
}
