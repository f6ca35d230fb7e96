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
// decimal(20,0)), a NUMERIC wider than Decimal128 stays text, and TIME,
// which Spark cannot store, stays text, as does any type not listed.
func QlikTypeOf(native string) (Type, IntRange, error) {
	name, args := splitType(strings.ToUpper(native))
	integer := Type{Kind: KindInt64}
	switch name {
	case "INT1":
		return integer, IntRange{Min: math.MinInt8, Max: math.MaxInt8}, nil
	case "INT2":
		return integer, IntRange{Min: math.MinInt16, Max: math.MaxInt16}, nil
	case "INT4":
		return integer, IntRange{Min: math.MinInt32, Max: math.MaxInt32}, nil
	case "INT8":
		return integer, IntRange{}, nil
	case "UINT1":
		return integer, IntRange{Max: math.MaxUint8}, nil
	case "UINT2":
		return integer, IntRange{Max: math.MaxUint16}, nil
	case "UINT4":
		return integer, IntRange{Max: math.MaxUint32}, nil
	case "UINT8":
		return Type{Kind: KindDecimal, Precision: 20}, IntRange{MaxUint64: true}, nil
	case "NUMERIC":
		var p, s int
		if len(args) == 2 {
			fmt.Sscan(args[0], &p)
			fmt.Sscan(args[1], &s)
		}
		if p < 1 || p > MaxDecimalPrecision || s < 0 || s > p {
			// Unknown or wider than Decimal128: keep the exact text.
			return Type{Kind: KindString}, IntRange{}, nil
		}
		t, err := Decimal(p, s)
		return t, IntRange{}, err
	case "REAL4", "REAL8":
		return Type{Kind: KindFloat64}, IntRange{}, nil
	case "STRING", "WSTRING", "CLOB", "NCLOB", "TIME":
		return Type{Kind: KindString}, IntRange{}, nil
	case "BYTES", "BLOB":
		return Type{Kind: KindBinary}, IntRange{}, nil
	case "DATE":
		return Type{Kind: KindDate}, IntRange{}, nil
	case "DATETIME":
		return Type{Kind: KindTimestamp}, IntRange{}, nil
	case "BOOLEAN":
		return Type{Kind: KindBoolean}, IntRange{}, nil
	}
	// A type this exporter does not know yet: its text is always safe.
	return Type{Kind: KindString}, IntRange{}, nil
}

// IntRange is the range of values of a source integer type narrower than
// the lake's column (Qlik's INT1-INT4 and UINT1-UINT8): a value outside
// it cannot have come from that column, so it is refused rather than
// stored. The zero IntRange bounds nothing (no source type has the range
// 0 to 0). Max is ignored when MaxUint64 is set (UINT8, kept as
// decimal(20,0)).
type IntRange struct {
	Min, Max  int64
	MaxUint64 bool
}

// Bounded reports whether r bounds anything.
func (r IntRange) Bounded() bool { return r != IntRange{} }
