package arrowschema

import (
	"fmt"
	"math"
	"strings"
)

// QlikTypeOf maps a Qlik Replicate data type, as rendered by the decoder
// (INT4, UINT8, NUMERIC(p,s), STRING(n), ...), onto the lake's types.
// Nothing loses precision: unsigned integers widen (UINT8 to
// decimal(20,0)), a NUMERIC wider than Decimal128 stays text, and TIME,
// which Spark cannot store, stays text, as does any type not listed.
func QlikTypeOf(native string) (Type, error) {
	name, args := splitType(strings.ToUpper(native))
	switch name {
	case "INT1", "INT2", "INT4", "INT8", "UINT1", "UINT2", "UINT4":
		return Type{Kind: KindInt64}, nil
	case "UINT8":
		return Type{Kind: KindDecimal, Precision: 20}, nil
	case "NUMERIC":
		var p, s int
		if len(args) == 2 {
			fmt.Sscan(args[0], &p)
			fmt.Sscan(args[1], &s)
		}
		if p < 1 || p > MaxDecimalPrecision || s < 0 || s > p {
			// Unknown or wider than Decimal128: keep the exact text.
			return Type{Kind: KindString}, nil
		}
		return Decimal(p, s)
	case "REAL4", "REAL8":
		return Type{Kind: KindFloat64}, nil
	case "STRING", "WSTRING", "CLOB", "NCLOB", "TIME":
		return Type{Kind: KindString}, nil
	case "BYTES", "BLOB":
		return Type{Kind: KindBinary}, nil
	case "DATE":
		return Type{Kind: KindDate}, nil
	case "DATETIME":
		return Type{Kind: KindTimestamp}, nil
	case "BOOLEAN":
		return Type{Kind: KindBoolean}, nil
	}
	// A type this exporter does not know yet: its text is always safe.
	return Type{Kind: KindString}, nil
}

// IntRange is the range of values of a source integer type narrower than
// the lake's column (Qlik's INT1-INT4 and UINT1-UINT8): a value outside
// it cannot have come from that column, so it is refused rather than
// stored. Max is ignored when MaxUint64 is set (UINT8, kept as
// decimal(20,0)).
type IntRange struct {
	Min, Max  int64
	MaxUint64 bool
}

// QlikRangeOf returns the range of a Qlik integer type, or nil for
// INT8 (the lake's own range) and every other type.
func QlikRangeOf(native string) *IntRange {
	name, _ := splitType(strings.ToUpper(native))
	switch name {
	case "INT1":
		return &IntRange{Min: math.MinInt8, Max: math.MaxInt8}
	case "INT2":
		return &IntRange{Min: math.MinInt16, Max: math.MaxInt16}
	case "INT4":
		return &IntRange{Min: math.MinInt32, Max: math.MaxInt32}
	case "UINT1":
		return &IntRange{Max: math.MaxUint8}
	case "UINT2":
		return &IntRange{Max: math.MaxUint16}
	case "UINT4":
		return &IntRange{Max: math.MaxUint32}
	case "UINT8":
		return &IntRange{MaxUint64: true}
	}
	return nil
}
