package writer

import (
	"encoding/base64"
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
)

func decString(n decimal128.Num) string { return n.BigInt().String() }

func TestParseDecimalExact(t *testing.T) {
	cases := []struct {
		in       string
		p, s     int32
		unscaled string
	}{
		{"125.50", 12, 2, "12550"},
		{"125.5", 12, 2, "12550"},
		{"125", 12, 2, "12500"},
		{"0.05", 3, 2, "5"},
		{"-0.5", 12, 2, "-50"},
		{"-0", 5, 2, "0"},
		{"0", 1, 0, "0"},
		{"0.00", 1, 0, "0"},
		{"1.2300", 12, 2, "123"},   // trailing zeros beyond the scale are exact
		{"00012.50", 4, 2, "1250"}, // leading zeros carry no precision
		{"1e2", 12, 2, "10000"},
		{"1E2", 3, 0, "100"},
		{"1e+2", 3, 0, "100"},
		{"1.5e-1", 5, 2, "15"},
		{"-2.5E1", 5, 1, "-250"},
		{"12.500000000000000000000000000000000000000000000", 4, 2, "1250"},
		{"9999999999.99", 12, 2, "999999999999"},
		// past 18 digits: the big.Int path
		{"1234567890123456789.12", 21, 2, "123456789012345678912"},
		{"99999999999999999999999999999999999999", 38, 0, "99999999999999999999999999999999999999"},
		{"-99999999999999999999999999999999999999", 38, 0, "-99999999999999999999999999999999999999"},
		{"0.12345678901234567890123456789012345678", 38, 38, "12345678901234567890123456789012345678"},
		{"1e37", 38, 0, "10000000000000000000000000000000000000"},
		{"123456789012345678", 18, 0, "123456789012345678"},
		{"1234567890123456789", 19, 0, "1234567890123456789"},
	}
	for _, c := range cases {
		got, err := parseDecimal([]byte(c.in), c.p, c.s)
		if err != nil {
			t.Errorf("parseDecimal(%q, %d, %d): %v", c.in, c.p, c.s, err)
			continue
		}
		if decString(got) != c.unscaled {
			t.Errorf("parseDecimal(%q, %d, %d) = %s, want unscaled %s", c.in, c.p, c.s, decString(got), c.unscaled)
		}
	}
}

func TestParseDecimalRejects(t *testing.T) {
	cases := []struct {
		in   string
		p, s int32
		want error // nil: any error
	}{
		{"1.2345", 12, 2, errScale},
		{"0.001", 12, 2, errScale},
		{"1.55e-1", 5, 2, errScale},
		{"12345678901.23", 12, 2, errPrecision}, // 13 digits into precision 12
		{"100", 2, 0, errPrecision},
		{"1e2", 2, 0, errPrecision},
		{"999999999999999999999999999999999999999", 38, 0, errPrecision}, // 39 digits
		{"1e38", 38, 0, errPrecision},
		{"1e400", 38, 0, errPrecision},
		{"0.5", 38, 38, nil}, // fits
		{"", 10, 2, errNumber},
		{"-", 10, 2, errNumber},
		{".", 10, 2, errNumber},
		{"abc", 10, 2, errNumber},
		{"1e", 10, 2, errNumber},
		{"1e5x", 10, 2, errNumber},
		{"1.2.3", 10, 2, errNumber},
		{"--1", 10, 2, errNumber},
		{"0x10", 10, 2, errNumber},
		{" 1", 10, 2, errNumber},
		{"1 ", 10, 2, errNumber},
		{"NaN", 10, 2, errNumber},
		{"Infinity", 10, 2, errNumber},
	}
	for _, c := range cases {
		got, err := parseDecimal([]byte(c.in), c.p, c.s)
		if c.in == "0.5" {
			if err != nil || decString(got) != "50000000000000000000000000000000000000" {
				t.Errorf("parseDecimal(0.5, 38, 38) = %s, %v", decString(got), err)
			}
			continue
		}
		if err == nil {
			t.Errorf("parseDecimal(%q, %d, %d) = %s, want an error", c.in, c.p, c.s, decString(got))
			continue
		}
		if c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("parseDecimal(%q, %d, %d) error %v, want %v", c.in, c.p, c.s, err, c.want)
		}
	}
}

