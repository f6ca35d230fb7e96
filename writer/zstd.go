package writer

import (
	"io"
	"runtime"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// arrow-go keeps its zstd encoders in a sync.Pool, which the Go collector
// empties at every cycle. Under the memory budget the collector runs
// often, so pages were compressed by freshly built encoders, each
// allocating its history tables (8% of all bytes allocated in the
// benchmark). This codec keeps a few encoders per level for good; it
// writes the same bytes with the same options.
func init() {
	base, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		return // no zstd registered: nothing to improve
	}
	full, ok := base.(fullCodec)
	if !ok {
		return
	}
	compress.RegisterCodec(compress.Codecs.Zstd, &zstdCodec{fullCodec: full, pools: map[zstd.EncoderLevel]*lifo[heldEncoder]{
		zstd.SpeedFastest:           newLIFO[heldEncoder](keptEncoders),
		zstd.SpeedDefault:           newLIFO[heldEncoder](keptEncoders),
		zstd.SpeedBetterCompression: newLIFO[heldEncoder](keptEncoders),
		zstd.SpeedBestCompression:   newLIFO[heldEncoder](keptEncoders),
	}})
}

// keptEncoders bounds the encoders kept per level: one per goroutine
// encoding at once (a file per CPU and a chunk helper per CPU) is enough.
var keptEncoders = max(8, 2*runtime.GOMAXPROCS(0))

type fullCodec interface {
	compress.Codec
	compress.StreamingCodec
	DecodeWithError(dst, src []byte) ([]byte, error)
}

type zstdCodec struct {
	fullCodec
	pools map[zstd.EncoderLevel]*lifo[heldEncoder] // the map is read-only after init
}

var (
	_ compress.StreamingCodec = (*zstdCodec)(nil)
	_ compress.ErrorCodec     = (*zstdCodec)(nil)
	_ io.Writer               = (*zstd.Encoder)(nil)
)

func (c *zstdCodec) Encode(dst, src []byte) []byte {
	return c.EncodeLevel(dst, src, compress.DefaultCompressionLevel)
}

func (c *zstdCodec) EncodeLevel(dst, src []byte, level int) []byte {
	enc := c.encoder(level)
	out := enc.EncodeAll(src, dst[:0])
	enc.release()
	return out
}

// heldEncoder is an encoder a goroutine keeps for a run of pages.
type heldEncoder struct {
	enc   *zstd.Encoder
	level int                // as asked for
	pool  *lifo[heldEncoder] // where release gives it back
}

// encoder returns an encoder for level, kept or new.
func (c *zstdCodec) encoder(level int) heldEncoder {
	lvl := zstd.SpeedDefault
	if level != compress.DefaultCompressionLevel {
		lvl = zstd.EncoderLevelFromZstd(level)
	}
	pool := c.pools[lvl]
	if h, ok := pool.get(); ok {
		h.level = level // levels that map to one encoder level share it
		return h
	}
	// The options arrow-go uses, so that files come out the same.
	enc, _ := zstd.NewWriter(nil, zstd.WithZeroFrames(true), zstd.WithEncoderLevel(lvl),
		zstd.WithEncoderConcurrency(1), zstd.WithAllLitEntropyCompression(true))
	return heldEncoder{enc: enc, level: level, pool: pool}
}

// release gives the encoder back to its pool; a zero heldEncoder holds none.
func (h heldEncoder) release() {
	if h.enc != nil {
		h.pool.put(h)
	}
}

// EncodeAll compresses src into dst with h.
func (h heldEncoder) EncodeAll(src, dst []byte) []byte { return h.enc.EncodeAll(src, dst) }
