// Package arrowschema turns table metadata into Arrow schemas: the type
// mapping and its refinements (config hints, JSON Schema records, DDL
// types), and the schema versions of each table.
package arrowschema

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Kind is a column's logical type in the lake. Every kind maps to a type
// that Spark and DuckDB both read natively.
type Kind uint8

const (
	KindString Kind = iota + 1
	KindInt64
	KindFloat64
	KindDecimal
	KindBoolean
	KindTimestamp // microseconds, UTC
	KindDate
	KindBinary
)

// Type is a column type: a Kind plus precision and scale for decimals.
type Type struct {
	Kind      Kind
	Precision int32
	Scale     int32
}

// MaxDecimalPrecision is the widest decimal the lake stores (Decimal128).
const MaxDecimalPrecision = 38

func (t Type) String() string {
	switch t.Kind {
	case KindString:
		return "string"
	case KindInt64:
		return "int64"
	case KindFloat64:
		return "float64"
	case KindDecimal:
		return fmt.Sprintf("decimal(%d,%d)", t.Precision, t.Scale)
	case KindBoolean:
		return "boolean"
	case KindTimestamp:
		return "timestamp"
	case KindDate:
		return "date"
	case KindBinary:
		return "binary"
	}
	return "invalid"
}

// TimestampType is the Arrow type of every timestamp the exporter writes.
var TimestampType = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}

// Arrow returns the Arrow data type for t.
func (t Type) Arrow() arrow.DataType {
	switch t.Kind {
	case KindString:
		return arrow.BinaryTypes.String
	case KindInt64:
		return arrow.PrimitiveTypes.Int64
	case KindFloat64:
		return arrow.PrimitiveTypes.Float64
	case KindDecimal:
		return &arrow.Decimal128Type{Precision: t.Precision, Scale: t.Scale}
	case KindBoolean:
		return arrow.FixedWidthTypes.Boolean
	case KindTimestamp:
		return TimestampType
	case KindDate:
		return arrow.FixedWidthTypes.Date32
	case KindBinary:
		return arrow.BinaryTypes.Binary
	}
	panic("arrowschema: invalid type kind " + strconv.Itoa(int(t.Kind)))
}

// ParseType parses a type hint: int64, float64, decimal(p,s), timestamp,
// date, string, binary or boolean (case-insensitive; a few common synonyms
// such as bigint, double and varchar are accepted).
func ParseType(s string) (Type, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	switch v {
	case "string", "varchar", "text", "utf8":
		return Type{Kind: KindString}, nil
	case "int64", "bigint", "long", "integer", "int":
		return Type{Kind: KindInt64}, nil
	case "float64", "double", "float":
		return Type{Kind: KindFloat64}, nil
	case "boolean", "bool":
		return Type{Kind: KindBoolean}, nil
	case "timestamp":
		return Type{Kind: KindTimestamp}, nil
	case "date":
		return Type{Kind: KindDate}, nil
	case "binary", "bytes":
		return Type{Kind: KindBinary}, nil
	}
	if rest, ok := strings.CutPrefix(v, "decimal("); ok {
		inner, ok := strings.CutSuffix(rest, ")")
		if !ok {
			return Type{}, fmt.Errorf("type %q: missing closing parenthesis", s)
		}
		ps := strings.Split(inner, ",")
		p, err := strconv.Atoi(strings.TrimSpace(ps[0]))
		if err != nil {
			return Type{}, fmt.Errorf("type %q: precision is not a number", s)
		}
		sc := 0
		if len(ps) == 2 {
			if sc, err = strconv.Atoi(strings.TrimSpace(ps[1])); err != nil {
				return Type{}, fmt.Errorf("type %q: scale is not a number", s)
			}
		} else if len(ps) > 2 {
			return Type{}, fmt.Errorf("type %q: want decimal(precision,scale)", s)
		}
		return Decimal(p, sc)
	}
	return Type{}, fmt.Errorf("unknown type %q (want int64, float64, decimal(p,s), timestamp, date, string, binary or boolean)", s)
}

// Decimal returns decimal(p,s) after checking that Decimal128 can hold it.
func Decimal(p, s int) (Type, error) {
	if p < 1 || p > MaxDecimalPrecision {
		return Type{}, fmt.Errorf("decimal precision %d is outside 1..%d", p, MaxDecimalPrecision)
	}
	if s < 0 || s > p {
		return Type{}, fmt.Errorf("decimal scale %d is outside 0..precision (%d)", s, p)
	}
	return Type{Kind: KindDecimal, Precision: int32(p), Scale: int32(s)}, nil
}

// defaultType maps the JSON primitive of OBJECT_METADATA to a column type
// when nothing more precise is known.
func defaultType(primitive string) Type {
	switch strings.ToLower(primitive) {
	case "number":
		return Type{Kind: KindFloat64}
	case "integer":
		return Type{Kind: KindInt64}
	case "boolean":
		return Type{Kind: KindBoolean}
	}
	return Type{Kind: KindString}
}
