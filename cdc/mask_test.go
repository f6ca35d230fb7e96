package cdc_test

import (
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
)

// seq returns the ordinals lo..hi.
func seq(lo, hi int) []int {
	var out []int
	for i := lo; i <= hi; i++ {
		out = append(out, i)
	}
	return out
}

func mustMask(t *testing.T, s string) cdc.Mask {
	t.Helper()
	m, err := cdc.ParseMask(s)
	if err != nil {
		t.Fatalf("ParseMask(%q): %v", s, err)
	}
	return m
}

// checkMask compares every view of m with the expected ordinal set.
func checkMask(t *testing.T, in string, m cdc.Mask, want []int, wantString string) {
	t.Helper()
	got := m.Ordinals()
	if len(got) != len(want) || (len(want) > 0 && !slices.Equal(got, want)) {
		t.Errorf("ParseMask(%q).Ordinals() = %v, want %v", in, got, want)
	}
	wantMax := 0
	if len(want) > 0 {
		wantMax = want[len(want)-1]
	}
	if m.Max() != wantMax {
		t.Errorf("ParseMask(%q).Max() = %d, want %d", in, m.Max(), wantMax)
	}
	in1 := map[int]bool{}
	for _, o := range want {
		in1[o] = true
	}
	for o := -2; o <= wantMax+70; o++ {
		if m.Has(o) != in1[o] {
			t.Errorf("ParseMask(%q).Has(%d) = %v, want %v", in, o, m.Has(o), in1[o])
		}
	}
	if s := m.String(); s != wantString {
		t.Errorf("ParseMask(%q).String() = %q, want %q", in, s, wantString)
	}
}

func TestParseMask(t *testing.T) {
	top160 := "8" + strings.Repeat("0", 39) // 40 digits, bit 159 only
	cases := []struct {
		in     string
		want   []int
		String string
	}{
		// The reference: "If UPDATE mask is 0B hexadecimal, which is 1011
		// binary – it means that the columns at ordinals 1, 2 and 4 were
		// changed."
		{"0B", []int{1, 2, 4}, "B"},
		{"0b", []int{1, 2, 4}, "B"},
		{"B", []int{1, 2, 4}, "B"},
		{"000B", []int{1, 2, 4}, "B"},
		{"FF", seq(1, 8), "FF"},
		{"ff", seq(1, 8), "FF"},
		{"1FF", seq(1, 9), "1FF"},
		{"01FF", seq(1, 9), "1FF"},
		{"1", []int{1}, "1"},
		{"2", []int{2}, "2"},
		{"8", []int{4}, "8"},
		{"10", []int{5}, "10"},
		{"100", []int{9}, "100"},
		{"06", []int{2, 3}, "6"},
		{"42", []int{2, 7}, "42"},
		{"7F", seq(1, 7), "7F"},
		// 0xAB = 1010 1011: bits 0, 1, 3, 5, 7
		{"aB", []int{1, 2, 4, 6, 8}, "AB"},
		{"Ab", []int{1, 2, 4, 6, 8}, "AB"},
		// 0xF0 = bits 4..7
		{"F0", seq(5, 8), "F0"},
		// word boundaries: 16 digits fill the first 64 ordinals
		{strings.Repeat("F", 16), seq(1, 64), strings.Repeat("F", 16)},
		{"8" + strings.Repeat("0", 15), []int{64}, "8" + strings.Repeat("0", 15)},
		{"1" + strings.Repeat("0", 16), []int{65}, "1" + strings.Repeat("0", 16)},
		// 2^64 + 2^63
		{"18" + strings.Repeat("0", 15), []int{64, 65}, "18" + strings.Repeat("0", 15)},
		{strings.Repeat("F", 17), seq(1, 68), strings.Repeat("F", 17)},
		{top160, []int{160}, top160},
		{strings.ToLower("C" + strings.Repeat("0", 39)), []int{159, 160}, "C" + strings.Repeat("0", 39)},
		{strings.Repeat("0", 41) + "1", []int{1}, "1"},
		// 40 digits: top bit (ordinal 160) and bottom bit (ordinal 1)
		{"8" + strings.Repeat("0", 38) + "1", []int{1, 160}, "8" + strings.Repeat("0", 38) + "1"},
		// 41 digits: the 8 is digit 41, bit 163
		{"8" + strings.Repeat("0", 39) + "1", []int{1, 164}, "8" + strings.Repeat("0", 39) + "1"},
		// empty masks
		{"", nil, "0"},
		{"0", nil, "0"},
		{"0000", nil, "0"},
		{strings.Repeat("0", 40), nil, "0"},
	}
	for _, c := range cases {
		m := mustMask(t, c.in)
		checkMask(t, c.in, m, c.want, c.String)
	}
}

