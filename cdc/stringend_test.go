package cdc

import (
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// stringEndByByte is stringEnd as it was before it read eight bytes at a
// time: the reference the fast one is checked against.
func stringEndByByte(data []byte, i int) (end int, escaped, ascii bool) {
	i++
	var high byte
	for i < len(data) {
		c := data[i]
		switch {
		case c == '"':
			return i + 1, escaped, high < 0x80
		case c == '\\':
			escaped = true
			if i+1 >= len(data) {
				return -1, false, false
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(data) {
					return -1, false, false
				}
				for _, h := range data[i+2 : i+6] {
					if _, ok := hexDigit(h); !ok {
						return -1, false, false
					}
				}
				i += 6
			default:
				return -1, false, false
			}
		case c < 0x20:
			return -1, false, false
		default:
			high |= c
			i++
		}
	}
	return -1, false, false
}

func checkStringEnd(t *testing.T, data []byte) {
	t.Helper()
	for i := range data {
		if data[i] != '"' {
			continue
		}
		end, esc, ascii := stringEnd(data, i)
		wantEnd, wantEsc, wantASCII := stringEndByByte(data, i)
		if end != wantEnd || esc != wantEsc || ascii != wantASCII {
			t.Fatalf("stringEnd(%q, %d) = %d, %v, %v; byte by byte: %d, %v, %v", data, i, end, esc, ascii, wantEnd, wantEsc, wantASCII)
		}
	}
}

// TestStringEndMatchesByteByByte: strings of every length up to past two
// words, with each kind of byte the scan stops at (quote, backslash,
// control, non-ASCII) at every position.
func TestStringEndMatchesByteByByte(t *testing.T) {
	specials := []string{`"`, `\"`, `\\`, `\n`, `\u00e9`, `\u12g4`, `\x`, "\x01", "\x1f", "\x7f", "\x80", "é", "\xff", `\`}
	for n := 0; n <= 20; n++ {
		for pos := 0; pos <= n; pos++ {
			for _, s := range specials {
				body := strings.Repeat("a", pos) + s + strings.Repeat("b", n-pos)
				checkStringEnd(t, []byte(`"`+body+`"`))
				checkStringEnd(t, []byte(`"`+body)) // unterminated
				checkStringEnd(t, []byte(`"`+body+`", "x"`))
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("ab \"\\/nu0e\x01\x1f\x7f\x80\xc3\xa9\xff")
	for range 20000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		checkStringEnd(t, append([]byte{'"'}, b...))
	}
}

// FuzzStringEnd: stringEnd agrees with the byte-by-byte scan on any input,
// from every quote in it.
func FuzzStringEnd(f *testing.F) {
	f.Add([]byte(`"abcdefghijklmnop"`))
	f.Add([]byte(`"abc\"defgh\u00e9ijk" "x"`))
	f.Add([]byte("\"abcdefg\x01hij\""))
	f.Fuzz(checkStringEnd)
}

func BenchmarkStringEnd(b *testing.B) {
	data, err := os.ReadFile("../testdata/goldengate/sample.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	var quotes []int
	for i := 0; i < len(data); {
		if data[i] != '"' {
			i++
			continue
		}
		quotes = append(quotes, i)
		end, _, _ := stringEndByByte(data, i)
		if end < 0 {
			break
		}
		i = end
	}
	b.SetBytes(int64(len(data)))
	for _, impl := range []struct {
		name string
		f    func([]byte, int) (int, bool, bool)
	}{{"words", stringEnd}, {"bytes", stringEndByByte}} {
		b.Run(impl.name, func(b *testing.B) {
			for b.Loop() {
				for _, q := range quotes {
					impl.f(data, q)
				}
			}
		})
	}
}
