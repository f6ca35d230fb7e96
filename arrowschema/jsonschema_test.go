package arrowschema

import (
	"testing"

	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
)

func mustParseJSONSchema(t *testing.T, id, doc string) *JSONSchemaInfo {
	t.Helper()
	info, err := ParseJSONSchema(id, []byte(doc))
	if err != nil {
		t.Fatalf("ParseJSONSchema(%q): %v", id, err)
	}
	return info
}

func wantColumn(t *testing.T, info *JSONSchemaInfo, name string, kind Kind, nullable *bool) {
	t.Helper()
	c, ok := info.Columns[name]
	if !ok {
		t.Fatalf("column %s not found; have %v", name, keys(info.Columns))
	}
	if c.Type == nil {
		t.Fatalf("column %s: no type, want %v", name, Type{Kind: kind})
	}
	if c.Type.Kind != kind {
		t.Errorf("column %s: type %v, want kind %v", name, *c.Type, Type{Kind: kind})
	}
	switch {
	case nullable == nil && c.Nullable != nil:
		t.Errorf("column %s: nullable %v, want unknown", name, *c.Nullable)
	case nullable != nil && c.Nullable == nil:
		t.Errorf("column %s: nullable unknown, want %v", name, *nullable)
	case nullable != nil && *c.Nullable != *nullable:
		t.Errorf("column %s: nullable %v, want %v", name, *c.Nullable, *nullable)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

var (
	yes = func() *bool { b := true; return &b }()
	no  = func() *bool { b := false; return &b }()
)

// A table schema in the shape GoldenGate Data Streams sends: column
// definitions in "definitions", the after image a $ref to them, the before
// image "object or null".
const ordersSchema = `{
  "$schema": "http://json-schema.org/draft-04/schema#",
  "id": "SALES.ORDERS",
  "title": "SALES.ORDERS",
  "type": "object",
  "definitions": {
    "row": {
      "type": "object",
      "properties": {
        "ORDER_ID":     {"type": "integer"},
        "STATUS":       {"type": ["string", "null"]},
        "TOTAL_AMOUNT": {"type": ["number", "null"]},
        "CREATED_AT":   {"type": "string", "format": "date-time"},
        "SHIP_DATE":    {"oneOf": [{"type": "null"}, {"type": "string", "format": "date"}]},
        "IS_RUSH":      {"type": "boolean"},
        "PAYLOAD":      {"type": "string", "contentEncoding": "base64"},
        "NOTE":         {"$ref": "#/definitions/nullableString"}
      }
    },
    "nullableString": {"anyOf": [{"type": "string"}, {"type": "null"}]}
  },
  "properties": {
    "qual_table": {"type": "string", "const": "SALES.ORDERS"},
    "op_type": {"type": "string"},
    "after": {"$ref": "#/definitions/row"},
    "before": {"oneOf": [{"type": "null"}, {"$ref": "#/definitions/row"}]}
  }
}`

func TestParseJSONSchemaDefinitionsAndRef(t *testing.T) {
	info := mustParseJSONSchema(t, "SALES.ORDERS", ordersSchema)
	if info.ID != "SALES.ORDERS" || info.Title != "SALES.ORDERS" {
		t.Errorf("id %q title %q", info.ID, info.Title)
	}
	if len(info.Tables) != 1 || info.Tables[0] != "SALES.ORDERS" {
		t.Errorf("tables %v, want [SALES.ORDERS]", info.Tables)
	}
	if len(info.Columns) != 8 {
		t.Errorf("%d columns, want 8: %v", len(info.Columns), keys(info.Columns))
	}
	wantColumn(t, info, "ORDER_ID", KindInt64, no)
	wantColumn(t, info, "STATUS", KindString, yes)
	wantColumn(t, info, "TOTAL_AMOUNT", KindFloat64, yes)
	wantColumn(t, info, "CREATED_AT", KindTimestamp, no)
	wantColumn(t, info, "SHIP_DATE", KindDate, yes)
	wantColumn(t, info, "IS_RUSH", KindBoolean, no)
	wantColumn(t, info, "PAYLOAD", KindBinary, no)
	wantColumn(t, info, "NOTE", KindString, yes)
}

func TestParseJSONSchemaInlineAfter(t *testing.T) {
	info := mustParseJSONSchema(t, "x", `{
	  "id": "x", "type": "object",
	  "properties": {
	    "after": {"type": "object", "properties": {
	      "A": {"type": "integer"},
	      "B": {"type": "number"},
	      "C": {"type": ["null", "string"], "format": "date-time"}
	    }}
	  }}`)
	wantColumn(t, info, "A", KindInt64, no)
	wantColumn(t, info, "B", KindFloat64, no)
	wantColumn(t, info, "C", KindTimestamp, yes)
}

func TestParseJSONSchemaBeforeOnly(t *testing.T) {
	// A delete-only schema: the columns are only under before.
	info := mustParseJSONSchema(t, "x", `{
	  "id": "x", "type": "object",
	  "properties": {
	    "before": {"anyOf": [{"type": "object", "properties": {"K": {"type": "integer"}}}, {"type": "null"}]}
	  }}`)
	wantColumn(t, info, "K", KindInt64, no)
}

func TestParseJSONSchemaAfterWinsOverBefore(t *testing.T) {
	info := mustParseJSONSchema(t, "x", `{
	  "id": "x", "type": "object",
	  "properties": {
	    "after":  {"type": "object", "properties": {"K": {"type": "integer"}}},
	    "before": {"type": "object", "properties": {"K": {"type": "string"}, "L": {"type": "boolean"}}}
	  }}`)
	wantColumn(t, info, "K", KindInt64, no)
	wantColumn(t, info, "L", KindBoolean, no)
}

func TestParseJSONSchemaOneOfAnyOfNull(t *testing.T) {
	info := mustParseJSONSchema(t, "x", `{
	  "id": "x", "type": "object",
	  "definitions": {"int": {"type": "integer"}},
	  "properties": {
	    "after": {"oneOf": [{"type": "null"}, {"type": "object", "properties": {
	      "A": {"oneOf": [{"type": "null"}, {"type": "integer"}]},
	      "B": {"anyOf": [{"type": "number"}, {"type": "null"}]},
	      "C": {"oneOf": [{"$ref": "#/definitions/int"}, {"type": "null"}]},
	      "D": {"anyOf": [{"type": "string", "format": "date"}]}
	    }}]}
	  }}`)
	wantColumn(t, info, "A", KindInt64, yes)
	wantColumn(t, info, "B", KindFloat64, yes)
	wantColumn(t, info, "C", KindInt64, yes)
	wantColumn(t, info, "D", KindDate, no)
}

func TestParseJSONSchemaUnknownTypes(t *testing.T) {
	info := mustParseJSONSchema(t, "x", `{
	  "id": "x", "type": "object",
	  "properties": {"after": {"type": "object", "properties": {
	    "MIXED":  {"type": ["number", "string"]},
	    "ANY":    {},
	    "ONLYNULL": {"type": "null"}
	  }}}}`)
	for _, name := range []string{"MIXED", "ANY", "ONLYNULL"} {
		c, ok := info.Columns[name]
		if !ok {
			t.Fatalf("column %s missing", name)
		}
		if c.Type != nil {
			t.Errorf("column %s: type %v, want none (the schema does not pin one)", name, *c.Type)
		}
	}
	if c := info.Columns["ANY"]; c.Nullable != nil {
		t.Errorf("ANY: nullability %v, want unknown", *c.Nullable)
	}
	if c := info.Columns["MIXED"]; c.Nullable == nil || *c.Nullable {
		t.Errorf("MIXED: nullability %v, want known not-null", c.Nullable)
	}
	if c := info.Columns["ONLYNULL"]; c.Nullable == nil || !*c.Nullable {
		t.Errorf("ONLYNULL: want nullable")
	}
}

func TestParseJSONSchemaMultipleOfIsDecimal(t *testing.T) {
	info := mustParseJSONSchema(t, "x", `{
	  "id": "x", "type": "object",
	  "properties": {"after": {"type": "object", "properties": {
	    "AMOUNT": {"type": "number", "multipleOf": 0.01},
	    "RATIO":  {"type": "number", "multipleOf": 0.3}
	  }}}}`)
	a := info.Columns["AMOUNT"]
	if a.Type == nil || a.Type.Kind != KindDecimal || a.Type.Scale != 2 || a.Type.Precision != MaxDecimalPrecision {
		t.Errorf("AMOUNT: %v, want decimal(38,2)", a.Type)
	}
	r := info.Columns["RATIO"]
	if r.Type == nil || r.Type.Kind != KindFloat64 {
		t.Errorf("RATIO: %v, want float64", r.Type)
	}
}

func TestParseJSONSchemaWithoutImages(t *testing.T) {
	// The schema of OBJECT_METADATA records describes no row image.
	info := mustParseJSONSchema(t, "ObjectMetadata", `{
	  "$schema": "http://json-schema.org/draft-04/schema#",
	  "id": "ObjectMetadata", "title": "Object metadata", "type": "object",
	  "properties": {
	    "op_type": {"type": "string", "enum": ["OBJECT_METADATA"]},
	    "qual_table": {"type": "string"},
	    "columns": {"type": "object", "additionalProperties": {"type": "object", "properties": {
	      "type": {"type": "string"}, "null": {"type": "boolean"}, "key": {"type": "boolean"}}}}
	  }}`)
	if len(info.Columns) != 0 {
		t.Errorf("columns %v, want none", keys(info.Columns))
	}
	if info.MatchesTable("SALES.ORDERS") {
		t.Error("a schema without a table matched SALES.ORDERS")
	}
}

func TestParseJSONSchemaErrors(t *testing.T) {
	for _, doc := range []string{`{`, `[1,2]`, `"x"`, ``} {
		if _, err := ParseJSONSchema("bad", []byte(doc)); err == nil {
			t.Errorf("ParseJSONSchema(%q) accepted", doc)
		}
	}
}

func TestParseJSONSchemaSelfReferenceTerminates(t *testing.T) {
	// Alternatives that refer back to themselves must not recurse forever.
	info := mustParseJSONSchema(t, "x", `{
	  "id": "x", "type": "object",
	  "definitions": {
	    "row": {"oneOf": [{"$ref": "#/definitions/row"}, {"$ref": "#/definitions/row"}, {"$ref": "#/definitions/row"},
	                      {"type": "object", "properties": {"A": {"$ref": "#/definitions/col"}}}]},
	    "col": {"anyOf": [{"$ref": "#/definitions/col"}, {"$ref": "#/definitions/col"}, {"$ref": "#/definitions/col"}, {"type": "integer"}]}
	  },
	  "properties": {"after": {"$ref": "#/definitions/row"}}}`)
	c, ok := info.Columns["A"]
	if !ok {
		t.Fatalf("column A missing: %v", keys(info.Columns))
	}
	// col is integer or more of itself; the integer alternative is seen.
	if c.Type == nil || c.Type.Kind != KindInt64 {
		t.Errorf("A: %v, want int64", c.Type)
	}
}

func TestParseJSONSchemaTablesEnum(t *testing.T) {
	info := mustParseJSONSchema(t, "multi", `{
	  "id": "multi", "type": "object",
	  "definitions": {"qt": {"type": "string", "enum": ["HR.EMP", "HR.DEPT", 7]}},
	  "properties": {"qual_table": {"$ref": "#/definitions/qt"},
	    "after": {"type": "object", "properties": {"X": {"type": "string"}}}}}`)
	if len(info.Tables) != 2 || info.Tables[0] != "HR.EMP" || info.Tables[1] != "HR.DEPT" {
		t.Errorf("tables %v, want [HR.EMP HR.DEPT]", info.Tables)
	}
}

func TestMatchesTable(t *testing.T) {
	cases := []struct {
		name  string
		info  JSONSchemaInfo
		table string
		want  bool
	}{
		{"id equal", JSONSchemaInfo{ID: "SALES.ORDERS"}, "SALES.ORDERS", true},
		{"id differs", JSONSchemaInfo{ID: "SALES.ORDERS"}, "SALES.ITEMS", false},
		{"title", JSONSchemaInfo{ID: "42", Title: "SALES.ORDERS"}, "SALES.ORDERS", true},
		{"title differs", JSONSchemaInfo{ID: "42", Title: "SALES.ORDER"}, "SALES.ORDERS", false},
		{"id suffix after /", JSONSchemaInfo{ID: "https://example.com/schemas/SALES.ORDERS"}, "SALES.ORDERS", true},
		{"id suffix after #", JSONSchemaInfo{ID: "dml#SALES.ORDERS"}, "SALES.ORDERS", true},
		{"id suffix after :", JSONSchemaInfo{ID: "urn:gg:SALES.ORDERS"}, "SALES.ORDERS", true},
		{"id suffix after .", JSONSchemaInfo{ID: "CDB1.SALES.ORDERS"}, "SALES.ORDERS", true},
		{"id suffix glued", JSONSchemaInfo{ID: "XSALES.ORDERS"}, "SALES.ORDERS", false},
		{"id suffix glued _", JSONSchemaInfo{ID: "OLD_SALES.ORDERS"}, "SALES.ORDERS", false},
		{"id longer table", JSONSchemaInfo{ID: "SALES.ORDERS_HIST"}, "SALES.ORDERS", false},
		{"id is prefix", JSONSchemaInfo{ID: "SALES.ORDERS/v2"}, "SALES.ORDERS", false},
		{"const", JSONSchemaInfo{ID: "row-schema-7", Tables: []string{"SALES.ORDERS"}}, "SALES.ORDERS", true},
		{"enum second", JSONSchemaInfo{ID: "row-schema-7", Tables: []string{"A.B", "SALES.ORDERS"}}, "SALES.ORDERS", true},
		{"enum other", JSONSchemaInfo{ID: "row-schema-7", Tables: []string{"A.B"}}, "SALES.ORDERS", false},
	}
	for _, c := range cases {
		if got := c.info.MatchesTable(c.table); got != c.want {
			t.Errorf("%s: MatchesTable(%q) = %v, want %v", c.name, c.table, got, c.want)
		}
	}
}

func TestMatchesTableFromParsedConst(t *testing.T) {
	info := mustParseJSONSchema(t, "opaque-17", ordersSchema)
	if !info.MatchesTable("SALES.ORDERS") {
		t.Error("schema with qual_table const did not match its table")
	}
	if info.MatchesTable("SALES.ITEMS") {
		t.Error("schema matched another table")
	}
}

// With GoldenGate's images and qual_table configured to other names, the
// schema record describes them under those names, and the catalog reads
// its types from there.
func TestJSONSchemaUnderConfiguredNames(t *testing.T) {
	doc := []byte(`{"id":"x","type":"object","properties":{
	  "tbl": {"type":"string","const":"S.T"},
	  "new_image": {"type":"object","properties":{"A":{"type":"integer"}}},
	  "old_image": {"type":"object","properties":{"B":{"type":"string","format":"date"}}},
	  "after": {"type":"object","properties":{"A":{"type":"string"}}}
	}}`)
	info, err := SchemaFields{After: "new_image", Before: "old_image", QualTable: "tbl"}.Parse("x", doc)
	if err != nil {
		t.Fatal(err)
	}
	wantColumn(t, info, "A", KindInt64, no)
	wantColumn(t, info, "B", KindDate, no)
	if len(info.Tables) != 1 || info.Tables[0] != "S.T" {
		t.Errorf("tables %v, want [S.T]", info.Tables)
	}

	c := NewCatalog(Options{SchemaFields: SchemaFields{After: "new_image", Before: "old_image", QualTable: "tbl"}})
	if _, err := c.ApplySchemaRecord("x", doc); err != nil {
		t.Fatal(err)
	}
	v := mustMetadata(t, c, cdc.TableMetadata{Table: "S.T", Columns: []cdc.Column{{Name: "A", Type: "number"}, {Name: "B", Type: "string"}}}, "p1").Version
	checkColumns(t, v, []colWant{{"A", tInt, false}, {"B", Type{Kind: KindDate}, false}})
}
