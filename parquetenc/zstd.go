package parquetenc

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// arrow-go keeps its zstd encoders in a sync.Pool, which the Go collector
// empties at every cycle. Under the memory budget the collector runs
// often, so pages were compressed by freshly built encoders, each
// allocating its history tables (8% of all bytes allocated in the
// benchmark). The lean encoder compresses with this codec instead, which
// keeps a few encoders per level for good and writes the same bytes with
// the same options. It belongs to one Encoder: arrow-go's registered codec
// (which pqarrow uses) is left as it is.
func newZstdCodec(kept int) (*zstdCodec, error) {
	base, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		return nil, fmt.Errorf("parquet encoder: arrow-go has no zstd codec: %w", err)
	}
	full, ok := base.(fullCodec)
	if !ok {
		return nil, fmt.Errorf("parquet encoder: arrow-go's zstd codec is a %T, which does not stream", base)
	}
	return &zstdCodec{fullCodec: full, pools: map[zstd.EncoderLevel]*lifo[heldEncoder]{
		zstd.SpeedFastest:           newLIFO[heldEncoder](kept),
		zstd.SpeedDefault:           newLIFO[heldEncoder](kept),
		zstd.SpeedBetterCompression: newLIFO[heldEncoder](kept),
		zstd.SpeedBestCompression:   newLIFO[heldEncoder](kept),
	}}, nil
}

type fullCodec interface {
	compress.Codec
	compress.StreamingCodec
	DecodeWithError(dst, src []byte) ([]byte, error)
}

type zstdCodec struct {
	fullCodec
	pools map[zstd.EncoderLevel]*lifo[heldEncoder] // the map is read-only once made
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

// Pages that zstd cannot shrink still cost it a full attempt: match
// search, then Huffman tables for the literals, then the verdict that the
// block is better stored. With hundreds of tables most chunks are one
// small page, and the bit-packed ones (dictionary indices,
// DELTA_BINARY_PACKED) came out at 0.997 to 1.008 of their size while
// taking 15% of zstd's time on the 500-table benchmark stream; the
// smallest pages of any kind (under 1 KiB, mostly dictionaries of a few
// entries) grew by half. Such pages are written as zstd frames of raw
// blocks, which every zstd decoder reads, so the chunk keeps its codec.
//
// Bit-packed pages are not always incompressible (indices of a column
// whose values come in a repeating order, or evenly spaced timestamps,
// shrink to a fraction), so a chunk's are judged by what zstd made of
// them: its first one is compressed, and so is every judgeEvery-th after
// it, and the others are stored only while those came out at more than
// storeAbove of their size. The judgement is the chunk's own, so that a
// file's bytes depend on its rows alone, not on what else was encoded
// before or at the same time.
const (
	storedPageBytes       = 1 << 10  // any page under this is stored
	storedPackedPageBytes = 64 << 10 // bit-packed data pages under this may be stored
	judgeEvery            = 16
	storeAbove            = 0.9
	zstdMaxBlock          = 128 << 10
)

// storesPages reports whether pages are stored at all at this level: at
// the fastest one, the default, which is chosen for speed; a higher level
// asks for the smallest files.
func storesPages(level int) bool {
	return level != compress.DefaultCompressionLevel && zstd.EncoderLevelFromZstd(level) == zstd.SpeedFastest
}

// packedVerdict is a chunk's record of its bit-packed pages.
type packedVerdict struct {
	pages        int  // bit-packed pages seen
	compressible bool // the last judged one shrank below storeAbove
}

// store reports whether a page is written as a stored zstd frame, and
// (when it is not) whether its compressed size is to be judged.
func (v *packedVerdict) store(pageType int32, enc parquet.Encoding, size int) (store, judge bool) {
	if size < storedPageBytes {
		return true, false
	}
	if !packedPage(pageType, enc, size) {
		return false, false
	}
	v.pages++
	if v.pages%judgeEvery == 1 {
		return false, true
	}
	return !v.compressible, false
}

// judge records what zstd made of a bit-packed page of size bytes.
func (v *packedVerdict) judge(size, compressed int) {
	v.compressible = float64(compressed) < storeAbove*float64(size)
}

// packedPage reports whether a page is a small bit-packed data page, which
// zstd rarely shrinks.
func packedPage(pageType int32, enc parquet.Encoding, size int) bool {
	if pageType != dataPage || size >= storedPackedPageBytes {
		return false
	}
	switch enc {
	case parquet.Encodings.DeltaBinaryPacked, parquet.Encodings.RLEDict, parquet.Encodings.PlainDict:
		return true
	}
	return false
}

// appendStoredFrame appends src to dst as one zstd frame (RFC 8878) of raw
// blocks: a single-segment frame header with the content size, then
// blocks of at most 128 KiB, each a 3-byte header and the bytes as they are.
func appendStoredFrame(dst, src []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, 0xFD2FB528)
	n := uint64(len(src))
	const singleSegment = 1 << 5
	switch {
	case n < 256:
		dst = append(dst, singleSegment, byte(n)) // Frame_Content_Size_flag 0: one byte
	case n < 65536+256:
		dst = append(dst, 1<<6|singleSegment)
		dst = binary.LittleEndian.AppendUint16(dst, uint16(n-256))
	case n <= math.MaxUint32:
		dst = append(dst, 2<<6|singleSegment)
		dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
	default:
		dst = append(dst, 3<<6|singleSegment)
		dst = binary.LittleEndian.AppendUint64(dst, n)
	}
	for {
		size := min(len(src), zstdMaxBlock)
		last := 0
		if size == len(src) {
			last = 1
		}
		hdr := uint32(size)<<3 | uint32(last) // Block_Type 0: raw
		dst = append(dst, byte(hdr), byte(hdr>>8), byte(hdr>>16))
		dst = append(dst, src[:size]...)
		src = src[size:]
		if last == 1 {
			return dst
		}
	}
}
