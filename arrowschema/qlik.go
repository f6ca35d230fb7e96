package arrowschema

import (
	"fmt"
	"math"
	"strings"
)

// QlikTypeOf maps a Qlik Replicate data type, as rendered by the decoder
// (INT4, UINT8, NUMERIC(p,s), STRING(n), ...), onto the lake's types, and
// gives the range of an integer type narrower than the lake's column.
// Nothing loses precision: unsigned integers widen (UINT8 to
// decimal(20,0)), a NUMERIC wider than Decimal128 stays text, as do a
// DATETIME with more fractional digits than a microsecond and TIME, which
// Spark cannot store, and any type not listed.
func QlikTypeOf(native string) (Type, SourceRange, error) {
	name, args := splitType(strings.ToUpper(native))
	integer := Type{Kind: KindInt64}
	switch name {
	case "INT1":
		return integer, SourceRange{Min: math.MinInt8, Max: math.MaxInt8}, nil
	case "INT2":
		return integer, SourceRange{Min: math.MinInt16, Max: math.MaxInt16}, nil
	case "INT4":
		return integer, SourceRange{Min: math.MinInt32, Max: math.MaxInt32}, nil
	case "INT8":
		return integer, SourceRange{}, nil
	case "UINT1":
		return integer, SourceRange{Max: math.MaxUint8}, nil
	case "UINT2":
		return integer, SourceRange{Max: math.MaxUint16}, nil
	case "UINT4":
		return integer, SourceRange{Max: math.MaxUint32}, nil
	case "UINT8":
		return Type{Kind: KindDecimal, Precision: 20}, SourceRange{MaxUint64: true}, nil
	case "NUMERIC":
		var p, s int
		if len(args) == 2 {
			fmt.Sscan(args[0], &p)
			fmt.Sscan(args[1], &s)
		}
		if p < 1 || p > MaxDecimalPrecision || s < 0 || s > p {
			// Unknown, wider than Decimal128 or a scale it cannot hold:
			// keep the exact text, checked as a number.
			r := SourceRange{NumericText: true}
			if len(args) == 2 && p >= 1 && p <= maxCheckedPrecision && s >= -maxCheckedPrecision {
				r.Precision, r.Scale = p, s
			}
			return Type{Kind: KindString}, r, nil
		}
		t, err := Decimal(p, s)
		return t, SourceRange{}, err
	case "REAL4", "REAL8":
		return Type{Kind: KindFloat64}, SourceRange{}, nil
	case "STRING", "WSTRING", "CLOB", "NCLOB", "TIME":
		return Type{Kind: KindString}, SourceRange{}, nil
	case "BYTES", "BLOB":
		// Qlik's JSON messages carry binary values as hexadecimal digits.
		return Type{Kind: KindBinary}, SourceRange{Hex: true}, nil
	case "DATE":
		return Type{Kind: KindDate}, SourceRange{}, nil
	case "DATETIME":
		if finerThanMicros(native) {
			// Timestamps here are microseconds: a datetime2(7) value
			// would be refused, so the column keeps the exact text.
			return Type{Kind: KindString}, SourceRange{}, nil
		}
		return Type{Kind: KindTimestamp}, SourceRange{}, nil
	case "BOOLEAN":
		return Type{Kind: KindBoolean}, SourceRange{}, nil
	}
	// A type this exporter does not know yet: its text is always safe.
	return Type{Kind: KindString}, SourceRange{}, nil
}

// maxCheckedPrecision is the widest NUMERIC whose values are checked
// against its precision and scale, the widest a database declares
// (PostgreSQL's 1000 digits): checking takes a buffer of the precision,
// and metadata that claims more is not a number's description but a
// mistake, whose values are still held to be decimal numbers.
const maxCheckedPrecision = 1000

// SourceRange is what values a source type can hold beyond what its lake
// type says, so that a value it could not have held is refused rather
// than stored. For a source integer type narrower than the lake's column
// (Qlik's INT1-INT4 and UINT1-UINT8) it is Min to Max; Max is ignored when
// MaxUint64 is set (UINT8, kept as decimal(20,0)). For a NUMERIC kept as
// text (NumericText) the values must be decimal numbers, and of at most
// Precision digits, Scale of them after the point (negative: that many
// zeros before it), when Precision is known (> 0). The zero SourceRange
// bounds nothing (no source type has the range 0 to 0).
//
// Hex says how the source writes a binary column's values: hexadecimal
// digits (Qlik's JSON) rather than base64.
type SourceRange struct {
	Min, Max         int64
	MaxUint64        bool
	NumericText      bool
	Precision, Scale int
	Hex              bool
}

// Bounded reports whether r bounds anything.
func (r SourceRange) Bounded() bool {
	r.Hex = false
	return r != SourceRange{}
}
