package arrowschema

import (
	"fmt"
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