// The big path must agree with the fast path at the boundary and with
// math/big everywhere.
func TestParseDecimalAgreesWithBig(t *testing.T) {
	for _, in := range []string{
		"1", "-1", "123456789012345678", "1234567890123456789", "-1234567890123456789",
		"170141183460469231731687303715884105727", // > 38 digits: rejected
		"17014118346046923173168730371588410572",
		"-17014118346046923173168730371588410572",
		"3.14159265358979323846264338327950288",
	} {
		var want big.Float
		want.SetPrec(300)
		if _, ok := want.SetString(in); !ok {
			t.Fatal(in)
		}
		scale := int32(0)
		if i := strings.IndexByte(in, '.'); i >= 0 {
			scale = int32(len(in) - i - 1)
		}
		got, err := parseDecimal([]byte(in), 38, scale)
		digits := len(strings.TrimLeft(strings.NewReplacer("-", "", ".", "").Replace(in), "0"))
		if digits > 38 {
			if err == nil {
				t.Errorf("%s (%d digits) accepted", in, digits)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		unscaled := new(big.Float).SetPrec(300).SetInt(got.BigInt())
		unscaled.Quo(unscaled, new(big.Float).SetPrec(300).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
		if unscaled.Cmp(&want) != 0 {
			t.Errorf("%s → %s / 10^%d", in, decString(got), scale)
		}
	}
}

func TestParseInt64(t *testing.T) {
	ok := map[string]int64{
		"12":                    12,
		"-12":                   -12,
		"0":                     0,
		"12.0":                  12,
		"12.000":                12,
		"-7.0":                  -7,
		"1e3":                   1000,
		"1.2e1":                 12,
		"120e-1":                12,
		"9223372036854775807":   9223372036854775807,
		"-9223372036854775808":  -9223372036854775808,
		"9223372036854775807.0": 9223372036854775807,
		"00042":                 42,
	}
	for in, want := range ok {
		got, err := parseInt64([]byte(in))
		if err != nil {
			t.Errorf("parseInt64(%q): %v", in, err)
			continue
		}
		if got != want {
			t.Errorf("parseInt64(%q) = %d, want %d", in, got, want)
		}
	}
	for _, in := range []string{
		"12.5", "0.1", "1e-1", "-0.5",
		"9223372036854775808", "-9223372036854775809",
		"18446744073709551616", "99999999999999999999", "1e19", "-1e19",
		"99999999999999999999999999999999999999999",
		"1e400",
		"", "abc", "12a", "0x10", "1_000", " 1", "true", "null",
	} {
		if got, err := parseInt64([]byte(in)); err == nil {
			t.Errorf("parseInt64(%q) = %d, want an error", in, got)
		}
	}
}

func TestParseDate(t *testing.T) {
	days := func(y int, m time.Month, d int) int64 {
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
	}
	ok := map[string]int64{
		"1970-01-01":                 0,
		"1970-01-02":                 1,
		"1969-12-31":                 -1, // pre-1970 floors, never rounds towards zero
		"1900-01-01":                 -25567,
		"2000-01-01":                 10957,
		"2026-07-13":                 days(2026, 7, 13),
		"2024-02-29":                 days(2024, 2, 29),
		"2026-07-13T00:00:00Z":       days(2026, 7, 13),
		"2026-07-13T00:00:00":        days(2026, 7, 13),
		"2026-07-13 00:00:00.000000": days(2026, 7, 13),
		"1969-12-31T00:00:00Z":       -1,
		"1960-06-15T00:00:00Z":       days(1960, 6, 15),
	}
	for in, want := range ok {
		got, err := parseDate([]byte(in))
		if err != nil {
			t.Errorf("parseDate(%q): %v", in, err)
			continue
		}
		if got != want {
			t.Errorf("parseDate(%q) = %d, want %d", in, got, want)
		}
	}
	for _, in := range []string{
		"2026-07-13T00:00:00.000001Z", // a time of day
		"2026-07-13T12:00:00Z",
		"1969-12-31T23:59:59Z",
		"2026-07-13T00:00:00+02:00", // 2026-07-12 22:00 UTC
		"2023-02-29", "2026-13-01", "2026-00-10", "2026-7-13", "20260713", "", "yesterday",
	} {
		if got, err := parseDate([]byte(in)); err == nil {
			t.Errorf("parseDate(%q) = %d, want an error", in, got)
		}
	}
}

func TestFloorDiv(t *testing.T) {
	for _, c := range [][3]int64{{0, 86400, 0}, {86399, 86400, 0}, {-1, 86400, -1}, {-86400, 86400, -1}, {-86401, 86400, -2}} {
		if got := floorDiv(c[0], c[1]); got != c[2] {
			t.Errorf("floorDiv(%d, %d) = %d, want %d", c[0], c[1], got, c[2])
		}
	}
}

// convVersion builds a one-table version whose columns have exactly the
// given types (through hints), all nullable.
func convVersion(t *testing.T, cols ...string) *arrowschema.Version {
	t.Helper()
	hints := map[string]arrowschema.Type{}
	md := cdc.TableMetadata{Table: "S.T"}
	for i := 0; i < len(cols); i += 2 {
		typ, err := arrowschema.ParseType(cols[i+1])
		if err != nil {
			t.Fatal(err)
		}
		hints["S.T:"+cols[i]] = typ
		md.Columns = append(md.Columns, cdc.Column{Name: cols[i], Type: "string", Nullable: true})
	}
	c := arrowschema.NewCatalog(arrowschema.Options{Hints: hints})
	ev, err := c.ApplyMetadata(md, "p", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	return ev.Version
}

func str(name, escaped string) cdc.Field {
	return cdc.Field{Name: name, Value: []byte(escaped), Type: cdc.TypeString}
}
func num(name, text string) cdc.Field {
	return cdc.Field{Name: name, Value: []byte(text), Type: cdc.TypeNumber}
}
func boolean(name, text string) cdc.Field {
	return cdc.Field{Name: name, Value: []byte(text), Type: cdc.TypeBool}
}
func null(name string) cdc.Field {
	return cdc.Field{Name: name, Value: []byte("null"), Type: cdc.TypeNull}
}

// convertOne converts a one-field image and returns the slot of column 0.
func convertOne(t *testing.T, typ string, f cdc.Field) (slot, error) {
	t.Helper()
	v := convVersion(t, f.Name, typ)
	c := newImageConverter(v)
	err := c.convert(&cdc.Image{Present: true, Fields: []cdc.Field{f}}, "after")
	return c.slots[0], err
}

func wantMismatch(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: accepted", what)
		return
	}
	re, ok := cdc.AsReject(err)
	if !ok || re.Reason != cdc.ReasonValueMismatch {
		t.Errorf("%s: error %v, want a %s RejectError", what, err, cdc.ReasonValueMismatch)
	}
}

func TestConvertInt64(t *testing.T) {
	for _, c := range []struct {
		f    cdc.Field
		want int64
	}{
		{num("C", "1001"), 1001},
		{num("C", "12.0"), 12},
		{num("C", "9223372036854775807"), 9223372036854775807},
		{str("C", "42"), 42}, // numeric strings are numbers
		{str("C", "-42.00"), -42},
	} {
		s, err := convertOne(t, "int64", c.f)
		if err != nil {
			t.Errorf("%s: %v", c.f.Value, err)
			continue
		}
		if s.state != slotSet || s.i64 != c.want {
			t.Errorf("%s: slot %+v, want %d", c.f.Value, s, c.want)
		}
	}
	for _, f := range []cdc.Field{
		num("C", "12.5"), num("C", "9223372036854775808"), str("C", "twelve"),
		boolean("C", "true"), {Name: "C", Value: []byte(`{"a":1}`), Type: cdc.TypeObject},
		{Name: "C", Value: []byte(`[1]`), Type: cdc.TypeArray},
	} {
		_, err := convertOne(t, "int64", f)
		wantMismatch(t, "int64 "+string(f.Value), err)
	}
}

func TestConvertFloat64(t *testing.T) {
	for _, c := range []struct {
		f    cdc.Field
		want float64
	}{
		{num("C", "125.50"), 125.5},
		{num("C", "-1e-3"), -0.001},
		{str("C", "2.5"), 2.5},
		{num("C", "0"), 0},
		// integers a float64 holds exactly, however large
		{num("C", "9007199254740992"), 1 << 53},
		{num("C", "-9007199254740994"), -(1<<53 + 2)},
		{num("C", "100000000000000000000"), 1e20},
		{str("C", "00009007199254740992"), 1 << 53},
		// past 2^53 a fraction or an exponent is rounded, as any float is
		{num("C", "9007199254740993.0"), 1 << 53},
		{num("C", "9007199254740993e0"), 1 << 53},
		// decimal text in every shape a source may send
		{str("C", "+1.5"), 1.5}, {str("C", ".5"), 0.5}, {str("C", "5."), 5}, {str("C", "-2.5E+2"), -250}, {str("C", "1e-2"), 0.01},
		// what a double column holds besides numbers
		{str("C", "Infinity"), math.Inf(1)}, {str("C", "-inf"), math.Inf(-1)}, {str("C", "+Inf"), math.Inf(1)},
		// zero however written, and a subnormal: rounded, not lost
		{num("C", "0e-999"), 0}, {str("C", "-0.000e5"), 0}, {num("C", "5e-324"), 5e-324}, {num("C", "1e-310"), 1e-310},
	} {
		s, err := convertOne(t, "float64", c.f)
		if err != nil || s.f64() != c.want {
			t.Errorf("%s: %v %v, want %v", c.f.Value, s.f64(), err, c.want)
		}
	}
	if s, err := convertOne(t, "float64", str("C", "NaN")); err != nil || !math.IsNaN(s.f64()) {
		t.Errorf("NaN: %v %v", s.f64(), err)
	}
	for _, f := range []cdc.Field{num("C", "1e400"), str("C", "abc"),
		// a non-zero number too small for float64 would be stored as 0,
		// as one too large would be stored as Inf
		num("C", "1e-999"), num("C", "-1e-999"), str("C", "0.001e-400"), num("C", "2e-324"), boolean("C", "false"), str("C", ""),
		// integers it would round: a bare number column holding big IDs
		num("C", "9007199254740993"), num("C", "-9007199254740993"), str("C", "1234567890123456789"), str("C", "+9007199254740993"),
		num("C", "100000000000000000001"),
		// what strconv also parses, but is not a decimal number
		str("C", "0x1p4"), str("C", "1_000"), str("C", "1_0.5"), str("C", "-NaN"), str("C", "Infinit"),
		str("C", "."), str("C", "1e"), str("C", "1e+"), str("C", "--1"), str("C", " 1"), str("C", "1.5 ")} {
		_, err := convertOne(t, "float64", f)
		wantMismatch(t, "float64 "+string(f.Value), err)
	}
}

func TestConvertDecimal(t *testing.T) {
	s, err := convertOne(t, "decimal(12,2)", num("C", "125.50"))
	if err != nil || decString(s.dec()) != "12550" {
		t.Errorf("125.50 → %s, %v; want 12550", decString(s.dec()), err)
	}
	s, err = convertOne(t, "decimal(12,2)", str("C", "-3.1"))
	if err != nil || decString(s.dec()) != "-310" {
		t.Errorf(`"-3.1" → %s, %v; want -310`, decString(s.dec()), err)
	}
	for _, f := range []cdc.Field{num("C", "1.2345"), num("C", "12345678901.23"), boolean("C", "true"), str("C", "x")} {
		_, err := convertOne(t, "decimal(12,2)", f)
		wantMismatch(t, "decimal "+string(f.Value), err)
	}
}

func TestConvertBoolean(t *testing.T) {
	for _, c := range []struct {
		f    cdc.Field
		want bool
	}{
		{boolean("C", "true"), true},
		{boolean("C", "false"), false},
		{num("C", "1"), true},
		{num("C", "0"), false},
		{str("C", "true"), true},
		{str("C", "FALSE"), false},
		{str("C", "True"), true},
		{str("C", "1"), true}, // Qlik's values are strings
		{str("C", "0"), false},
	} {
		s, err := convertOne(t, "boolean", c.f)
		if err != nil || s.state != slotSet || s.bool() != c.want {
			t.Errorf("%v %s: %v %v, want %v", c.f.Type, c.f.Value, s.bool(), err, c.want)
		}
	}
	for _, f := range []cdc.Field{str("C", "maybe"), str("C", "yes"), str("C", ""), num("C", "2"), num("C", "1.0"), num("C", "-1"), str("C", "01"), str("C", "2"),
		{Name: "C", Value: []byte(`{}`), Type: cdc.TypeObject}} {
		_, err := convertOne(t, "boolean", f)
		wantMismatch(t, "boolean "+string(f.Value), err)
	}
}

func TestConvertTimestamp(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Time
	}{
		{"2026-07-13T04:01:01.123456Z", time.Date(2026, 7, 13, 4, 1, 1, 123456000, time.UTC)},
		{"2026-07-13T04:01:01.123456000Z", time.Date(2026, 7, 13, 4, 1, 1, 123456000, time.UTC)},
		{"2026-07-13T04:01:01Z", time.Date(2026, 7, 13, 4, 1, 1, 0, time.UTC)},
		{"2026-07-13 06:01:01.5+02:00", time.Date(2026, 7, 13, 4, 1, 1, 500000000, time.UTC)},
		{"2026-07-13T04:01:01", time.Date(2026, 7, 13, 4, 1, 1, 0, time.UTC)},
		{"1969-12-31T23:59:59.999999Z", time.Date(1969, 12, 31, 23, 59, 59, 999999000, time.UTC)},
		{"1900-01-01T00:00:00Z", time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		s, err := convertOne(t, "timestamp", str("C", c.in))
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if s.i64 != c.want.UnixMicro() {
			t.Errorf("%s → %d µs, want %d", c.in, s.i64, c.want.UnixMicro())
		}
	}
	if got := time.Date(1969, 12, 31, 23, 59, 59, 999999000, time.UTC).UnixMicro(); got != -1 {
		t.Fatalf("reference check: %d", got)
	}
	for _, f := range []cdc.Field{
		str("C", "2026-07-13T04:01:01.1234567Z"), // sub-microsecond digits
		str("C", "2026-07-13T04:01:01.000000001Z"),
		str("C", "2026-02-30T00:00:00Z"),
		str("C", "2026-07-13T25:00:00Z"),
		str("C", "yesterday"),
		str("C", ""),
		num("C", "1783915261"), // epoch numbers are not ISO 8601
		boolean("C", "true"),
	} {
		_, err := convertOne(t, "timestamp", f)
		wantMismatch(t, "timestamp "+string(f.Value), err)
	}
}

func TestConvertDate(t *testing.T) {
	s, err := convertOne(t, "date", str("C", "1969-12-31"))
	if err != nil || s.i64 != -1 {
		t.Errorf("1969-12-31 → %d, %v; want -1", s.i64, err)
	}
	s, err = convertOne(t, "date", str("C", "2026-07-13T00:00:00Z"))
	want := time.Date(2026, 7, 13, 0, 0, 0, 0, time.UTC).Unix() / 86400
	if err != nil || s.i64 != want {
		t.Errorf("midnight timestamp → %d, %v; want %d", s.i64, err, want)
	}
	for _, f := range []cdc.Field{str("C", "2026-07-13T10:00:00Z"), str("C", "13/07/2026"), num("C", "20260713")} {
		_, err := convertOne(t, "date", f)
		wantMismatch(t, "date "+string(f.Value), err)
	}
}

func TestConvertBinary(t *testing.T) {
	raw := []byte{0xde, 0xad, 0xbe, 0xef, 0x00, 0xff, 0xfb, 0xff}
	enc := base64.StdEncoding.EncodeToString(raw) // contains '/' and '+'
	if !strings.ContainsAny(enc, "/+") {
		t.Fatalf("test data %q should contain / or +", enc)
	}
	s, err := convertOne(t, "binary", str("C", enc))
	if err != nil || string(s.bytes) != string(raw) {
		t.Errorf("%s → %x, %v; want %x", enc, s.bytes, err, raw)
	}
	// JSON may escape '/' as "\/".
	escaped := strings.ReplaceAll(enc, "/", `\/`)
	s, err = convertOne(t, "binary", str("C", escaped))
	if err != nil || string(s.bytes) != string(raw) {
		t.Errorf("%s → %x, %v; want %x", escaped, s.bytes, err, raw)
	}
	s, err = convertOne(t, "binary", str("C", ""))
	if err != nil || s.state != slotSet || len(s.bytes) != 0 {
		t.Errorf("empty base64: %+v %v", s, err)
	}
	for _, f := range []cdc.Field{str("C", "not base64!"), str("C", "3q2+7w=x"), num("C", "12")} {
		_, err := convertOne(t, "binary", f)
		wantMismatch(t, "binary "+string(f.Value), err)
	}
}

func TestConvertString(t *testing.T) {
	for _, c := range []struct {
		f    cdc.Field
		want string
	}{
		{str("C", "NEW"), "NEW"},
		{str("C", `caf\u00e9 \"x\"\n\ttab\\`), "café \"x\"\n\ttab\\"},
		{str("C", `\ud83d\ude00`), "😀"},
		{str("C", "日本"), "日本"},
		{str("C", ""), ""},
		{num("C", "125.50"), "125.50"}, // the number text exactly, no float round trip
		{boolean("C", "true"), "true"},
	} {
		s, err := convertOne(t, "string", c.f)
		if err != nil || s.state != slotSet || string(s.bytes) != c.want {
			t.Errorf("%s → %q, %v; want %q", c.f.Value, s.bytes, err, c.want)
		}
	}
	for _, f := range []cdc.Field{str("C", `bad \x escape`), str("C", "\xff\xfe"), str("C", "ok\xc3")} {
		_, err := convertOne(t, "string", f)
		wantMismatch(t, "string "+string(f.Value), err)
	}
}

func TestConvertScratchReuse(t *testing.T) {
	v := convVersion(t, "A", "string", "B", "string")
	c := newImageConverter(v)
	if err := c.convert(&cdc.Image{Present: true, Fields: []cdc.Field{str("A", `x\ny`), str("B", `\"b\"`)}}, "after"); err != nil {
		t.Fatal(err)
	}
	if string(c.slots[0].bytes) != "x\ny" || string(c.slots[1].bytes) != `"b"` {
		t.Fatalf("first: %q %q", c.slots[0].bytes, c.slots[1].bytes)
	}
	long := strings.Repeat(`\u00e9`, 100)
	if err := c.convert(&cdc.Image{Present: true, Fields: []cdc.Field{str("A", long), str("B", `\tz`)}}, "after"); err != nil {
		t.Fatal(err)
	}
	if string(c.slots[0].bytes) != strings.Repeat("é", 100) || string(c.slots[1].bytes) != "\tz" {
		t.Errorf("second: %q %q", c.slots[0].bytes, c.slots[1].bytes)
	}
}

func TestConvertStates(t *testing.T) {
	v := convVersion(t, "A", "int64", "B", "string", "C", "date")
	c := newImageConverter(v)
	// Fields in an order other than the columns'.
	if err := c.convert(&cdc.Image{Present: true, Fields: []cdc.Field{str("B", "x"), null("A")}}, "after"); err != nil {
		t.Fatal(err)
	}
	if c.slots[0].state != slotNull || c.slots[1].state != slotSet || c.slots[2].state != slotAbsent {
		t.Errorf("states %v %v %v, want null set absent", c.slots[0].state, c.slots[1].state, c.slots[2].state)
	}
	// The next image starts from absent again.
	if err := c.convert(&cdc.Image{Present: true, Fields: []cdc.Field{num("A", "1")}}, "after"); err != nil {
		t.Fatal(err)
	}
	if c.slots[0].state != slotSet || c.slots[1].state != slotAbsent || c.slots[2].state != slotAbsent {
		t.Errorf("states after reuse %v %v %v", c.slots[0].state, c.slots[1].state, c.slots[2].state)
	}

	err := c.convert(&cdc.Image{Present: true, Fields: []cdc.Field{num("A", "1"), str("NOPE", "x")}}, "before")
	re, ok := cdc.AsReject(err)
	if !ok || re.Reason != cdc.ReasonUnknownColumn {
		t.Fatalf("unknown column: %v", err)
	}
	if !strings.Contains(err.Error(), "NOPE") || !strings.Contains(err.Error(), "before") {
		t.Errorf("message %q should name the column and the image", err)
	}
	err = c.convert(&cdc.Image{Present: true, Fields: []cdc.Field{str("C", "2026-99-01")}}, "after")
	if re, ok := cdc.AsReject(err); !ok || re.Reason != cdc.ReasonValueMismatch || !strings.Contains(err.Error(), `"C"`) {
		t.Errorf("mismatch: %v", err)
	}
}

// FuzzParseInt64 holds parseInt64 to strconv wherever strconv parses.
// parseFloat64 is strconv.ParseFloat, bit for bit, on every text: its fast
// path must round as strconv does, and anything else must reach strconv.
// specialText is the reference for specialFloat.
var specialText = regexp.MustCompile(`^(?i:[+-]?inf(inity)?|nan)$`)

// decimalText is the reference for decimalNumber.
var decimalText = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

func FuzzParseFloat64(f *testing.F) {
	for _, s := range []string{"0", "-0", "125.50", "-1e-3", "1e-999", "0e-999", "5e-324", "2e-324", "0.1", "9007199254740993", "9007199254740992.5",
		"1.", ".5", "-", "", "+1", "1e22", "123456789012345678.9", "0.0000000000000000000001", "00012.3400", "1_0", "Inf", "0x1p3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, gerr := parseFloat64([]byte(s))
		if !decimalText.MatchString(s) && !specialText.MatchString(s) {
			// strconv also takes hexadecimal and digit separators
			if gerr == nil {
				t.Fatalf("parseFloat64(%q) = %v, want an error: not a decimal number", s, got)
			}
			return
		}
		want, werr := strconv.ParseFloat(s, 64)
		if werr == nil && want == 0 && strings.ContainsAny(strings.FieldsFunc(s, func(r rune) bool { return r == 'e' || r == 'E' })[0], "123456789") {
			// a non-zero number that strconv rounds to zero
			if !errors.Is(gerr, errFloatUnderflow) {
				t.Fatalf("parseFloat64(%q) = %v, %v; want the underflow refused", s, got, gerr)
			}
			return
		}
		if (werr == nil) != (gerr == nil) || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("parseFloat64(%q) = %v (%x), %v; strconv: %v (%x), %v", s, got, math.Float64bits(got), gerr, want, math.Float64bits(want), werr)
		}
	})
}

// The fast path's inputs, drawn at random: up to 19 digits with the point
// anywhere, leading zeros, both signs, near 2^53 and past it.
func TestParseFloat64MatchesStrconv(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		digits := make([]byte, 1+rng.IntN(20))
		for i := range digits {
			digits[i] = byte('0' + rng.IntN(10))
		}
		s := string(digits)
		if p := rng.IntN(len(digits) + 1); p > 0 && p < len(digits) {
			s = s[:p] + "." + s[p:]
		}
		if rng.IntN(2) == 0 {
			s = "-" + s
		}
		want, werr := strconv.ParseFloat(s, 64)
		got, gerr := parseFloat64([]byte(s))
		if (werr == nil) != (gerr == nil) || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("parseFloat64(%q) = %v, %v; strconv: %v, %v", s, got, gerr, want, werr)
		}
	}
}

