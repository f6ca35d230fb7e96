package writer

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
)

// slotState says whether a column of an image was present.
type slotState uint8

const (
	slotAbsent slotState = iota // not in the image (partial image)
	slotNull                    // present with JSON null
	slotSet                     // present with a value
)

// slot holds one converted column value before it is appended. Converting
// the whole image first means a record whose last column does not fit
// leaves no half-appended row behind.
type slot struct {
	bytes []byte // string and binary; points into the record or scratch
	// i64 is the value of an int64, timestamp (µs) or date (days), the
	// bits of a float64, 1 or 0 for a boolean, and a decimal's low 64
	// bits; hi is a decimal's high 64 bits. One word for all kinds keeps
	// a slot at 48 bytes: the images converted ahead for a batch of
	// records are read on another core, a cache line per slot and a
	// third.
	i64   int64
	hi    int64
	state slotState
}

func (s *slot) f64() float64            { return math.Float64frombits(uint64(s.i64)) }
func (s *slot) setF64(v float64)        { s.i64 = int64(math.Float64bits(v)) }
func (s *slot) dec() decimal128.Num     { return decimal128.New(s.hi, uint64(s.i64)) }
func (s *slot) setDec(v decimal128.Num) { s.i64, s.hi = int64(v.LowBits()), v.HighBits() }
func (s *slot) bool() bool              { return s.i64 != 0 }
func (s *slot) setBool(v bool)          { s.i64 = int64(b2i(v)) }

// imageConverter converts row images of one schema version.
type imageConverter struct {
	version *arrowschema.Version
	slots   []slot // where convert writes; a Converted's (recordConverter.convertInto)
	// order[i] is the column the i-th field of the last image named:
	// images of a table list their fields in the same order, and checking
	// the column in that place is cheaper than a lookup per field.
	order []int
	// names[i] is the i-th field's name in the last image, kept beside
	// order: reading it through the version's columns cost a cache miss
	// per field. It is the decoder's copy of the name, not the version's:
	// decoders hand out one interned string per name, so the comparison
	// is a pointer's and does not read the name's bytes, a second cache
	// miss per field with hundreds of tables.
	names []string
	// cols[i] is what converting a value of column i needs, packed four
	// to a cache line: with hundreds of tables interleaved, reading the
	// type from the version's Columns (112 bytes each) was a cache miss
	// per value.
	cols []convColumn
	// arena takes the unescaped strings and decoded binaries: a
	// Converted's, so that they last as long as its slots, which a record
	// converted ahead keeps past the next record's conversion.
	arena *[]byte
	own   []byte // the arena of a converter used alone (tests)
}

// convColumn is a column's type, and whether its source type bounds its
// values (Column.Range).
type convColumn struct {
	typ     arrowschema.Type
	bounded bool
	hex     bool // binary values come as hexadecimal digits, not base64
}

func newImageConverter(v *arrowschema.Version) *imageConverter {
	cols := make([]convColumn, len(v.Columns))
	for i, c := range v.Columns {
		// Comparing the range per value showed in the profile too.
		cols[i] = convColumn{typ: c.Type, bounded: c.Range.Bounded(), hex: c.Range.Hex}
	}
	c := &imageConverter{version: v, slots: make([]slot, len(v.Columns)), cols: cols}
	c.arena = &c.own
	return c
}

// convert fills c.slots from im. Unknown columns and values that do not
// fit their column are rejected; nothing is ever coerced lossily.
func (c *imageConverter) convert(im *cdc.Image, imageName string) error {
	for i := range c.slots {
		c.slots[i].state = slotAbsent
	}
	for fi := range im.Fields {
		f := &im.Fields[fi]
		idx := -1
		if fi < len(c.order) && c.names[fi] == f.Name {
			idx = c.order[fi]
		} else {
			j, ok := c.version.ColumnIndex(f.Name)
			if !ok {
				return cdc.Rejectf(cdc.ReasonUnknownColumn, "%s image has column %q, which is not in the metadata of %s (schema version %d)",
					imageName, f.Name, c.version.Table, c.version.Number)
			}
			idx = j
			if fi < len(c.order) {
				c.order[fi], c.names[fi] = j, f.Name
			} else if fi == len(c.order) && fi < 2*len(c.slots) {
				c.order = append(c.order, j)
				c.names = append(c.names, f.Name)
			}
		}
		s := &c.slots[idx]
		if f.Type == cdc.TypeNull {
			s.state = slotNull
			continue
		}
		col := &c.cols[idx]
		err := c.convertValue(col, f, s)
		if err == nil && col.bounded {
			err = checkRange(c.version.Columns[idx].Range, col.typ.Kind, s)
		}
		if err != nil {
			return cdc.Rejectf(cdc.ReasonValueMismatch, "column %q of %s (%s): %v", f.Name, c.version.Table, col.typ, err)
		}
		s.state = slotSet
	}
	return nil
}

