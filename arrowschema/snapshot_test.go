package arrowschema

import (
	"encoding/json"
	"testing"

	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
)

// restoreViaJSON restores c from its snapshot as a checkpoint carries it.
func restoreViaJSON(t *testing.T, c *Catalog, opts Options) *Catalog {
	t.Helper()
	b, err := json.Marshal(c.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	var s Snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	r, err := RestoreCatalog(opts, s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A schema record that comes between a DDL and its refresh does not
// retype the provisional version, under which DML may already be written;
// restored from a checkpoint in that window, the version keeps the types
// it was built with instead of taking the record's, so the refresh then
// does in the restored catalog what it does in the uninterrupted one
// (found by review: it completed the version there, which then held files
// of both types).
func TestRestoreKeepsAProvisionalVersionsTypes(t *testing.T) {
	c := NewCatalog(Options{})
	mustMetadata(t, c, ordersMD(), "p1")
	mustDDL(t, c, "SALES.ORDERS", "ALTER TABLE SALES.ORDERS ADD (NOTE VARCHAR2(10))", "p2")
	c.Current("SALES.ORDERS").MarkWritten() // ORDER_ID float64
	schema := []byte(`{"id":"SALES.ORDERS","type":"object","properties":{"after":{"type":"object","properties":{"ORDER_ID":{"type":"integer"}}}}}`)
	if evs, err := c.ApplySchemaRecord("SALES.ORDERS", schema); err != nil || len(evs) != 0 {
		t.Fatalf("%v %v", evs, err)
	}
	r := restoreViaJSON(t, c, Options{})
	got, want := r.Current("SALES.ORDERS"), c.Current("SALES.ORDERS")
	if got.Number != want.Number || !sameColumns(got.Columns, want.Columns) || !got.Schema.Equal(want.Schema) {
		t.Fatalf("restored v%d %v; in force v%d %v", got.Number, got.Columns, want.Number, want.Columns)
	}
	md := ordersMD()
	md.Columns = append(md.Columns, cdc.Column{Name: "NOTE", Type: "string", Nullable: true})
	e1 := mustMetadata(t, c, md, "p3")
	e2 := mustMetadata(t, r, md, "p3")
	if e1.Kind != e2.Kind || e1.Version.Number != e2.Version.Number || e1.Kind != EventOpened || e1.Version.Columns[0].Type != tInt {
		t.Errorf("refresh: uninterrupted %d v%d, restored %d v%d; want v3 opened with int64", e1.Kind, e1.Version.Number, e2.Kind, e2.Version.Number)
	}
}

// Every lake type a provisional version can have survives the snapshot.
func TestRestoreKeepsEveryTypeOfAProvisionalVersion(t *testing.T) {
	hints := map[string]Type{}
	md := cdc.TableMetadata{Table: "S.T"}
	for i, name := range []string{"string", "binary", "int64", "float64", "decimal(20,3)", "decimal(38,0)", "boolean", "timestamp", "date"} {
		typ, err := ParseType(name)
		if err != nil {
			t.Fatal(err)
		}
		col := string(rune('A' + i))
		hints["S.T:"+col] = typ
		md.Columns = append(md.Columns, cdc.Column{Name: col, Type: "string", Nullable: i%2 == 0})
	}
	opts := Options{Hints: hints}
	c := NewCatalog(opts)
	mustMetadata(t, c, md, "p1")
	mustDDL(t, c, "S.T", "ALTER TABLE S.T ADD (Z NUMBER(5))", "p2")
	got, want := restoreViaJSON(t, c, opts).Current("S.T"), c.Current("S.T")
	if !sameColumns(got.Columns, want.Columns) || !got.Schema.Equal(want.Schema) {
		t.Errorf("restored %v, in force %v", got.Columns, want.Columns)
	}
}

// A schema record after the metadata that confirms its types (Data
// Streams writes bare "number" and "string") keeps the version's number
// but describes it as a restore would build it: its types now come from
// the record.
func TestBareSchemaRecordAfterMetadataKeepsTheVersion(t *testing.T) {
	c := NewCatalog(Options{})
	v1 := mustMetadata(t, c, ordersMD(), "p1").Version
	evs, err := c.ApplySchemaRecord("SALES.ORDERS", []byte(`{"id":"SALES.ORDERS","type":"object","properties":{"after":{"type":"object","properties":{"ORDER_ID":{"type":"number"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Kind != EventReplaced || evs[0].Version.Number != 1 || !sameColumns(evs[0].Version.Columns, v1.Columns) {
		t.Fatalf("events %+v, want v1 replaced with the same columns", evs)
	}
	if from := evs[0].Version.Columns[0].TypeFrom; from != "json-schema" {
		t.Errorf("ORDER_ID's type from %q, want json-schema", from)
	}
	got := restoreViaJSON(t, c, Options{}).Current("SALES.ORDERS")
	if !got.Schema.Equal(c.Current("SALES.ORDERS").Schema) {
		t.Errorf("restored %v, in force %v", got.Schema, c.Current("SALES.ORDERS").Schema)
	}
}