func BenchmarkParseFloat64(b *testing.B) {
	texts := [][]byte{[]byte("125.50"), []byte("-98765.4321"), []byte("3"), []byte("0.000125")}
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			for _, t := range texts {
				parseFloat64(t)
			}
		}
	})
	b.Run("strconv", func(b *testing.B) {
		for b.Loop() {
			for _, t := range texts {
				strconv.ParseFloat(unsafeString(t), 64)
			}
		}
	})
}

func FuzzParseInt64(f *testing.F) {
	for _, s := range []string{"0", "-0", "42", "-9223372036854775808", "999999999999999999", "-", "+1", "1e3", "007"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := strconv.ParseInt(s, 10, 64)
		got, gerr := parseInt64([]byte(s))
		if err == nil && (gerr != nil || got != want) {
			t.Fatalf("parseInt64(%q) = %d, %v; strconv: %d", s, got, gerr, want)
		}
	})
}

// TestQlikIntegersStayInTheirSourceRange: a Qlik integer column narrower
// than int64 (or UINT8, kept as decimal(20,0)) takes its type's whole
// range and refuses anything outside it; with a type hint the hint's
// type alone decides.
func TestQlikIntegersStayInTheirSourceRange(t *testing.T) {
	md := cdc.TableMetadata{Table: "S.Q", Format: cdc.FormatQlik}
	for _, n := range []string{"INT1", "INT2", "INT4", "INT8", "UINT1", "UINT2", "UINT4", "UINT8", "HINTED"} {
		native := n
		if n == "HINTED" {
			native = "UINT1"
		}
		md.Columns = append(md.Columns, cdc.Column{Name: n, Type: "number", Nullable: true, NativeType: native})
	}
	c := arrowschema.NewCatalog(arrowschema.Options{Hints: map[string]arrowschema.Type{"S.Q:HINTED": {Kind: arrowschema.KindInt64}}})
	ev, err := c.ApplyMetadata(md, "p", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	conv := newImageConverter(ev.Version)
	one := func(col, value string) error {
		return conv.convert(&cdc.Image{Present: true, Fields: []cdc.Field{str(col, value)}}, "after")
	}
	for _, ok := range [][2]string{
		{"INT1", "-128"}, {"INT1", "127"}, {"INT2", "-32768"}, {"INT2", "32767"}, {"INT4", "-2147483648"}, {"INT4", "2147483647"},
		{"INT8", "-9223372036854775808"}, {"INT8", "9223372036854775807"},
		{"UINT1", "0"}, {"UINT1", "255"}, {"UINT2", "65535"}, {"UINT4", "4294967295"},
		{"UINT8", "0"}, {"UINT8", "18446744073709551615"}, {"HINTED", "256"},
	} {
		if err := one(ok[0], ok[1]); err != nil {
			t.Errorf("%s %s: %v", ok[0], ok[1], err)
		}
	}
	for _, bad := range [][2]string{
		{"INT1", "-129"}, {"INT1", "128"}, {"INT2", "32768"}, {"INT4", "-2147483649"}, {"INT4", "2147483648"},
		{"UINT1", "-1"}, {"UINT1", "256"}, {"UINT2", "65536"}, {"UINT4", "-3"}, {"UINT4", "4294967296"},
		{"UINT8", "-1"}, {"UINT8", "18446744073709551616"},
	} {
		wantMismatch(t, bad[0]+" "+bad[1], one(bad[0], bad[1]))
	}
}

// TestNumericTextIsANumberThatFits: a Qlik NUMERIC kept as text (too wide
// for Decimal128, or a scale outside 0..p) takes decimal numbers only, and
// only those its precision and scale can hold.
func TestNumericTextIsANumberThatFits(t *testing.T) {
	for _, c := range []struct {
		native string
		ok     []string
		bad    []string
	}{
		{"NUMERIC(39,0)", []string{"123456789012345678901234567890123456789", "-1", "+0", "0", "5.000", "1e38", "00012"},
			[]string{"abc", "", "1.5", "1e39", "1234567890123456789012345678901234567890", "0x10", "1_0", "NaN"}},
		{"NUMERIC(3,5)", []string{"0.00999", "-0.00001", "0", "0.0010", "9.99e-3"}, []string{"0.1", "0.01", "0.000001", "1"}},
		{"NUMERIC(5,-2)", []string{"12300", "9999900", "-100", "0", "1.23e4"}, []string{"12345", "10", "0.5", "10000000"}},
		{"NUMERIC(0,0)", []string{"1.5", "-123456789012345678901234567890123456789012.5"}, []string{"x", "1.2.3"}},
		{"NUMERIC", []string{"42"}, []string{"forty-two"}},
		// Past any database's precision: checked as a number only, and
		// with no buffer of that size (it panicked, out of range).
		{"NUMERIC(999999999999999,1)", []string{"1.5", "-12345678901234567890123456789012345678901234567890"}, []string{"x", ""}},
		{"NUMERIC(2147483648,1)", []string{"1.5"}, []string{"1.5.1"}},
		{"NUMERIC(10,-999999999999)", []string{"1"}, []string{"one"}},
		{"NUMERIC(1000,0)", []string{strings.Repeat("9", 1000)}, []string{strings.Repeat("9", 1001)}},
	} {
		typ, r, err := arrowschema.QlikTypeOf(c.native)
		if err != nil || typ.Kind != arrowschema.KindString || !r.NumericText || !r.Bounded() {
			t.Fatalf("%s: %v %+v %v, want text checked as a number", c.native, typ, r, err)
		}
		for _, v := range c.ok {
			if err := checkRange(r, typ.Kind, &slot{bytes: []byte(v)}); err != nil {
				t.Errorf("%s %q: %v", c.native, v, err)
			}
		}
		for _, v := range c.bad {
			if err := checkRange(r, typ.Kind, &slot{bytes: []byte(v)}); err == nil {
				t.Errorf("%s %q accepted", c.native, v)
			}
		}
	}
}