// checkRange refuses a converted value its source type could not hold.
func checkRange(r arrowschema.SourceRange, kind arrowschema.Kind, s *slot) error {
	switch {
	case kind == arrowschema.KindString && r.NumericText:
		return checkNumericText(s.bytes, r)
	case kind == arrowschema.KindInt64 && (s.i64 < r.Min || s.i64 > r.Max):
		return fmt.Errorf("%d is outside the source type's range %d to %d", s.i64, r.Min, r.Max)
	case kind == arrowschema.KindDecimal && r.MaxUint64 && s.hi != 0:
		// scale 0: in range exactly when the value fits 64 bits, unsigned
		return fmt.Errorf("%s is outside the source type's range 0 to 18446744073709551615", s.dec().ToString(0))
	}
	return nil
}

func (c *imageConverter) convertValue(col *convColumn, f *cdc.Field, s *slot) error {
	t := col.typ
	var buf []byte
	if f.Type == cdc.TypeString && !f.Plain {
		buf = c.buffer(len(f.Value)) // unescaped is never longer
	}
	text, err := f.Text(buf)
	if err != nil {
		return err
	}
	if f.Type == cdc.TypeString && len(text) > 0 && &text[0] != &f.Value[0] {
		c.keep(text)
	}
	switch t.Kind {
	case arrowschema.KindString:
		// Parquet strings are UTF-8 and readers (DuckDB) refuse a file with
		// anything else; JSON validation does not check it.
		if !f.Plain && !utf8.Valid(text) {
			return errors.New("string is not valid UTF-8")
		}
		s.bytes = text
		return nil
	case arrowschema.KindInt64:
		if f.Type != cdc.TypeNumber && f.Type != cdc.TypeString {
			return errNotNumber(f)
		}
		v, err := parseInt64(text)
		if err != nil {
			return err
		}
		s.i64 = v
	case arrowschema.KindFloat64:
		if f.Type != cdc.TypeNumber && f.Type != cdc.TypeString {
			return errNotNumber(f)
		}
		v, err := parseFloat64(text)
		if err != nil {
			if errors.Is(err, errFloatUnderflow) {
				return fmt.Errorf("number %.40s is too small for float64 (it would be stored as 0); give the column the type hint string to keep such values", text)
			}
			if errors.Is(err, strconv.ErrRange) {
				return errors.New("number is out of float64 range")
			}
			return errors.New("not a number")
		}
		if (v >= 1<<53 || v <= -(1<<53)) && !floatHoldsInteger(text, v) {
			return fmt.Errorf("integer %s has no exact float64 (it would be stored as %s); give the column a type hint (int64 or decimal(p,0))",
				text, strconv.FormatFloat(v, 'f', 0, 64))
		}
		s.setF64(v)
	case arrowschema.KindDecimal:
		if f.Type != cdc.TypeNumber && f.Type != cdc.TypeString {
			return errNotNumber(f)
		}
		v, err := parseDecimal(text, t.Precision, t.Scale)
		if err != nil {
			return err
		}
		s.setDec(v)
	case arrowschema.KindBoolean:
		switch {
		case f.Type == cdc.TypeBool:
			s.setBool(text[0] == 't')
		case (f.Type == cdc.TypeNumber || f.Type == cdc.TypeString) && (string(text) == "0" || string(text) == "1"):
			// Qlik sends every value as a string by default: "1" as well as 1.
			s.setBool(text[0] == '1')
		case f.Type == cdc.TypeString && strings.EqualFold(unsafeString(text), "true"):
			s.setBool(true)
		case f.Type == cdc.TypeString && strings.EqualFold(unsafeString(text), "false"):
			s.setBool(false)
		default:
			return errors.New("not a boolean (want true or false)")
		}
	case arrowschema.KindTimestamp:
		if f.Type != cdc.TypeString {
			return errors.New("timestamp must be an ISO 8601 string")
		}
		us, exact, err := cdc.ParseTimestampMicros(text)
		if err != nil {
			return err
		}
		if !exact {
			return errors.New("timestamp has sub-microsecond digits that the column cannot hold")
		}
		s.i64 = us
	case arrowschema.KindDate:
		if f.Type != cdc.TypeString {
			return errors.New("date must be a YYYY-MM-DD string")
		}
		d, err := parseDate(text)
		if err != nil {
			return err
		}
		s.i64 = d
	case arrowschema.KindBinary:
		if col.hex {
			if f.Type != cdc.TypeString {
				return errors.New("binary must be a string of hexadecimal digits")
			}
			buf := c.buffer(hex.DecodedLen(len(text)))
			n, err := hex.Decode(buf[:cap(buf)], text)
			if err != nil {
				return errors.New("binary is not an even number of hexadecimal digits")
			}
			c.keep(buf[:n])
			s.bytes = buf[:n]
			return nil
		}
		if f.Type != cdc.TypeString {
			return errors.New("binary must be a base64 string")
		}
		buf := c.buffer(base64.StdEncoding.DecodedLen(len(text)))
		n, err := base64.StdEncoding.Decode(buf[:cap(buf)], text)
		if err != nil {
			return errors.New("binary is not valid base64")
		}
		c.keep(buf[:n])
		s.bytes = buf[:n]
	}
	return nil
}

