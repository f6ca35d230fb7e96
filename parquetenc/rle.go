package parquetenc

import (
	"bytes"
	"encoding/binary"
)

// rleEncoder writes Parquet's RLE/bit-packing hybrid: a run of eight or
// more equal values becomes one RLE run, anything else groups of eight
// bit-packed values.
type rleEncoder struct {
	out     *bytes.Buffer
	width   int
	lit     []uint64 // values of the literal run being collected, a multiple of 8
	scratch []byte
}

func (e *rleEncoder) reset(out *bytes.Buffer, width int) {
	e.out, e.width, e.lit = out, width, e.lit[:0]
}

func (e *rleEncoder) putAll(vals []uint8) { rleEncode(e, vals) }

func (e *rleEncoder) putAll32(vals []int32) { rleEncode(e, vals) }

// rleEncode is generic rather than reading values through a function:
// levels and indices pass through it value by value.
func rleEncode[T uint8 | int32](e *rleEncoder, vals []T) {
	n := len(vals)
	i := 0
	for i < n {
		v := vals[i]
		j := i + 1
		for j < n && j-i < 8 && vals[j] == v {
			j++
		}
		if j-i == 8 || (j == n && len(e.lit) == 0) {
			for j < n && vals[j] == v {
				j++
			}
			e.flushLiteral()
			e.run(j-i, uint64(uint32(v)))
			i = j
			continue
		}
		end := min(i+8, n)
		for _, x := range vals[i:end] {
			e.lit = append(e.lit, uint64(uint32(x)))
		}
		for len(e.lit)%8 != 0 {
			e.lit = append(e.lit, 0) // padding past the last value; readers stop at the count
		}
		i = end
	}
	e.flushLiteral()
}

// run writes count repetitions of v.
func (e *rleEncoder) run(count int, v uint64) {
	e.scratch = binary.AppendUvarint(e.scratch[:0], uint64(count)<<1)
	for k := 0; k < (e.width+7)/8; k++ {
		e.scratch = append(e.scratch, byte(v>>(8*k)))
	}
	e.out.Write(e.scratch)
}

func (e *rleEncoder) flushLiteral() {
	if len(e.lit) == 0 {
		return
	}
	groups := len(e.lit) / 8
	e.scratch = binary.AppendUvarint(e.scratch[:0], uint64(groups)<<1|1)
	var acc uint64
	nbits := 0
	for _, v := range e.lit {
		acc |= v << nbits
		nbits += e.width
		for nbits >= 8 {
			e.scratch = append(e.scratch, byte(acc))
			acc >>= 8
			nbits -= 8
		}
	}
	e.out.Write(e.scratch)
	e.lit = e.lit[:0]
}
