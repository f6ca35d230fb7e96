package parquetenc

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// A stored frame must read back through any zstd decoder as its input, at
// every size where the frame header or the block split changes.
func TestStoredZstdFramesDecode(t *testing.T) {
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	codec, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 255, 256, 257, 65535, 65791, 65792, 65793, zstdMaxBlock - 1, zstdMaxBlock, zstdMaxBlock + 1, 3*zstdMaxBlock + 17} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			src := make([]byte, n)
			for i := range src {
				src[i] = byte(r.IntN(4)) // compressible: a compressed frame would be smaller than src
			}
			frame := appendStoredFrame([]byte("prefix"), src)
			if !bytes.HasPrefix(frame, []byte("prefix")) {
				t.Fatal("appendStoredFrame overwrote what dst held")
			}
			frame = frame[len("prefix"):]
			blocks := max(1, (n+zstdMaxBlock-1)/zstdMaxBlock)
			if len(frame) < n+4+1+3*blocks {
				t.Fatalf("frame of %d bytes for %d bytes stored in %d blocks: compressed, not stored", len(frame), n, blocks)
			}
			got, err := dec.DecodeAll(frame, nil)
			if err != nil {
				t.Fatalf("klauspost/zstd: %v", err)
			}
			if !bytes.Equal(got, src) {
				t.Fatalf("klauspost/zstd read %d bytes back, stored %d", len(got), n)
			}
			// arrow-go's codec is what pqarrow and its file reader decode pages with.
			got = codec.Decode(make([]byte, n), frame)
			if !bytes.Equal(got, src) {
				t.Fatalf("arrow-go's codec read %d bytes back, stored %d", len(got), n)
			}
		})
	}
}

// Pages under 1 KiB are always stored; a chunk's small bit-packed pages
// are compressed when judged (the first, then every judgeEvery-th) and
// stored in between only while the last judged one did not shrink.
func TestWhichPagesAreStored(t *testing.T) {
	e := parquet.Encodings
	var v packedVerdict
	for _, c := range []struct {
		pageType int32
		enc      parquet.Encoding
		size     int
	}{
		{dataPage, e.Plain, 100},
		{dictionaryPage, e.Plain, storedPageBytes - 1},
		{dataPage, e.DeltaBinaryPacked, 200},
	} {
		if store, judge := v.store(c.pageType, c.enc, c.size); !store || judge {
			t.Errorf("page type %d, %v, %d bytes: stored %v, judged %v; want stored", c.pageType, c.enc, c.size, store, judge)
		}
	}
	for _, c := range []struct {
		pageType int32
		enc      parquet.Encoding
		size     int
	}{
		{dataPage, e.Plain, 4 << 10},
		{dictionaryPage, e.Plain, 8 << 10},
		{dataPage, e.RLEDict, storedPackedPageBytes},
		{dataPage, e.DeltaBinaryPacked, 1 << 20},
	} {
		if store, judge := v.store(c.pageType, c.enc, c.size); store || judge {
			t.Errorf("page type %d, %v, %d bytes: stored %v, judged %v; want compressed", c.pageType, c.enc, c.size, store, judge)
		}
	}
	// The column's pages, alternately incompressible and compressible:
	// each judged page decides the next judgeEvery-1.
	for round, shrinks := range []bool{false, true, false} {
		for i := range judgeEvery {
			store, judge := v.store(dataPage, []parquet.Encoding{e.DeltaBinaryPacked, e.RLEDict, e.PlainDict}[i%3], 8<<10)
			if i == 0 {
				if store || !judge {
					t.Fatalf("round %d: page %d stored %v, judged %v; want judged", round, i, store, judge)
				}
				compressed := 8 << 10
				if shrinks {
					compressed = 2 << 10
				}
				v.judge(8<<10, compressed)
				continue
			}
			if judge || store == shrinks {
				t.Fatalf("round %d (judged page shrank: %v): page %d stored %v, judged %v", round, shrinks, i, store, judge)
			}
		}
	}
	for level, want := range map[int]bool{1: true, 2: true, 3: false, 19: false, compress.DefaultCompressionLevel: false} {
		if got := storesPages(level); got != want {
			t.Errorf("zstd level %d: pages stored %v, want %v", level, got, want)
		}
	}
}

// An Encoder's zstd codec writes what arrow-go's own would (same
// options), and keeps its encoders through garbage collections, which
// empty arrow-go's sync.Pool; arrow-go's registered codec stays its own.
func TestZstdCodecMatchesArrowGoAndKeepsEncoders(t *testing.T) {
	ours := testEncoder(t).zstd
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	if _, replaced := c.(*zstdCodec); replaced {
		t.Fatal("arrow-go's registered zstd codec was replaced process-wide")
	}
	src := bytes.Repeat([]byte("lakehouse-exporter writes parquet pages "), 2000)
	for _, level := range []int{1, 3, compress.DefaultCompressionLevel} {
		got := ours.EncodeLevel(nil, src, level)
		want := ours.fullCodec.EncodeLevel(nil, src, level)
		if !bytes.Equal(got, want) {
			t.Errorf("level %d: %d bytes, arrow-go's codec %d", level, len(got), len(want))
		}
		back, err := ours.DecodeWithError(nil, got)
		if err != nil || !bytes.Equal(back, src) {
			t.Errorf("level %d: round trip failed: %v", level, err)
		}
	}
	runtime.GC()
	runtime.GC()
	if ours.pools[zstd.SpeedFastest].len() == 0 {
		t.Error("no level-1 encoder kept after two collections")
	}
}