// buffer returns the arena's free end, empty with room for n bytes.
func (c *imageConverter) buffer(n int) []byte {
	a := *c.arena
	if cap(a)-len(a) < n {
		// The slots converted so far keep the old arena alive.
		a = make([]byte, 0, max(2*cap(a), n, 4096))
		*c.arena = a
	}
	return a[len(a):len(a):cap(a)]
}

// keep takes b, converted into buffer's memory (or into its own when it
// outgrew it), out of the arena's free end.
func (c *imageConverter) keep(b []byte) {
	a := *c.arena
	if free := a[len(a):cap(a)]; len(b) > 0 && len(free) > 0 && &b[0] == &free[0] {
		*c.arena = a[:len(a)+len(b)]
	}
}

func errNotNumber(f *cdc.Field) error {
	switch f.Type {
	case cdc.TypeBool:
		return errors.New("a boolean in a number column")
	case cdc.TypeObject, cdc.TypeArray:
		return errors.New("an object or array in a number column")
	}
	return errors.New("not a number")
}

func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// floatHoldsInteger reports whether text, the number v was parsed from,
// is not an integer literal, or is one that v holds exactly. Past 2^53 a
// float64 holds only some integers; a bare "number" column defaults to
// float64, so a large ID would otherwise be silently rounded.
func floatHoldsInteger(text []byte, v float64) bool {
	digits := text
	if len(digits) > 0 && (digits[0] == '-' || digits[0] == '+') {
		digits = digits[1:]
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return true // a fraction or an exponent: rounding is the type's nature
		}
	}
	digits = bytes.TrimLeft(digits, "0")
	return string(digits) == strconv.FormatFloat(math.Abs(v), 'f', 0, 64)
}

// parseFloat64 parses number text as strconv.ParseFloat does, to the same
// correctly rounded value. Plain decimals ("-125.50") of up to 19 digits
// whose digits fit a float64 exactly are divided by an exact power of ten
// here, one correctly rounded operation (Clinger's fast path, which
// strconv also takes, after a general-purpose scan that cost more than the
// arithmetic); anything else goes to strconv.
// Unlike strconv, it refuses a non-zero number that rounds to 0
// (errFloatUnderflow).
func parseFloat64(text []byte) (float64, error) {
	i, n := 0, len(text)
	neg := n > 0 && text[0] == '-'
	if neg {
		i = 1
	}
	var mant uint64
	start := i
	for ; i < n && text[i]-'0' <= 9; i++ {
		mant = mant*10 + uint64(text[i]-'0')
	}
	intDigits := i - start
	frac := 0
	if i < n && text[i] == '.' {
		i++
		for ; i < n && text[i]-'0' <= 9; i++ {
			mant = mant*10 + uint64(text[i]-'0')
			frac++
		}
	}
	if i == n && intDigits > 0 && (frac > 0 || text[n-1] != '.') && intDigits+frac <= 19 &&
		mant <= 1<<53 && frac < len(exactPow10) {
		v := float64(mant) / exactPow10[frac]
		if neg {
			v = -v
		}
		return v, nil
	}
	if !decimalNumber(text) && !specialFloat(text) {
		// strconv also takes hexadecimal and digit separators, which a
		// number sent as text does not mean.
		return 0, errors.New("not a decimal number")
	}
	v, err := strconv.ParseFloat(unsafeString(text), 64)
	if err == nil && v == 0 && nonZeroMantissa(text) {
		return 0, errFloatUnderflow
	}
	return v, err
}