func TestParseMaskRejectsNonHex(t *testing.T) {
	for _, in := range []string{"G", "0G", "0x0B", "0X0B", " 1", "1 ", "-1", "+1", "1.0", "é", "FF\n", "F\x00", "ＦＦ", "g0", "1_0"} {
		if m, err := cdc.ParseMask(in); err == nil {
			t.Errorf("ParseMask(%q) = %v, nil; want an error", in, m.Ordinals())
		}
	}
}

// hexOf builds a mask by hand from ordinals: bit i is ordinal i+1, the
// rightmost digit holds ordinals 1-4, and digits are written most
// significant first. pad extra leading zeros; lower picks the case.
func hexOf(ords []int, pad int, lower bool) string {
	max := 0
	for _, o := range ords {
		if o > max {
			max = o
		}
	}
	n := (max + 3) / 4
	nibbles := make([]int, n)
	for _, o := range ords {
		nibbles[(o-1)/4] |= 1 << ((o - 1) % 4)
	}
	digits := "0123456789ABCDEF"
	if lower {
		digits = "0123456789abcdef"
	}
	var b strings.Builder
	b.WriteString(strings.Repeat("0", pad))
	for i := n - 1; i >= 0; i-- {
		b.WriteByte(digits[nibbles[i]])
	}
	return b.String()
}

func TestHexOfHelper(t *testing.T) {
	// The helper itself against the reference example and hand values.
	for _, c := range []struct {
		ords []int
		want string
	}{
		{[]int{1, 2, 4}, "B"},
		{seq(1, 8), "FF"},
		{seq(1, 9), "1FF"},
		{[]int{9}, "100"},
		{[]int{160}, "8" + strings.Repeat("0", 39)},
		{nil, ""},
	} {
		if got := hexOf(c.ords, 0, false); got != c.want {
			t.Errorf("hexOf(%v) = %q, want %q", c.ords, got, c.want)
		}
	}
}

// TestMaskProperties: for random ordinal sets, the hand-built hex parses
// back to the set, and String round-trips through ParseMask in canonical
// (shortest, upper-case) form.
func TestMaskProperties(t *testing.T) {
	rng := rand.New(rand.NewSource(20260713))
	for iter := 0; iter < 2000; iter++ {
		limit := 1 + rng.Intn(300)
		set := map[int]bool{}
		for k := rng.Intn(limit + 1); k > 0; k-- {
			set[1+rng.Intn(limit)] = true
		}
		var want []int
		for o := range set {
			want = append(want, o)
		}
		sort.Ints(want)
		pad := rng.Intn(3)
		lower := rng.Intn(2) == 0
		in := hexOf(want, pad, lower)
		m, err := cdc.ParseMask(in)
		if err != nil {
			t.Fatalf("ParseMask(%q): %v", in, err)
		}
		canonical := hexOf(want, 0, false)
		if canonical == "" {
			canonical = "0"
		}
		checkMask(t, in, m, want, canonical)

		back, err := cdc.ParseMask(m.String())
		if err != nil {
			t.Fatalf("ParseMask(String() = %q): %v", m.String(), err)
		}
		if got := back.Ordinals(); fmt.Sprint(got) != fmt.Sprint(m.Ordinals()) {
			t.Fatalf("round trip of %q via %q: %v, want %v", in, m.String(), got, m.Ordinals())
		}
		if back.String() != m.String() {
			t.Fatalf("String not stable: %q then %q", m.String(), back.String())
		}
		if t.Failed() {
			t.Fatalf("stopping after the first failing set (input %q)", in)
		}
	}
}

func TestMaskZeroValue(t *testing.T) {
	var m cdc.Mask
	if m.Max() != 0 || len(m.Ordinals()) != 0 || m.Has(1) || m.String() != "0" {
		t.Errorf("zero Mask: Max %d Ordinals %v Has(1) %v String %q; want 0, [], false, \"0\"", m.Max(), m.Ordinals(), m.Has(1), m.String())
	}
}
