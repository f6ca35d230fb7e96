package parquetenc

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// decodeDeltaBinaryPacked reads DELTA_BINARY_PACKED as parquet-format
// describes it, independently of the encoder's block shape.
func decodeDeltaBinaryPacked(t *testing.T, b []byte) []int64 {
	t.Helper()
	// varint reads a ULEB128, or a zigzag one when signed.
	varint := func(signed bool) int64 {
		u, n := binary.Uvarint(b)
		if n <= 0 {
			t.Fatalf("bad varint at %x", b)
		}
		b = b[n:]
		if signed {
			return int64(u>>1) ^ -int64(u&1)
		}
		return int64(u)
	}
	uvar := func() uint64 { return uint64(varint(false)) }
	zz := func() int64 { return varint(true) }
	block, minis, count := int(uvar()), int(uvar()), int(uvar())
	first := zz()
	if block%128 != 0 || minis == 0 || (block/minis)%32 != 0 {
		t.Fatalf("block of %d values in %d miniblocks breaks the format's rules", block, minis)
	}
	per := block / minis
	out := []int64{}
	if count == 0 {
		return out
	}
	out = append(out, first)
	for len(out) < count {
		minDelta := zz()
		widths := b[:minis]
		b = b[minis:]
		for m := 0; m < minis && len(out) < count; m++ {
			w := int(widths[m])
			if w > 64 {
				t.Fatalf("miniblock width %d", w)
			}
			body := b[:per*w/8]
			b = b[per*w/8:]
			for i := 0; i < per; i++ {
				var v uint64
				for bit := 0; bit < w; bit++ {
					p := i*w + bit
					v |= uint64(body[p/8]>>(p%8)&1) << bit
				}
				if len(out) < count {
					out = append(out, out[len(out)-1]+minDelta+int64(v))
				}
			}
		}
	}
	if len(b) != 0 {
		t.Fatalf("%d bytes after the last value", len(b))
	}
	return out
}

func TestDeltaBinaryPackedRoundTrips(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	series := map[string]func(i int) int64{
		"constant":   func(int) int64 { return 42 },
		"increasing": func(i int) int64 { return 1_700_000_000_000_000 + int64(i)*1000 + r.Int64N(7) },
		"decreasing": func(i int) int64 { return -int64(i) * 3 },
		"random":     func(int) int64 { return int64(r.Uint64()) },
		"extremes":   func(i int) int64 { return []int64{math.MinInt64, math.MaxInt64, 0, -1}[i%4] },
		"one wide":   func(i int) int64 { return map[bool]int64{true: math.MaxInt64}[i == 77] },
	}
	for name, next := range series {
		for _, n := range []int{0, 1, 2, 31, 32, 33, 127, 128, 129, 130, 161, 256, 257, 1000} {
			vals := make([]int64, n)
			for i := range vals {
				vals[i] = next(i)
			}
			enc := appendDeltaBinaryPacked([]byte{0xee}, vals)
			if enc[0] != 0xee {
				t.Fatal("the encoder overwrote what it appends to")
			}
			if got := decodeDeltaBinaryPacked(t, enc[1:]); !slices.Equal(got, vals) {
				t.Fatalf("%s, %d values: decoded %v, wrote %v", name, n, got, vals)
			}
		}
	}
}

// The point of the encoding: a slowly growing column (op_ts) takes a few
// bits a value before compression.
func TestDeltaBinaryPackedShrinksGrowingValues(t *testing.T) {
	vals := make([]int64, 10_000)
	for i := range vals {
		vals[i] = 1_700_000_000_000_000 + int64(i)*10_000 + int64(i%3)
	}
	if n := len(appendDeltaBinaryPacked(nil, vals)); n > len(vals)*2 {
		t.Fatalf("%d bytes for %d timestamps 10 ms apart, more than 2 a value", n, len(vals))
	}
}

// FuzzDeltaBinaryPacked round-trips any series of 64-bit values:
// go test ./writer -fuzz FuzzDeltaBinaryPacked
func FuzzDeltaBinaryPacked(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 255, 255, 255, 255, 255, 255, 255, 127})
	f.Add(make([]byte, 8*300))
	f.Fuzz(func(t *testing.T, b []byte) {
		vals := make([]int64, len(b)/8)
		for i := range vals {
			vals[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
		}
		if got := decodeDeltaBinaryPacked(t, appendDeltaBinaryPacked(nil, vals)); !slices.Equal(got, vals) {
			t.Fatalf("decoded %v, wrote %v", got, vals)
		}
	})
}
