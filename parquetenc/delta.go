package parquetenc

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// DELTA_BINARY_PACKED is how 64-bit integer and timestamp columns without a
// dictionary are written. CDC streams are full of values that grow
// slowly (op_ts, source offsets, keys, audit timestamps): PLAIN leaves
// zstd to find them as thousands of short matches, its slowest case, and
// it still kept op_ts at a third of its size. As deltas bit-packed per
// 32 values, op_ts shrank to a tenth and zstd had a few bytes a value to
// look at. The layout is parquet-format's, with the block shape every
// writer uses (blocks of 128 values in 4 miniblocks):
//
//	header: <block size> <miniblocks per block> <value count> <first value, zigzag>
//	block:  <min delta, zigzag> <a bit width per miniblock> <miniblocks>
//
// Deltas wrap as int64 arithmetic does, as the readers undo them.
const (
	deltaBlockValues = 128
	deltaMiniblocks  = 4
	deltaMiniValues  = deltaBlockValues / deltaMiniblocks
)

// appendDeltaBinaryPacked appends vals encoded as DELTA_BINARY_PACKED.
func appendDeltaBinaryPacked(dst []byte, vals []int64) []byte {
	dst = binary.AppendUvarint(dst, deltaBlockValues)
	dst = binary.AppendUvarint(dst, deltaMiniblocks)
	dst = binary.AppendUvarint(dst, uint64(len(vals)))
	if len(vals) == 0 {
		return binary.AppendVarint(dst, 0)
	}
	dst = binary.AppendVarint(dst, vals[0])
	var deltas [deltaBlockValues]uint64
	prev := vals[0]
	for rest := vals[1:]; len(rest) > 0; {
		n := min(len(rest), deltaBlockValues)
		minDelta := int64(math.MaxInt64)
		for i, v := range rest[:n] {
			d := v - prev
			prev = v
			deltas[i] = uint64(d)
			minDelta = min(minDelta, d)
		}
		// A last block short of values is padded with zeros to whole
		// miniblocks; miniblocks it does not reach have width 0 and no
		// bytes.
		clear(deltas[n:])
		dst = binary.AppendVarint(dst, minDelta)
		widthsAt := len(dst)
		var widths [deltaMiniblocks]byte
		dst = append(dst, widths[:]...)
		for m := 0; m*deltaMiniValues < n; m++ {
			mini := (*[deltaMiniValues]uint64)(deltas[m*deltaMiniValues:])
			lim := min(n-m*deltaMiniValues, deltaMiniValues)
			var or uint64
			for i := range mini[:lim] {
				mini[i] -= uint64(minDelta)
				or |= mini[i]
			}
			w := bits.Len64(or)
			dst[widthsAt+m] = byte(w)
			dst = appendPacked(dst, mini, w)
		}
		rest = rest[n:]
	}
	return dst
}

// appendPacked appends the low w bits of each of 32 values, least
// significant bit first: 4·w bytes.
func appendPacked(dst []byte, vals *[deltaMiniValues]uint64, w int) []byte {
	if w == 0 {
		return dst
	}
	var words [deltaMiniValues]uint64 // 32 values of up to 64 bits
	pos := uint(0)
	for _, v := range vals {
		i, off := pos/64, pos%64
		words[i] |= v << off
		if off+uint(w) > 64 {
			words[i+1] |= v >> (64 - off)
		}
		pos += uint(w)
	}
	n := 4 * w
	for _, x := range words[:n/8] {
		dst = binary.LittleEndian.AppendUint64(dst, x)
	}
	if n%8 != 0 {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(words[n/8]))
	}
	return dst
}