// errFloatUnderflow is a non-zero number nearer to 0 than to the smallest
// float64 (1e-999): refused as a number past the largest (1e999) is,
// since both would store a value the source did not send (0, Inf). A
// number that rounds to a subnormal keeps its sign and magnitude roughly,
// as any rounding does, and is taken.
var errFloatUnderflow = fmt.Errorf("%w: below the smallest float64", strconv.ErrRange)

// nonZeroMantissa reports whether a decimal number's digits before its
// exponent are not all zero.
func nonZeroMantissa(text []byte) bool {
	for _, c := range text {
		switch {
		case c == 'e' || c == 'E':
			return false
		case c >= '1' && c <= '9':
			return true
		}
	}
	return false
}

// specialFloat reports whether text is NaN or a signed infinity, which a
// double column (Oracle BINARY_DOUBLE) may hold, in strconv's spelling.
func specialFloat(text []byte) bool {
	t := strings.ToLower(string(text))
	if t == "nan" {
		return true
	}
	if t != "" && (t[0] == '+' || t[0] == '-') {
		t = t[1:]
	}
	return t == "inf" || t == "infinity"
}

// decimalNumber reports whether text is a decimal number: an optional
// sign, digits with an optional point (at least one digit), an optional
// exponent.
func decimalNumber(text []byte) bool {
	i, n := 0, len(text)
	if i < n && (text[i] == '-' || text[i] == '+') {
		i++
	}
	digits := 0
	for ; i < n && text[i]-'0' <= 9; i++ {
		digits++
	}
	if i < n && text[i] == '.' {
		for i++; i < n && text[i]-'0' <= 9; i++ {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < n && (text[i] == 'e' || text[i] == 'E') {
		i++
		if i < n && (text[i] == '-' || text[i] == '+') {
			i++
		}
		exp := i
		for ; i < n && text[i]-'0' <= 9; i++ {
		}
		if i == exp {
			return false
		}
	}
	return i == n
}

// exactPow10 are the powers of ten a float64 holds exactly.
var exactPow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// checkNumericText refuses text that is not a decimal number, or one
// that does not fit the NUMERIC's precision and scale when they are known.
func checkNumericText(text []byte, r arrowschema.SourceRange) error {
	if !decimalNumber(text) {
		return fmt.Errorf("%q is not a decimal number", text)
	}
	if r.Precision <= 0 {
		return nil
	}
	var stack [128]byte
	buf := stack[:]
	if r.Precision >= len(buf) {
		buf = make([]byte, r.Precision+1)
	}
	if _, digits, err := scaledDigits(text, r.Scale, buf); err != nil || len(digits) > r.Precision {
		return fmt.Errorf("%q is outside NUMERIC(%d,%d)", text, r.Precision, r.Scale)
	}
	return nil
}

// parseInt64 parses integer text exactly. "12.0" and "1.2e1" are accepted
// because they are integers; "12.5" and values past int64 are not.
func parseInt64(text []byte) (int64, error) {
	// Plain integers of up to 18 digits cannot overflow: parsed here,
	// without strconv's generality (it was 3% of a run).
	if n := len(text); n > 0 && n <= 18 {
		i, neg := 0, text[0] == '-'
		if neg {
			i = 1
		}
		var v int64
		for ; i < n && text[i]-'0' <= 9; i++ {
			v = v*10 + int64(text[i]-'0')
		}
		if i == n && n > int(b2i(neg)) {
			if neg {
				v = -v
			}
			return v, nil
		}
	}
	if v, err := strconv.ParseInt(unsafeString(text), 10, 64); err == nil {
		return v, nil
	}
	d, err := parseDecimal(text, arrowschema.MaxDecimalPrecision, 0)
	if err != nil {
		if errors.Is(err, errScale) {
			return 0, errors.New("not an integer")
		}
		if errors.Is(err, errPrecision) {
			return 0, errors.New("integer is out of int64 range")
		}
		return 0, err
	}
	if d.HighBits() != 0 && d.HighBits() != -1 || (d.HighBits() == 0) != (int64(d.LowBits()) >= 0) {
		return 0, errors.New("integer is out of int64 range")
	}
	return int64(d.LowBits()), nil
}

var (
	errScale     = errors.New("has more fractional digits than the column's scale")
	errPrecision = errors.New("has more digits than the column's precision")
	errNumber    = errors.New("not a number")
)

// parseDecimal parses a JSON number (or numeric string) into a decimal with
// the given precision and scale, exactly: no float round trip, no rounding.
func parseDecimal(text []byte, precision, scale int32) (decimal128.Num, error) {
	var buf [80]byte
	neg, digits, err := scaledDigits(text, int(scale), buf[:])
	if err != nil {
		return decimal128.Num{}, err
	}
	if len(digits) > int(precision) {
		return decimal128.Num{}, errPrecision
	}
	if len(digits) <= 18 {
		var v int64
		for _, d := range digits {
			v = v*10 + int64(d-'0')
		}
		if neg {
			v = -v
		}
		return decimal128.FromI64(v), nil
	}
	var b big.Int
	b.SetString(string(digits), 10)
	if neg {
		b.Neg(&b)
	}
	return decimal128.FromBigInt(&b), nil
}

// scaledDigits returns the digits of decimal text's value counted in
// units of 10^-scale (no leading zeros, none for zero), written into buf.
// It refuses text that is not a decimal number (errNumber), digits past
// the scale (errScale) and more digits than buf holds (errPrecision).
func scaledDigits(text []byte, scale int, buf []byte) (neg bool, digits []byte, err error) {
	i := 0
	if i < len(text) && (text[i] == '-' || text[i] == '+') {
		neg = text[i] == '-'
		i++
	}
	nd := 0
	fracDigits := 0
	sawDigit, sawDot := false, false
	for ; i < len(text); i++ {
		ch := text[i]
		switch {
		case ch >= '0' && ch <= '9':
			sawDigit = true
			if nd == 0 && ch == '0' {
				// leading zeros carry no precision
			} else {
				if nd == len(buf) {
					return false, nil, errPrecision
				}
				buf[nd] = ch
				nd++
			}
			if sawDot {
				fracDigits++
			}
		case ch == '.' && !sawDot:
			sawDot = true
		default:
			goto exponent
		}
	}
exponent:
	if !sawDigit {
		return false, nil, errNumber
	}
	exp := 0
	if i < len(text) {
		if text[i] != 'e' && text[i] != 'E' {
			return false, nil, errNumber
		}
		e, err := strconv.Atoi(unsafeString(text[i+1:]))
		if err != nil || e > 1000 || e < -1000 {
			return false, nil, errNumber
		}
		exp = e
	}
	// value = digits × 10^(exp - fracDigits); we need digits × 10^scale.
	shift := scale + exp - fracDigits
	if shift < 0 {
		drop := -shift
		if drop > nd {
			drop = nd
			// every digit is fractional beyond the scale
		}
		for _, d := range buf[nd-drop : nd] {
			if d != '0' {
				return false, nil, errScale
			}
		}
		nd -= drop
	} else if nd > 0 {
		if nd+shift > len(buf) {
			return false, nil, errPrecision
		}
		for k := 0; k < shift; k++ {
			buf[nd] = '0'
			nd++
		}
	}
	return neg, buf[:nd], nil
}

// parseDate accepts YYYY-MM-DD, or a timestamp at exactly midnight.
func parseDate(text []byte) (int64, error) {
	if len(text) == 10 {
		t, err := time.Parse("2006-01-02", unsafeString(text))
		if err != nil {
			return 0, errors.New("not a YYYY-MM-DD date")
		}
		return floorDiv(t.Unix(), 86400), nil
	}
	t, err := cdc.ParseTimestamp(text)
	if err != nil {
		return 0, errors.New("not a YYYY-MM-DD date")
	}
	if t.Hour() != 0 || t.Minute() != 0 || t.Second() != 0 || t.Nanosecond() != 0 {
		return 0, errors.New("date has a time of day that the column cannot hold")
	}
	return floorDiv(t.Unix(), 86400), nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

func b2i(b bool) int16 {
	if b {
		return 1
	}
	return 0
}
