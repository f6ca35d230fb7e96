package arrowschema

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

func TestParseTypeHints(t *testing.T) {
	cases := []struct {
		in   string
		want Type
	}{
		{"int64", Type{Kind: KindInt64}},
		{"float64", Type{Kind: KindFloat64}},
		{"timestamp", Type{Kind: KindTimestamp}},
		{"date", Type{Kind: KindDate}},
		{"string", Type{Kind: KindString}},
		{"binary", Type{Kind: KindBinary}},
		{"boolean", Type{Kind: KindBoolean}},
		{"decimal(12,2)", Type{Kind: KindDecimal, Precision: 12, Scale: 2}},
		{"decimal(38,0)", Type{Kind: KindDecimal, Precision: 38, Scale: 0}},
		{"decimal(1,1)", Type{Kind: KindDecimal, Precision: 1, Scale: 1}},
		{"decimal(10)", Type{Kind: KindDecimal, Precision: 10, Scale: 0}},
		{"decimal( 12 , 2 )", Type{Kind: KindDecimal, Precision: 12, Scale: 2}},
		// case-insensitive, surrounding space ignored
		{"  INT64 ", Type{Kind: KindInt64}},
		{"Decimal(5,3)", Type{Kind: KindDecimal, Precision: 5, Scale: 3}},
		{"TIMESTAMP", Type{Kind: KindTimestamp}},
		// synonyms
		{"bigint", Type{Kind: KindInt64}},
		{"double", Type{Kind: KindFloat64}},
		{"varchar", Type{Kind: KindString}},
		{"bool", Type{Kind: KindBoolean}},
	}
	for _, c := range cases {
		got, err := ParseType(c.in)
		if err != nil {
			t.Errorf("ParseType(%q): %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("ParseType(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

func TestParseTypeRejects(t *testing.T) {
	for _, in := range []string{
		"",
		"uint64", // no unsigned types in the lake
		"int32",  // not a hint the design offers
		"timestamp_ns",
		"decimal(0,0)",  // precision below 1
		"decimal(39,0)", // wider than Decimal128
		"decimal(5,6)",  // scale > precision
		"decimal(10,-1)",
		"decimal(12,2",
		"decimal(a,2)",
		"decimal(12,b)",
		"decimal(1,2,3)",
		"decimal()",
	} {
		if got, err := ParseType(in); err == nil {
			t.Errorf("ParseType(%q) = %v, want an error", in, got)
		}
	}
}

func TestDecimalBounds(t *testing.T) {
	if _, err := Decimal(38, 38); err != nil {
		t.Errorf("Decimal(38,38): %v", err)
	}
	if _, err := Decimal(1, 0); err != nil {
		t.Errorf("Decimal(1,0): %v", err)
	}
	for _, ps := range [][2]int{{0, 0}, {39, 0}, {-1, 0}, {10, 11}, {10, -1}} {
		if _, err := Decimal(ps[0], ps[1]); err == nil {
			t.Errorf("Decimal(%d,%d) accepted", ps[0], ps[1])
		}
	}
	_, err := ParseType("decimal(39,2)")
	if err == nil || !strings.Contains(err.Error(), "39") {
		t.Errorf("decimal(39,2) error %v should name the precision", err)
	}
}

func TestTypeString(t *testing.T) {
	for _, c := range []struct {
		t    Type
		want string
	}{
		{Type{Kind: KindDecimal, Precision: 12, Scale: 2}, "decimal(12,2)"},
		{Type{Kind: KindInt64}, "int64"},
		{Type{Kind: KindTimestamp}, "timestamp"},
		{Type{}, "invalid"},
	} {
		if got := c.t.String(); got != c.want {
			t.Errorf("%+v.String() = %q, want %q", c.t, got, c.want)
		}
	}
	// Every hint round-trips through String.
	for _, s := range []string{"string", "int64", "float64", "decimal(20,4)", "boolean", "timestamp", "date", "binary"} {
		typ, err := ParseType(s)
		if err != nil {
			t.Fatal(err)
		}
		if typ.String() != s {
			t.Errorf("ParseType(%q).String() = %q", s, typ.String())
		}
	}
}

func TestTypeArrow(t *testing.T) {
	cases := []struct {
		t    Type
		want arrow.DataType
	}{
		{Type{Kind: KindString}, arrow.BinaryTypes.String},
		{Type{Kind: KindInt64}, arrow.PrimitiveTypes.Int64},
		{Type{Kind: KindFloat64}, arrow.PrimitiveTypes.Float64},
		{Type{Kind: KindDecimal, Precision: 12, Scale: 2}, &arrow.Decimal128Type{Precision: 12, Scale: 2}},
		{Type{Kind: KindBoolean}, arrow.FixedWidthTypes.Boolean},
		{Type{Kind: KindTimestamp}, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
		{Type{Kind: KindDate}, arrow.FixedWidthTypes.Date32},
		{Type{Kind: KindBinary}, arrow.BinaryTypes.Binary},
	}
	for _, c := range cases {
		got := c.t.Arrow()
		if !arrow.TypeEqual(got, c.want) {
			t.Errorf("%v.Arrow() = %v, want %v", c.t, got, c.want)
		}
	}
}

func TestArrowTypesAreLakeFriendly(t *testing.T) {
	for k := KindString; k <= KindBinary; k++ {
		typ := Type{Kind: k}
		if k == KindDecimal {
			typ.Precision, typ.Scale = 10, 2
		}
		dt := typ.Arrow()
		switch dt.ID() {
		case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
			t.Errorf("%v maps to unsigned %v", typ, dt)
		case arrow.TIMESTAMP:
			ts := dt.(*arrow.TimestampType)
			if ts.Unit != arrow.Microsecond {
				t.Errorf("timestamp unit %v, want microseconds (no nanoseconds)", ts.Unit)
			}
			if ts.TimeZone != "UTC" {
				t.Errorf("timestamp zone %q, want UTC", ts.TimeZone)
			}
		case arrow.DECIMAL128:
		case arrow.DECIMAL256:
			t.Errorf("%v maps to Decimal256", typ)
		}
	}
	if TimestampType.Unit != arrow.Microsecond || TimestampType.TimeZone != "UTC" {
		t.Errorf("TimestampType = %v", TimestampType)
	}
}

func TestArrowPanicsOnInvalidKind(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Type{}.Arrow() did not panic")
		}
	}()
	_ = Type{}.Arrow()
}

func TestDefaultType(t *testing.T) {
	cases := map[string]Kind{
		"number":  KindFloat64, // the design's default for a bare number
		"NUMBER":  KindFloat64,
		"integer": KindInt64,
		"boolean": KindBoolean,
		"string":  KindString,
		"":        KindString,
		"weird":   KindString,
	}
	for in, want := range cases {
		if got := defaultType(in); got.Kind != want {
			t.Errorf("defaultType(%q) = %v, want kind %v", in, got, Type{Kind: want})
		}
	}
}
