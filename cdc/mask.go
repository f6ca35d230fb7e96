package cdc

import (
	"errors"
	"math/bits"
)

// Mask is a Qlik change or column mask: a set of column ordinals (1-based,
// from the table's metadata message).
//
// The mask is a hexadecimal number whose bit i stands for ordinal i+1:
// "0B" is binary 1011, so ordinals 1, 2 and 4. The rightmost digit holds
// ordinals 1-4, the one left of it 5-8, and so on; any length and an odd
// number of digits are fine.
type Mask struct {
	words []uint64 // words[0] holds ordinals 1..64
}

var errMaskNotHex = errors.New("mask is not hexadecimal")

// isHex reports whether s is a mask ParseMask accepts, without building
// it.
func isHex(s string) bool {
	for i := range len(s) {
		if _, ok := hexDigit(s[i]); !ok {
			return false
		}
	}
	return true
}

// ParseMask parses a mask. The empty string is the empty mask.
func ParseMask(s string) (Mask, error) {
	var m Mask
	nibble := 0
	for i := len(s) - 1; i >= 0; i-- {
		d, ok := hexDigit(s[i])
		if !ok {
			return Mask{}, errMaskNotHex
		}
		v := uint64(d)
		w := nibble / 16
		for len(m.words) <= w {
			m.words = append(m.words, 0)
		}
		m.words[w] |= v << (4 * (nibble % 16))
		nibble++
	}
	return m, nil
}

// Has reports whether ordinal (1-based) is in the mask.
func (m Mask) Has(ordinal int) bool {
	if ordinal < 1 {
		return false
	}
	b := ordinal - 1
	w := b / 64
	return w < len(m.words) && m.words[w]&(1<<(b%64)) != 0
}

// Max returns the highest ordinal in the mask, 0 for an empty mask.
func (m Mask) Max() int {
	for w := len(m.words) - 1; w >= 0; w-- {
		if m.words[w] != 0 {
			return w*64 + 64 - bits.LeadingZeros64(m.words[w])
		}
	}
	return 0
}

// Ordinals lists the ordinals in the mask, ascending.
func (m Mask) Ordinals() []int {
	var out []int
	for w, word := range m.words {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			out = append(out, w*64+b+1)
			word &^= 1 << b
		}
	}
	return out
}

// String renders the mask as its shortest upper-case hex form ("0" when
// empty); ParseMask(m.String()) gives m back.
func (m Mask) String() string {
	const digits = "0123456789ABCDEF"
	var out []byte
	top := m.Max()
	if top == 0 {
		return "0"
	}
	for n := (top + 3) / 4; n > 0; n-- {
		nib := n - 1
		out = append(out, digits[(m.words[nib/16]>>(4*(nib%16)))&0xF])
	}
	return string(out)
}
