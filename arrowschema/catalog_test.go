package arrowschema

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
)

var t0 = time.Date(2026, 7, 13, 4, 0, 0, 0, time.UTC)

// ordersMD is the OBJECT_METADATA of the reference example.
func ordersMD() cdc.TableMetadata {
	return cdc.TableMetadata{Table: "SALES.ORDERS", Columns: []cdc.Column{
		{Name: "ORDER_ID", Type: "number", Nullable: false, Key: true},
		{Name: "STATUS", Type: "string", Nullable: false},
		{Name: "TOTAL_AMOUNT", Type: "number", Nullable: true},
	}}
}

func mustMetadata(t *testing.T, c *Catalog, md cdc.TableMetadata, pos string) *Event {
	t.Helper()
	ev, err := c.ApplyMetadata(md, pos, t0)
	if err != nil {
		t.Fatalf("ApplyMetadata(%s at %s): %v", md.Table, pos, err)
	}
	return ev
}

func mustDDL(t *testing.T, c *Catalog, table, stmt, pos string) *Event {
	t.Helper()
	ev, err := c.ApplyDDL(table, stmt, pos, t0.Add(time.Minute))
	if err != nil {
		t.Fatalf("ApplyDDL(%q): %v", stmt, err)
	}
	return ev
}

type colWant struct {
	name     string
	typ      Type
	nullable bool
}

func checkColumns(t *testing.T, v *Version, want []colWant) {
	t.Helper()
	if len(v.Columns) != len(want) {
		t.Fatalf("version %d has %d columns %v, want %d", v.Number, len(v.Columns), colNames(v), len(want))
	}
	for i, w := range want {
		c := v.Columns[i]
		if c.Name != w.name || c.Type != w.typ || c.Nullable != w.nullable {
			t.Errorf("column %d = %s %v nullable=%v, want %s %v nullable=%v", i, c.Name, c.Type, c.Nullable, w.name, w.typ, w.nullable)
		}
		if idx, ok := v.ColumnIndex(w.name); !ok || idx != i {
			t.Errorf("ColumnIndex(%s) = %d, %v; want %d", w.name, idx, ok, i)
		}
	}
	// The data file schema follows the columns.
	for i, w := range want {
		f := v.Schema.Field(4 + i)
		if f.Name != w.name || !arrow.TypeEqual(f.Type, w.typ.Arrow()) {
			t.Errorf("schema field %d = %s %v, want %s %v", 4+i, f.Name, f.Type, w.name, w.typ.Arrow())
		}
	}
}

func colNames(v *Version) []string {
	var out []string
	for _, c := range v.Columns {
		out = append(out, c.Name)
	}
	return out
}

var (
	tString  = Type{Kind: KindString}
	tInt     = Type{Kind: KindInt64}
	tFloat   = Type{Kind: KindFloat64}
	tTS      = Type{Kind: KindTimestamp}
	tDate    = Type{Kind: KindDate}
	tBool    = Type{Kind: KindBoolean}
	tDec12_2 = Type{Kind: KindDecimal, Precision: 12, Scale: 2}
)

func TestFirstMetadataOpensVersionOne(t *testing.T) {
	c := NewCatalog(Options{})
	if c.Current("SALES.ORDERS") != nil {
		t.Fatal("empty catalog has a version")
	}
	ev := mustMetadata(t, c, ordersMD(), "pos-1")
	if ev == nil || ev.Kind != EventOpened || ev.Previous != nil {
		t.Fatalf("event %+v, want EventOpened without previous", ev)
	}
	v := ev.Version
	if v.Number != 1 || v.Table != "SALES.ORDERS" || v.Provisional || v.Hold || v.DDL != "" {
		t.Errorf("version %+v", v)
	}
	if v.OpenedAtPos != "pos-1" || !v.OpenedAtTS.Equal(t0) {
		t.Errorf("opened at %q %v", v.OpenedAtPos, v.OpenedAtTS)
	}
	if c.Current("SALES.ORDERS") != v {
		t.Error("Current does not return the opened version")
	}
	if c.Tables() != 1 {
		t.Errorf("Tables() = %d", c.Tables())
	}
	checkColumns(t, v, []colWant{{"ORDER_ID", tFloat, false}, {"STATUS", tString, false}, {"TOTAL_AMOUNT", tFloat, true}})
	if !v.Columns[0].Key || v.Columns[1].Key {
		t.Error("key flags not kept")
	}
	if v.Columns[0].SourceType != "number" || v.Columns[0].TypeFrom != "default" {
		t.Errorf("ORDER_ID source %q from %q", v.Columns[0].SourceType, v.Columns[0].TypeFrom)
	}
	if _, ok := v.ColumnIndex("NOPE"); ok {
		t.Error("ColumnIndex found a column that does not exist")
	}
}

func TestRepeatedMetadataKeepsVersion(t *testing.T) {
	c := NewCatalog(Options{})
	v1 := mustMetadata(t, c, ordersMD(), "p1").Version
	for i := 0; i < 3; i++ {
		if ev := mustMetadata(t, c, ordersMD(), "p2"); ev != nil {
			t.Fatalf("repeat %d: event %+v, want none", i, ev)
		}
	}
	if c.Current("SALES.ORDERS") != v1 || v1.Number != 1 {
		t.Errorf("current %+v", c.Current("SALES.ORDERS"))
	}
}

func TestDifferingMetadataOpensNextVersion(t *testing.T) {
	c := NewCatalog(Options{})
	v1 := mustMetadata(t, c, ordersMD(), "p1").Version
	md := ordersMD()
	md.Columns = append(md.Columns, cdc.Column{Name: "CUSTOMER_TIER", Type: "string", Nullable: true})
	ev := mustMetadata(t, c, md, "p2")
	if ev == nil || ev.Kind != EventOpened || ev.Version.Number != 2 || ev.Previous != v1 {
		t.Fatalf("event %+v", ev)
	}
	if ev.Version.Provisional || ev.Version.OpenedAtPos != "p2" {
		t.Errorf("v2 %+v", ev.Version)
	}
	// v1 is untouched.
	if len(v1.Columns) != 3 || v1.Number != 1 {
		t.Errorf("v1 changed: %+v", v1)
	}

	// A change of nullability or key alone is a change too.
	md2 := ordersMD()
	md2.Columns = append(md2.Columns, cdc.Column{Name: "CUSTOMER_TIER", Type: "string", Nullable: false})
	ev = mustMetadata(t, c, md2, "p3")
	if ev == nil || ev.Version.Number != 3 {
		t.Fatalf("nullability change: %+v", ev)
	}
	md3 := md2
	md3.Columns = append([]cdc.Column(nil), md2.Columns...)
	md3.Columns[1].Key = true
	ev = mustMetadata(t, c, md3, "p4")
	if ev == nil || ev.Version.Number != 4 {
		t.Fatalf("key change: %+v", ev)
	}
	// A column order change is a change.
	md4 := md3
	md4.Columns = []cdc.Column{md3.Columns[1], md3.Columns[0], md3.Columns[2], md3.Columns[3]}
	ev = mustMetadata(t, c, md4, "p5")
	if ev == nil || ev.Version.Number != 5 {
		t.Fatalf("order change: %+v", ev)
	}
}

func TestTablesAreIndependent(t *testing.T) {
	c := NewCatalog(Options{})
	mustMetadata(t, c, ordersMD(), "p1")
	items := cdc.TableMetadata{Table: "SALES.ITEMS", Columns: []cdc.Column{{Name: "ID", Type: "number"}}}
	ev := mustMetadata(t, c, items, "p2")
	if ev.Version.Number != 1 {
		t.Errorf("second table starts at %d", ev.Version.Number)
	}
	mustDDL(t, c, "SALES.ITEMS", "ALTER TABLE SALES.ITEMS ADD X NUMBER", "p3")
	if c.Current("SALES.ORDERS").Number != 1 || c.Current("SALES.ITEMS").Number != 2 {
		t.Error("DDL of one table changed another")
	}
}

// The decoder reuses the Columns slice of its Record for the next record.
// The catalog must not keep a view into it.
func TestMetadataIsCopied(t *testing.T) {
	dec, err := cdc.NewGoldenGate(cdc.GoldenGateNames{})
	if err != nil {
		t.Fatal(err)
	}
	var rec cdc.Record
	decode := func(s string) cdc.TableMetadata {
		t.Helper()
		if err := dec.Decode([]byte(s), &rec); err != nil {
			t.Fatal(err)
		}
		return rec.Metadata
	}
	c := NewCatalog(Options{})
	mustMetadata(t, c, decode(`{"op_type":"OBJECT_METADATA","qual_table":"A.T1","columns":{"X":{"type":"number","null":false,"key":true},"Y":{"type":"string","null":true,"key":false}}}`), "p1")
	mustMetadata(t, c, decode(`{"op_type":"OBJECT_METADATA","qual_table":"A.T2","columns":{"P":{"type":"boolean"},"Q":{"type":"string"}}}`), "p2")
	v := c.Current("A.T1")
	if got := v.Metadata.Columns[0].Name + "," + v.Metadata.Columns[1].Name; got != "X,Y" {
		t.Fatalf("A.T1's cached metadata became %s after decoding another record", got)
	}
	// The unchanged metadata of A.T1 must still be recognised as unchanged.
	if ev := mustMetadata(t, c, decode(`{"op_type":"OBJECT_METADATA","qual_table":"A.T1","columns":{"X":{"type":"number","null":false,"key":true},"Y":{"type":"string","null":true,"key":false}}}`), "p3"); ev != nil {
		t.Errorf("repeated metadata opened version %d", ev.Version.Number)
	}

	// Plain slice reuse, without the decoder.
	md := ordersMD()
	c2 := NewCatalog(Options{})
	mustMetadata(t, c2, md, "p1")
	md.Columns[0].Name = "CLOBBERED"
	if c2.Current("SALES.ORDERS").Metadata.Columns[0].Name != "ORDER_ID" {
		t.Error("catalog shares the caller's Columns array")
	}
}

func TestDDLOpensProvisionalVersion(t *testing.T) {
	cases := []struct {
		stmt string
		want []colWant
	}{
		{"ALTER TABLE SALES.ORDERS ADD CUSTOMER_TIER VARCHAR2(20)",
			[]colWant{{"ORDER_ID", tFloat, false}, {"STATUS", tString, false}, {"TOTAL_AMOUNT", tFloat, true}, {"CUSTOMER_TIER", tString, true}}},
		{"ALTER TABLE SALES.ORDERS ADD (DISCOUNT NUMBER(12,2) NOT NULL, CREATED DATE)",
			[]colWant{{"ORDER_ID", tFloat, false}, {"STATUS", tString, false}, {"TOTAL_AMOUNT", tFloat, true}, {"DISCOUNT", tDec12_2, false}, {"CREATED", tTS, true}}},
		{"ALTER TABLE SALES.ORDERS DROP COLUMN STATUS",
			[]colWant{{"ORDER_ID", tFloat, false}, {"TOTAL_AMOUNT", tFloat, true}}},
		{"ALTER TABLE SALES.ORDERS DROP (STATUS, TOTAL_AMOUNT)",
			[]colWant{{"ORDER_ID", tFloat, false}}},
		{"ALTER TABLE SALES.ORDERS RENAME COLUMN STATUS TO ORDER_STATUS",
			[]colWant{{"ORDER_ID", tFloat, false}, {"ORDER_STATUS", tString, false}, {"TOTAL_AMOUNT", tFloat, true}}},
		{"ALTER TABLE SALES.ORDERS MODIFY (TOTAL_AMOUNT NUMBER(12,2) NOT NULL)",
			[]colWant{{"ORDER_ID", tFloat, false}, {"STATUS", tString, false}, {"TOTAL_AMOUNT", tDec12_2, false}}},
		{"ALTER TABLE SALES.ORDERS MODIFY ORDER_ID NUMBER(10)",
			[]colWant{{"ORDER_ID", tInt, false}, {"STATUS", tString, false}, {"TOTAL_AMOUNT", tFloat, true}}},
		{"ALTER TABLE SALES.ORDERS MODIFY STATUS NULL",
			[]colWant{{"ORDER_ID", tFloat, false}, {"STATUS", tString, true}, {"TOTAL_AMOUNT", tFloat, true}}},
		// Understood, no column change: same columns, new version.
		{"CREATE INDEX IX ON SALES.ORDERS (STATUS)",
			[]colWant{{"ORDER_ID", tFloat, false}, {"STATUS", tString, false}, {"TOTAL_AMOUNT", tFloat, true}}},
	}
	for _, tc := range cases {
		t.Run(tc.stmt, func(t *testing.T) {
			c := NewCatalog(Options{})
			v1 := mustMetadata(t, c, ordersMD(), "p1").Version
			ev := mustDDL(t, c, "SALES.ORDERS", tc.stmt, "p2")
			if ev == nil || ev.Kind != EventOpened || ev.Previous != v1 {
				t.Fatalf("event %+v", ev)
			}
			v2 := ev.Version
			if v2.Number != 2 || !v2.Provisional || v2.Hold {
				t.Errorf("v2 number %d provisional %v hold %v", v2.Number, v2.Provisional, v2.Hold)
			}
			if v2.DDL != tc.stmt || v2.OpenedAtPos != "p2" || !v2.OpenedAtTS.Equal(t0.Add(time.Minute)) {
				t.Errorf("v2 provenance %q %q %v", v2.DDL, v2.OpenedAtPos, v2.OpenedAtTS)
			}
			checkColumns(t, v2, tc.want)
			if c.Current("SALES.ORDERS") != v2 {
				t.Error("provisional version is not current")
			}
			// The previous version is not modified by the DDL.
			checkColumns(t, v1, []colWant{{"ORDER_ID", tFloat, false}, {"STATUS", tString, false}, {"TOTAL_AMOUNT", tFloat, true}})
		})
	}
}

func TestRefreshCompletesProvisionalVersion(t *testing.T) {
	c := NewCatalog(Options{})
	mustMetadata(t, c, ordersMD(), "p1")
	v2 := mustDDL(t, c, "SALES.ORDERS", "ALTER TABLE SALES.ORDERS ADD CUSTOMER_TIER VARCHAR2(20)", "p2").Version

	md := ordersMD()
	md.Columns = append(md.Columns, cdc.Column{Name: "CUSTOMER_TIER", Type: "string", Nullable: true})
	ev := mustMetadata(t, c, md, "p3")
	if ev == nil || ev.Kind != EventCompleted {
		t.Fatalf("event %+v, want EventCompleted", ev)
	}
	if ev.Version != v2 {
		t.Fatal("completion replaced the *Version; open buffers keyed by it would be closed")
	}
	if v2.Number != 2 || v2.Provisional || v2.Hold {
		t.Errorf("completed v2: number %d provisional %v hold %v", v2.Number, v2.Provisional, v2.Hold)
	}
	if !v2.Metadata.Equal(md) {
		t.Errorf("completed metadata %+v", v2.Metadata)
	}
	if v2.DDL == "" || v2.OpenedAtPos != "p2" {
		t.Errorf("completion lost provenance: %q %q", v2.DDL, v2.OpenedAtPos)
	}
	// One source change = one version: the same metadata again is no change.
	if ev := mustMetadata(t, c, md, "p4"); ev != nil {
		t.Errorf("repeat after completion: %+v", ev)
	}
	if c.Current("SALES.ORDERS").Number != 2 {
		t.Errorf("version %d", c.Current("SALES.ORDERS").Number)
	}
	// A later real change is the next number.
	md.Columns = md.Columns[:3]
	if ev := mustMetadata(t, c, md, "p5"); ev == nil || ev.Version.Number != 3 || ev.Kind != EventOpened {
		t.Errorf("later change: %+v", ev)
	}
}

func TestRefreshReplacesDifferentProvisionalVersion(t *testing.T) {
	c := NewCatalog(Options{})
	mustMetadata(t, c, ordersMD(), "p1")
	v2 := mustDDL(t, c, "SALES.ORDERS", "ALTER TABLE SALES.ORDERS ADD CUSTOMER_TIER VARCHAR2(20)", "p2").Version
	// The refreshed metadata says the new column is NOT NULL and adds one
	// more: not what the DDL told.
	md := ordersMD()
	md.Columns = append(md.Columns,
		cdc.Column{Name: "CUSTOMER_TIER", Type: "string", Nullable: false},
		cdc.Column{Name: "EXTRA", Type: "boolean", Nullable: true})
	ev := mustMetadata(t, c, md, "p3")
	if ev == nil || ev.Kind != EventReplaced {
		t.Fatalf("event %+v, want EventReplaced", ev)
	}
	if ev.Version == v2 || ev.Previous != v2 {
		t.Error("replacement must be a new *Version with the provisional one as Previous")
	}
	v := ev.Version
	if v.Number != 2 || v.Provisional || v.Hold || v.DDL != v2.DDL || v.OpenedAtPos != "p2" {
		t.Errorf("replacement %d provisional %v hold %v ddl %q pos %q", v.Number, v.Provisional, v.Hold, v.DDL, v.OpenedAtPos)
	}
	checkColumns(t, v, []colWant{{"ORDER_ID", tFloat, false}, {"STATUS", tString, false}, {"TOTAL_AMOUNT", tFloat, true},
		{"CUSTOMER_TIER", tString, false}, {"EXTRA", tBool, true}})
	// The provisional Version's schema is left alone.
	if len(v2.Columns) != 4 {
		t.Errorf("provisional version changed: %v", colNames(v2))
	}
	if ev := mustMetadata(t, c, md, "p4"); ev != nil {
		t.Errorf("repeat after replacement: %+v", ev)
	}
}

// TestRefreshAfterWrittenProvisionalVersionOpensTheNext: once DML has been
// written under a provisional version, a refresh that differs opens the
// next version: replacing the schema under the same number would leave
// that version's files with another schema than its _schemas document.
// The mark survives a checkpoint's snapshot.
func TestRefreshAfterWrittenProvisionalVersionOpensTheNext(t *testing.T) {
	md := ordersMD()
	md.Columns = append(md.Columns, cdc.Column{Name: "CUSTOMER_TIER", Type: "string", Nullable: false})
	wider := ordersMD()
	wider.Columns = append(wider.Columns, cdc.Column{Name: "CUSTOMER_TIER", Type: "string", Nullable: true}, cdc.Column{Name: "EXTRA", Type: "boolean", Nullable: true})
	for _, restore := range []bool{false, true} {
		c := NewCatalog(Options{})
		mustMetadata(t, c, ordersMD(), "p1")
		v2 := mustDDL(t, c, "SALES.ORDERS", "ALTER TABLE SALES.ORDERS ADD CUSTOMER_TIER VARCHAR2(20)", "p2").Version
		v2.MarkWritten()
		if restore {
			var err error
			if c, err = RestoreCatalog(Options{}, c.Snapshot()); err != nil {
				t.Fatal(err)
			}
		}
		ev := mustMetadata(t, c, wider, "p3")
		if ev == nil || ev.Kind != EventOpened || ev.Version.Number != 3 || ev.Version.Provisional || ev.Version.OpenedAtPos != "p3" {
			t.Fatalf("restored %v: event %+v, want version 3 opened at p3", restore, ev)
		}
		if ev.Previous.Number != 2 || len(ev.Previous.Columns) != 4 || !ev.Previous.Columns[3].Nullable {
			t.Errorf("restored %v: the provisional version changed: %+v", restore, ev.Previous.Columns)
		}
	}
	// A refresh that differs from it only in nullability completes it
	// under its number: its files read the same.
	c := NewCatalog(Options{})
	mustMetadata(t, c, ordersMD(), "p1")
	mustDDL(t, c, "SALES.ORDERS", "ALTER TABLE SALES.ORDERS ADD CUSTOMER_TIER VARCHAR2(20)", "p2").Version.MarkWritten()
	if ev := mustMetadata(t, c, md, "p3"); ev == nil || ev.Kind != EventReplaced || ev.Version.Number != 2 {
		t.Errorf("a refresh differing in nullability: %+v, want version 2 replaced", ev)
	}
}

func TestDDLNotUnderstoodHolds(t *testing.T) {
	c := NewCatalog(Options{})
	mustMetadata(t, c, ordersMD(), "p1")
	ev := mustDDL(t, c, "SALES.ORDERS", "ALTER TABLE SALES.ORDERS SOMETHING ODD", "p2")
	if ev == nil || ev.Version.Number != 2 || !ev.Version.Provisional || !ev.Version.Hold {
		t.Fatalf("event %+v", ev)
	}
	checkColumns(t, ev.Version, []colWant{{"ORDER_ID", tFloat, false}, {"STATUS", tString, false}, {"TOTAL_AMOUNT", tFloat, true}})

	md := ordersMD()
	md.Columns = md.Columns[:2]
	ev2 := mustMetadata(t, c, md, "p3")
	if ev2 == nil || ev2.Kind != EventReplaced || ev2.Version.Number != 2 || ev2.Version.Hold || ev2.Version.Provisional {
		t.Fatalf("refresh: %+v", ev2)
	}

	// Same columns after all: completion clears Hold on the same Version.
	c2 := NewCatalog(Options{})
	mustMetadata(t, c2, ordersMD(), "p1")
	held := mustDDL(t, c2, "SALES.ORDERS", "ALTER TABLE SALES.ORDERS SOMETHING UNPARSEABLE", "p2").Version
	if !held.Hold {
		t.Fatal("not held")
	}
	ev3 := mustMetadata(t, c2, ordersMD(), "p3")
	if ev3 == nil || ev3.Kind != EventCompleted || ev3.Version != held || held.Hold || held.Provisional {
		t.Errorf("completion of held version: %+v hold=%v", ev3, held.Hold)
	}
}

func TestDDLThatDoesNotFitHolds(t *testing.T) {
	for _, stmt := range []string{
		"ALTER TABLE SALES.ORDERS DROP COLUMN NOPE",
		"ALTER TABLE SALES.ORDERS ADD STATUS VARCHAR2(5)",
		"ALTER TABLE SALES.ORDERS RENAME COLUMN NOPE TO X",
		"ALTER TABLE SALES.ORDERS MODIFY NOPE NUMBER(5)",
		// the first clause fits, the second does not: nothing is applied
		"ALTER TABLE SALES.ORDERS RENAME COLUMN STATUS TO S2 DROP COLUMN NOPE",
	} {
		c := NewCatalog(Options{})
		mustMetadata(t, c, ordersMD(), "p1")
		v := mustDDL(t, c, "SALES.ORDERS", stmt, "p2").Version
		if !v.Hold || !v.Provisional || v.Number != 2 {
			t.Errorf("%q: hold %v provisional %v number %d", stmt, v.Hold, v.Provisional, v.Number)
		}
		checkColumns(t, v, []colWant{{"ORDER_ID", tFloat, false}, {"STATUS", tString, false}, {"TOTAL_AMOUNT", tFloat, true}})
	}
}

func TestDDLAfterHeldDDLStillHolds(t *testing.T) {
	c := NewCatalog(Options{})
	mustMetadata(t, c, ordersMD(), "p1")
	mustDDL(t, c, "SALES.ORDERS", "ALTER TABLE SALES.ORDERS UNKNOWN CLAUSE", "p2")
	// The columns of v2 may be stale; applying an understood DDL to them
	// must not produce a version that lets DML through.
	v3 := mustDDL(t, c, "SALES.ORDERS", "ALTER TABLE SALES.ORDERS ADD X NUMBER(10)", "p3").Version
	if v3.Number != 3 || !v3.Hold {
		t.Errorf("v3 number %d hold %v, want 3 held", v3.Number, v3.Hold)
	}
	// The refresh completes v3 and uses the DDL's type for X.
	md := ordersMD()
	md.Columns = append(md.Columns, cdc.Column{Name: "X", Type: "number", Nullable: true})
	ev := mustMetadata(t, c, md, "p4")
	if ev == nil || ev.Version.Number != 3 || ev.Version.Hold {
		t.Fatalf("refresh %+v", ev)
	}
	i, _ := ev.Version.ColumnIndex("X")
	if ev.Version.Columns[i].Type != tInt {
		t.Errorf("X: %v, want int64 from NUMBER(10)", ev.Version.Columns[i].Type)
	}
}

func TestConsecutiveDDLsOpenOneVersionEach(t *testing.T) {
	c := NewCatalog(Options{})
	mustMetadata(t, c, ordersMD(), "p1")
	mustDDL(t, c, "SALES.ORDERS", "ALTER TABLE SALES.ORDERS ADD A NUMBER(10)", "p2")
	v3 := mustDDL(t, c, "SALES.ORDERS", "ALTER TABLE SALES.ORDERS ADD B VARCHAR2(3)", "p3").Version
	if v3.Number != 3 || v3.Hold {
		t.Fatalf("v3 %d hold %v", v3.Number, v3.Hold)
	}
	checkColumns(t, v3, []colWant{{"ORDER_ID", tFloat, false}, {"STATUS", tString, false}, {"TOTAL_AMOUNT", tFloat, true}, {"A", tInt, true}, {"B", tString, true}})
	md := ordersMD()
	md.Columns = append(md.Columns, cdc.Column{Name: "A", Type: "number", Nullable: true}, cdc.Column{Name: "B", Type: "string", Nullable: true})
	ev := mustMetadata(t, c, md, "p4")
	if ev == nil || ev.Kind != EventCompleted || ev.Version != v3 {
		t.Fatalf("refresh %+v", ev)
	}
}

func TestDDLBeforeMetadata(t *testing.T) {
	c := NewCatalog(Options{})
	stmt := "CREATE TABLE SALES.ORDERS (ORDER_ID NUMBER(10) NOT NULL, STATUS VARCHAR2(20), TOTAL_AMOUNT NUMBER(12,2), PRIMARY KEY (ORDER_ID))"
	ev, err := c.ApplyDDL("SALES.ORDERS", stmt, "p0", t0)
	if err != nil || ev != nil {
		t.Fatalf("DDL before metadata: %+v, %v; want no event", ev, err)
	}
	if c.Current("SALES.ORDERS") != nil {
		t.Fatal("DDL before metadata opened a version")
	}
	v := mustMetadata(t, c, ordersMD(), "p1").Version
	if v.Number != 1 || v.DDL != stmt || v.Provisional {
		t.Errorf("v1 number %d ddl %q provisional %v", v.Number, v.DDL, v.Provisional)
	}
	// The CREATE TABLE types refine the metadata.
	checkColumns(t, v, []colWant{{"ORDER_ID", tInt, false}, {"STATUS", tString, false}, {"TOTAL_AMOUNT", tDec12_2, true}})
	if v.Columns[0].TypeFrom != "ddl" {
		t.Errorf("ORDER_ID type from %q", v.Columns[0].TypeFrom)
	}
}

func TestAlterBeforeMetadataRefinesTypes(t *testing.T) {
	c := NewCatalog(Options{})
	mustDDL(t, c, "SALES.ORDERS", "ALTER TABLE SALES.ORDERS MODIFY (TOTAL_AMOUNT NUMBER(12,2))", "p0")
	v := mustMetadata(t, c, ordersMD(), "p1").Version
	if v.Number != 1 {
		t.Fatalf("number %d", v.Number)
	}
	i, _ := v.ColumnIndex("TOTAL_AMOUNT")
	if v.Columns[i].Type != tDec12_2 {
		t.Errorf("TOTAL_AMOUNT %v, want decimal(12,2)", v.Columns[i].Type)
	}
}

func TestCreateTableAgainReplacesColumns(t *testing.T) {
	c := NewCatalog(Options{})
	mustMetadata(t, c, ordersMD(), "p1")
	mustDDL(t, c, "SALES.ORDERS", "DROP TABLE SALES.ORDERS", "p2")
	v := mustDDL(t, c, "SALES.ORDERS", "CREATE TABLE SALES.ORDERS (ID NUMBER(10) NOT NULL, NAME VARCHAR2(10))", "p3").Version
	if v.Number != 3 || v.Hold || !v.Provisional {
		t.Errorf("v3 number %d hold %v provisional %v", v.Number, v.Hold, v.Provisional)
	}
	checkColumns(t, v, []colWant{{"ID", tInt, false}, {"NAME", tString, true}})
}

func TestRenameKeepsDDLType(t *testing.T) {
	c := NewCatalog(Options{})
	mustDDL(t, c, "SALES.ORDERS", "CREATE TABLE SALES.ORDERS (ORDER_ID NUMBER(10), STATUS VARCHAR2(5), TOTAL_AMOUNT NUMBER(12,2))", "p0")
	mustMetadata(t, c, ordersMD(), "p1")
	v := mustDDL(t, c, "SALES.ORDERS", "ALTER TABLE SALES.ORDERS RENAME COLUMN TOTAL_AMOUNT TO AMOUNT", "p2").Version
	checkColumns(t, v, []colWant{{"ORDER_ID", tInt, false}, {"STATUS", tString, false}, {"AMOUNT", tDec12_2, true}})
}

func TestTypePrecedence(t *testing.T) {
	// A: hint, JSON Schema and DDL all say something: the hint wins.
	// B: JSON Schema and DDL: JSON Schema wins.
	// C: DDL only: DDL wins over the default.
	// D: nothing: the default for number is float64.
	// E, F: a JSON Schema that says only number or string (as Data Streams
	// writes for every table) and DDL: DDL wins.
	// G: that JSON Schema alone: it is the type.
	md := cdc.TableMetadata{Table: "S.T", Columns: []cdc.Column{
		{Name: "A", Type: "number"}, {Name: "B", Type: "number"}, {Name: "C", Type: "number"}, {Name: "D", Type: "number"},
		{Name: "E", Type: "number"}, {Name: "F", Type: "string"}, {Name: "G", Type: "string"},
	}}
	c := NewCatalog(Options{Hints: map[string]Type{"S.T:A": {Kind: KindDecimal, Precision: 20, Scale: 4}}})
	if _, err := c.ApplySchemaRecord("S.T", []byte(`{"id":"S.T","type":"object","properties":{"after":{"type":"object","properties":{
		"A":{"type":"integer"},"B":{"type":"integer"},"E":{"type":["number","null"]},"F":{"type":["string","null"]},"G":{"type":"string"}}}}}`)); err != nil {
		t.Fatal(err)
	}
	mustDDL(t, c, "S.T", "CREATE TABLE S.T (A DATE, B NUMBER(12,2), C NUMBER(12,2), D NUMBER, E NUMBER(12,2), F DATE)", "p0")
	v := mustMetadata(t, c, md, "p1").Version
	want := []struct {
		typ  Type
		from string
	}{
		{Type{Kind: KindDecimal, Precision: 20, Scale: 4}, "hint"},
		{tInt, "json-schema"},
		{tDec12_2, "ddl"},
		{tFloat, "default"},
		{tDec12_2, "ddl"},
		{Type{Kind: KindTimestamp}, "ddl"},
		{tString, "json-schema"},
	}
	for i, w := range want {
		col := v.Columns[i]
		if col.Type != w.typ || col.TypeFrom != w.from {
			t.Errorf("%s: %v from %q, want %v from %q", col.Name, col.Type, col.TypeFrom, w.typ, w.from)
		}
		if got := v.Schema.Field(4 + i).Metadata.FindKey("type_from"); got < 0 || v.Schema.Field(4 + i).Metadata.Values()[got] != w.from {
			t.Errorf("%s: type_from field metadata missing or wrong", col.Name)
		}
	}
}

func TestHintsWildcardAndTableSpecific(t *testing.T) {
	hints, err := ParseHints(map[string]string{
		"*:TOTAL_AMOUNT":            "decimal(12,2)",
		"*:STATUS":                  "binary",
		"SALES.ORDERS:STATUS":       "string",
		"OTHER.TABLE:ORDER_ID":      "int64",
		"SALES.ORDERS:NOT_A_COLUMN": "date",
	})
	if err != nil {
		t.Fatal(err)
	}
	c := NewCatalog(Options{Hints: hints})
	v := mustMetadata(t, c, ordersMD(), "p1").Version
	checkColumns(t, v, []colWant{{"ORDER_ID", tFloat, false}, {"STATUS", tString, false}, {"TOTAL_AMOUNT", tDec12_2, true}})
	for _, col := range v.Columns[1:] {
		if col.TypeFrom != "hint" {
			t.Errorf("%s from %q, want hint", col.Name, col.TypeFrom)
		}
	}
	other := mustMetadata(t, c, cdc.TableMetadata{Table: "X.Y", Columns: []cdc.Column{{Name: "STATUS", Type: "string"}}}, "p2").Version
	if other.Columns[0].Type != (Type{Kind: KindBinary}) {
		t.Errorf("wildcard hint not applied to another table: %v", other.Columns[0].Type)
	}
}

func TestHintBeatsDDLAndDDLBeatsDefaultAfterDDL(t *testing.T) {
	c := NewCatalog(Options{Hints: map[string]Type{"SALES.ORDERS:NEW_TS": {Kind: KindString}}})
	mustMetadata(t, c, ordersMD(), "p1")
	v := mustDDL(t, c, "SALES.ORDERS", "ALTER TABLE SALES.ORDERS ADD (NEW_TS TIMESTAMP, NEW_DT DATE, NEW_N NUMBER(10))", "p2").Version
	checkColumns(t, v, []colWant{{"ORDER_ID", tFloat, false}, {"STATUS", tString, false}, {"TOTAL_AMOUNT", tFloat, true},
		{"NEW_TS", tString, true}, {"NEW_DT", tTS, true}, {"NEW_N", tInt, true}})
}

func TestJSONSchemaRefinesTypesAndNullability(t *testing.T) {
	c := NewCatalog(Options{})
	if _, err := c.ApplySchemaRecord("urn:SALES.ORDERS", []byte(`{"id":"urn:SALES.ORDERS","type":"object","properties":{
		"after":{"type":"object","properties":{
		  "ORDER_ID":{"type":"integer"},
		  "STATUS":{"type":["string","null"]},
		  "TOTAL_AMOUNT":{"type":"number"}}}}}`)); err != nil {
		t.Fatal(err)
	}
	v := mustMetadata(t, c, ordersMD(), "p1").Version
	// STATUS: metadata says NOT NULL, the JSON Schema allows null: nullable.
	// TOTAL_AMOUNT: metadata says nullable, the JSON Schema does not list
	// null: the metadata's nullability stays.
	checkColumns(t, v, []colWant{{"ORDER_ID", tInt, false}, {"STATUS", tString, true}, {"TOTAL_AMOUNT", tFloat, true}})
}

func TestJSONSchemaOfOtherTableIgnored(t *testing.T) {
	c := NewCatalog(Options{})
	if _, err := c.ApplySchemaRecord("SALES.ITEMS", []byte(`{"id":"SALES.ITEMS","type":"object","properties":{
		"after":{"type":"object","properties":{"ORDER_ID":{"type":"integer"}}}}}`)); err != nil {
		t.Fatal(err)
	}
	v := mustMetadata(t, c, ordersMD(), "p1").Version
	if v.Columns[0].Type != tFloat {
		t.Errorf("schema of SALES.ITEMS applied to SALES.ORDERS: %v", v.Columns[0].Type)
	}
}

// A schema record that types a table's version in force differently
// opens the next version at once, with DML under the one in force or not
// (what a rerun could not tell); the same record again, and the metadata
// repeated afterwards, change nothing; a record re-sent under its id
// without column types retypes the table back; a restore from a snapshot
// builds the very version in force.
func TestJSONSchemaRecordRetypesTheVersionInForce(t *testing.T) {
	c := NewCatalog(Options{})
	schema := func(orderIDType string) []byte {
		return []byte(`{"id":"SALES.ORDERS","type":"object","properties":{"after":{"type":"object","properties":{
			"ORDER_ID":{"type":"` + orderIDType + `"}}}}}`)
	}
	apply := func(doc []byte) []*Event {
		t.Helper()
		evs, err := c.ApplySchemaRecord("SALES.ORDERS", doc)
		if err != nil {
			t.Fatal(err)
		}
		return evs
	}
	want := func(what string, evs []*Event, number int, typ Type) {
		t.Helper()
		if len(evs) != 1 || evs[0].Kind != EventOpened || evs[0].Version.Number != number || evs[0].Version.Columns[0].Type != typ {
			t.Fatalf("%s: %+v, want v%d opened with %v", what, evs, number, typ)
		}
		if c.Current("SALES.ORDERS") != evs[0].Version {
			t.Fatalf("%s: the version opened is not in force", what)
		}
		restored, err := RestoreCatalog(Options{}, c.Snapshot())
		if err != nil {
			t.Fatal(err)
		}
		if got := restored.Current("SALES.ORDERS"); got.Number != number || !sameColumns(got.Columns, evs[0].Version.Columns) {
			t.Errorf("%s: restored v%d %v, in force v%d %v", what, got.Number, got.Columns, number, evs[0].Version.Columns)
		}
	}
	// Metadata first, as Data Streams may send it: float64 from "number".
	v1 := mustMetadata(t, c, ordersMD(), "p1").Version
	if v1.Columns[0].Type != tFloat {
		t.Fatalf("v1 ORDER_ID %v", v1.Columns[0].Type)
	}
	want("schema record before any DML", apply(schema("integer")), 2, tInt)
	if ev := mustMetadata(t, c, ordersMD(), "p1"); ev != nil {
		t.Fatalf("metadata repeated after the schema record: %+v, want no change", ev)
	}
	if evs := apply(schema("integer")); len(evs) != 0 {
		t.Fatalf("the same record again: %+v", evs)
	}
	c.Current("SALES.ORDERS").MarkWritten()
	want("schema record after DML", apply(schema("string")), 3, tString)
	want("re-sent without column types", apply([]byte(`{"id":"SALES.ORDERS","type":"object","properties":{"op_type":{"type":"string"}}}`)), 4, tFloat)
	// A version waiting for its refreshed metadata takes the types then.
	apply(schema("string"))
	mustDDL(t, c, "SALES.ORDERS", "ALTER TABLE SALES.ORDERS ADD (NOTE VARCHAR2(10))", "p3")
	if evs := apply(schema("integer")); len(evs) != 0 {
		t.Fatalf("schema record for a provisional version: %+v", evs)
	}
	md := ordersMD()
	md.Columns = append(md.Columns, cdc.Column{Name: "NOTE", Type: "string", Nullable: true})
	ev := mustMetadata(t, c, md, "p4")
	if ev == nil || ev.Version.Number != 6 || ev.Version.Columns[0].Type != tInt {
		t.Fatalf("refresh after the DDL: %+v, want v6 with int64", ev)
	}
}

func TestNewestMatchingJSONSchemaWins(t *testing.T) {
	c := NewCatalog(Options{})
	if _, err := c.ApplySchemaRecord("a", []byte(`{"id":"a","title":"SALES.ORDERS","properties":{"after":{"properties":{"ORDER_ID":{"type":"integer"}}}}}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ApplySchemaRecord("b", []byte(`{"id":"b","properties":{"qual_table":{"const":"SALES.ORDERS"},"after":{"properties":{"ORDER_ID":{"type":"boolean"}}}}}`)); err != nil {
		t.Fatal(err)
	}
	// A schema without images that matches must not hide the others.
	if _, err := c.ApplySchemaRecord("SALES.ORDERS", []byte(`{"id":"SALES.ORDERS","properties":{"op_type":{"type":"string"}}}`)); err != nil {
		t.Fatal(err)
	}
	v := mustMetadata(t, c, ordersMD(), "p1").Version
	if v.Columns[0].Type != tBool {
		t.Errorf("ORDER_ID %v, want boolean from the newest schema", v.Columns[0].Type)
	}
	// Re-sending "a" makes it the newest.
	evs, err := c.ApplySchemaRecord("a", []byte(`{"id":"a","title":"SALES.ORDERS","properties":{"after":{"properties":{"ORDER_ID":{"type":"integer"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Version.Columns[0].Type != tInt {
		t.Errorf("after re-send: %+v", evs)
	}
}

func TestApplySchemaRecordRejectsBadJSON(t *testing.T) {
	c := NewCatalog(Options{})
	if _, err := c.ApplySchemaRecord("x", []byte(`{not json`)); err == nil {
		t.Error("bad schema record accepted")
	}
}

func TestMetacolumnCollision(t *testing.T) {
	for _, name := range []string{"OP_TYPE", "op_ts", "Xid", "POS", "ABSENT_COLUMNS"} {
		c := NewCatalog(Options{})
		md := ordersMD()
		md.Columns = append(md.Columns, cdc.Column{Name: name, Type: "string"})
		ev, err := c.ApplyMetadata(md, "p1", t0)
		if err == nil {
			t.Errorf("%s: accepted (%+v)", name, ev)
			continue
		}
		re, ok := cdc.AsReject(err)
		if !ok || re.Reason != cdc.ReasonBadMetadata {
			t.Errorf("%s: error %v, want a RejectError with %s", name, err, cdc.ReasonBadMetadata)
		}
		if !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %q does not name the column", name, err)
		}
		if c.Current("SALES.ORDERS") != nil {
			t.Errorf("%s: a version was opened", name)
		}
	}
	// before_image collides only when the before image column is enabled.
	md := ordersMD()
	md.Columns = append(md.Columns, cdc.Column{Name: "BEFORE_IMAGE", Type: "string"})
	if _, err := NewCatalog(Options{}).ApplyMetadata(md, "p1", t0); err != nil {
		t.Errorf("BEFORE_IMAGE without the before image column: %v", err)
	}
	_, err := NewCatalog(Options{BeforeImage: true}).ApplyMetadata(md, "p1", t0)
	if re, ok := cdc.AsReject(err); !ok || re.Reason != cdc.ReasonBadMetadata {
		t.Errorf("BEFORE_IMAGE with the before image column: %v", err)
	}

	// A DDL that adds a colliding column is rejected and opens nothing.
	c := NewCatalog(Options{})
	v1 := mustMetadata(t, c, ordersMD(), "p1").Version
	_, err = c.ApplyDDL("SALES.ORDERS", "ALTER TABLE SALES.ORDERS ADD OP_TYPE VARCHAR2(1)", "p2", t0)
	if re, ok := cdc.AsReject(err); !ok || re.Reason != cdc.ReasonBadMetadata {
		t.Errorf("DDL adding OP_TYPE: %v", err)
	}
	if c.Current("SALES.ORDERS") != v1 {
		t.Error("rejected DDL changed the version")
	}
}

func TestDataFileSchema(t *testing.T) {
	for _, before := range []bool{false, true} {
		c := NewCatalog(Options{BeforeImage: before, Hints: map[string]Type{"*:TOTAL_AMOUNT": tDec12_2}})
		v := mustMetadata(t, c, ordersMD(), "p1").Version
		s := v.Schema
		wantNames := []string{"op_type", "op_ts", "xid", "pos", "ORDER_ID", "STATUS", "TOTAL_AMOUNT", "absent_columns", "src_partition", "src_offset"}
		if before {
			wantNames = append(wantNames, "before_image")
		}
		if s.NumFields() != len(wantNames) {
			t.Fatalf("before=%v: %d fields %v", before, s.NumFields(), s)
		}
		for i, n := range wantNames {
			if s.Field(i).Name != n {
				t.Errorf("before=%v: field %d is %s, want %s", before, i, s.Field(i).Name, n)
			}
		}
		if !arrow.TypeEqual(s.Field(0).Type, arrow.BinaryTypes.String) || s.Field(0).Nullable {
			t.Errorf("op_type %v nullable=%v", s.Field(0).Type, s.Field(0).Nullable)
		}
		ts, ok := s.Field(1).Type.(*arrow.TimestampType)
		if !ok || ts.Unit != arrow.Microsecond || ts.TimeZone != "UTC" || s.Field(1).Nullable {
			t.Errorf("op_ts %v nullable=%v, want timestamp[us, tz=UTC] not null", s.Field(1).Type, s.Field(1).Nullable)
		}
		for _, i := range []int{2, 3} {
			if !arrow.TypeEqual(s.Field(i).Type, arrow.BinaryTypes.String) {
				t.Errorf("%s %v, want string", s.Field(i).Name, s.Field(i).Type)
			}
		}
		if !arrow.TypeEqual(s.Field(4).Type, arrow.PrimitiveTypes.Float64) || s.Field(4).Nullable {
			t.Errorf("ORDER_ID %v nullable=%v", s.Field(4).Type, s.Field(4).Nullable)
		}
		if !arrow.TypeEqual(s.Field(6).Type, &arrow.Decimal128Type{Precision: 12, Scale: 2}) || !s.Field(6).Nullable {
			t.Errorf("TOTAL_AMOUNT %v nullable=%v", s.Field(6).Type, s.Field(6).Nullable)
		}
		if !arrow.TypeEqual(s.Field(7).Type, arrow.ListOf(arrow.BinaryTypes.String)) || !s.Field(7).Nullable {
			t.Errorf("absent_columns %v", s.Field(7).Type)
		}
		// Key flag in the field metadata.
		for i, want := range []string{"true", "false", "false"} {
			f := s.Field(4 + i)
			k := f.Metadata.FindKey("key")
			if k < 0 || f.Metadata.Values()[k] != want {
				t.Errorf("%s key metadata %v, want %s", f.Name, f.Metadata, want)
			}
			st := f.Metadata.FindKey("source_type")
			if st < 0 || f.Metadata.Values()[st] != ordersMD().Columns[i].Type {
				t.Errorf("%s source_type metadata %v", f.Name, f.Metadata)
			}
		}
		if tk := s.Metadata().FindKey("table"); tk < 0 || s.Metadata().Values()[tk] != "SALES.ORDERS" {
			t.Errorf("schema metadata %v", s.Metadata())
		}
		if before {
			st, ok := s.Field(10).Type.(*arrow.StructType)
			if !ok || !s.Field(10).Nullable {
				t.Fatalf("before_image %v", s.Field(10).Type)
			}
			if st.NumFields() != 3 {
				t.Fatalf("before_image has %d fields", st.NumFields())
			}
			for i, n := range []string{"ORDER_ID", "STATUS", "TOTAL_AMOUNT"} {
				f := st.Field(i)
				if f.Name != n || !f.Nullable || !arrow.TypeEqual(f.Type, v.Columns[i].Type.Arrow()) {
					t.Errorf("before_image field %d: %s %v nullable=%v", i, f.Name, f.Type, f.Nullable)
				}
			}
		} else if s.HasField("before_image") {
			t.Error("before_image present although disabled")
		}
	}
}

func TestParseHints(t *testing.T) {
	got, err := ParseHints(map[string]string{
		"SALES.ORDERS:TOTAL_AMOUNT": "decimal(12,2)",
		"*:CREATED_AT":              "timestamp",
		"CDB.SALES.ORDERS:ID":       "int64",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got["SALES.ORDERS:TOTAL_AMOUNT"] != tDec12_2 || got["*:CREATED_AT"] != tTS || got["CDB.SALES.ORDERS:ID"] != tInt {
		t.Errorf("hints %v", got)
	}
	if len(got) != 3 {
		t.Errorf("%d hints", len(got))
	}

	empty, err := ParseHints(nil)
	if err != nil || len(empty) != 0 {
		t.Errorf("ParseHints(nil) = %v, %v", empty, err)
	}
}

func TestParseHintsErrors(t *testing.T) {
	bad := map[string]string{
		"NOCOLON": "int64",
		":COL":    "int64",
		"TABLE:":  "int64",
		"T:A":     "uint8",
		"T:B":     "decimal(40,2)",
		"T:GOOD":  "int64",
	}
	got, err := ParseHints(bad)
	if err == nil {
		t.Fatalf("accepted: %v", got)
	}
	if got != nil {
		t.Errorf("hints returned with an error: %v", got)
	}
	// Every bad entry is reported at once, and the good one is not.
	for _, k := range []string{"NOCOLON", ":COL", "TABLE:", "T:A", "T:B"} {
		if !strings.Contains(err.Error(), `"`+k+`"`) {
			t.Errorf("error %q does not mention %q", err, k)
		}
	}
	if strings.Contains(err.Error(), "T:GOOD") {
		t.Errorf("error %q mentions a good hint", err)
	}
	// The message is stable.
	_, err2 := ParseHints(bad)
	if err2 == nil || err2.Error() != err.Error() {
		t.Errorf("message differs between runs:\n%v\n%v", err, err2)
	}
}

func TestVersionsDateAndTimestampKinds(t *testing.T) {
	c := NewCatalog(Options{})
	if _, err := c.ApplySchemaRecord("T", []byte(`{"id":"T","properties":{"after":{"properties":{
		"D":{"type":"string","format":"date"},"TS":{"type":["string","null"],"format":"date-time"}}}}}`)); err != nil {
		t.Fatal(err)
	}
	v := mustMetadata(t, c, cdc.TableMetadata{Table: "T", Columns: []cdc.Column{{Name: "D", Type: "string"}, {Name: "TS", Type: "string"}}}, "p").Version
	checkColumns(t, v, []colWant{{"D", tDate, false}, {"TS", tTS, true}})
}

// TestFolderKeyColumnsKeepTheirWrittenNameAcrossVersions: a column named
// like a partition folder is written under the same name in every version
// of its table, whatever columns come and go beside it, so that readers
// that union versions by name never mix two source columns.
func TestFolderKeyColumnsKeepTheirWrittenNameAcrossVersions(t *testing.T) {
	c := NewCatalog(Options{})
	md := stringTable
	written := func(v *Version) map[string]string {
		out := map[string]string{}
		for i, col := range v.Columns {
			out[col.Name] = v.FieldName(i)
		}
		return out
	}
	for i, cols := range [][]string{{"ID", "DT", "X_"}, {"ID", "DT"}, {"HR", "ID", "DT", "schema_VERSION", "DTX"}} {
		ev, err := c.ApplyMetadata(md(cols...), fmt.Sprintf("p%d", i), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		got := written(ev.Version)
		if got["DT"] != "DT_" || got["ID"] != "ID" {
			t.Errorf("version %d (%v): written as %v", ev.Version.Number, cols, got)
		}
		if i == 2 && (got["HR"] != "HR_" || got["schema_VERSION"] != "schema_VERSION_" || got["DTX"] != "DTX") {
			t.Errorf("version %d: written as %v", ev.Version.Number, got)
		}
	}
	// A table that also has a column of the written name is refused: DT
	// under its own name would let Dt_ mean another column in a version
	// without DT. A checkpoint written before columns were renamed may
	// hold such a table: it is restored, DT under its own name, shadowed.
	if _, err := c.ApplyMetadata(md("ID", "DT", "Dt_"), "p9", time.Time{}); err == nil {
		t.Error("a table with DT and Dt_ was accepted")
	} else if re, ok := cdc.AsReject(err); !ok || re.Reason != cdc.ReasonBadMetadata {
		t.Errorf("DT and Dt_: %v, want bad_metadata", err)
	}
	restored := restoreAs(t, c, md("ID", "DT", "Dt_"))
	if v := restored.Current("S.T"); written(v)["DT"] != "DT" || written(v)["Dt_"] != "Dt_" {
		t.Errorf("restored: written as %v", written(v))
	}
	if _, err := restored.ApplyMetadata(md("ID", "DT", "Dt_", "X"), "p10", time.Time{}); err == nil {
		t.Error("after a restore, new metadata with DT and Dt_ was accepted")
	}
}

// TestQlikIntegerWideningOpensAVersion: a Qlik column whose integer type
// widens (INT2 to INT4) maps to int64 both times, but its range changed,
// so the metadata opens a new version; repeated unchanged, it does not.
func TestQlikIntegerWideningOpensAVersion(t *testing.T) {
	c := NewCatalog(Options{})
	md := func(native string) cdc.TableMetadata {
		return cdc.TableMetadata{Table: "S.Q", Format: cdc.FormatQlik, Columns: []cdc.Column{{Name: "N", Type: "number", Nullable: true, NativeType: native}}}
	}
	var numbers []int
	for i, native := range []string{"INT2", "INT2", "INT4"} {
		if _, err := c.ApplyMetadata(md(native), fmt.Sprintf("p%d", i), time.Time{}); err != nil {
			t.Fatal(err)
		}
		numbers = append(numbers, c.Current("S.Q").Number)
	}
	if fmt.Sprint(numbers) != "[1 1 2]" {
		t.Errorf("versions after INT2, INT2, INT4: %v, want [1 1 2]", numbers)
	}
	if r := c.Current("S.Q").Columns[0].Range; r.Max != math.MaxInt32 {
		t.Errorf("range after INT4: %+v", r)
	}
}

// TestFineTimestampStaysATimestampWhereItWasOne: a DATETIME with more
// fractional digits than a microsecond is text in a new table, but a
// column that an earlier version of the exporter made a timestamp (its
// metadata rendered plain DATETIME) stays one when the metadata comes
// again with its scale: as text, Iceberg would replace the column and its
// earlier rows would read as null. A new column of that type is text.
func TestFineTimestampStaysATimestampWhereItWasOne(t *testing.T) {
	c := NewCatalog(Options{})
	md := func(cols ...string) cdc.TableMetadata {
		m := cdc.TableMetadata{Table: "S.Q", Format: cdc.FormatQlik}
		for i := 0; i < len(cols); i += 2 {
			m.Columns = append(m.Columns, cdc.Column{Name: cols[i], Type: "string", Nullable: true, NativeType: cols[i+1]})
		}
		return m
	}
	kinds := func() string {
		var out []string
		for _, col := range c.Current("S.Q").Columns {
			out = append(out, col.Name+"="+col.Type.String())
		}
		return strings.Join(out, " ")
	}
	if _, err := c.ApplyMetadata(md("OLD", "DATETIME"), "p1", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ApplyMetadata(md("OLD", "DATETIME(7)", "NEW", "DATETIME(7)"), "p2", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if got := kinds(); got != "OLD=timestamp NEW=string" {
		t.Errorf("columns after the metadata came with scale 7: %s, want OLD a timestamp still and NEW text", got)
	}
	fresh := NewCatalog(Options{})
	if _, err := fresh.ApplyMetadata(md("OLD", "DATETIME(7)"), "p1", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if col := fresh.Current("S.Q").Columns[0]; col.Type.Kind != KindString {
		t.Errorf("a new table's DATETIME(7): %v, want text", col.Type)
	}
}

// TestQlikBinaryHintStaysHex: a Qlik column hinted binary (an inferred
// table's, or any) is read as Qlik writes binary, in hexadecimal; a
// GoldenGate one as base64.
func TestQlikBinaryHintStaysHex(t *testing.T) {
	c := NewCatalog(Options{Hints: map[string]Type{"S.Q:B": {Kind: KindBinary}, "S.G:B": {Kind: KindBinary}}})
	for table, format := range map[string]cdc.Format{"S.Q": cdc.FormatQlik, "S.G": cdc.FormatGoldenGate} {
		md := cdc.TableMetadata{Table: table, Format: format, Columns: []cdc.Column{{Name: "B", Type: "string", Nullable: true}}}
		if _, err := c.ApplyMetadata(md, "p1", time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	if col := c.Current("S.Q").Columns[0]; col.Type.Kind != KindBinary || !col.Range.Hex {
		t.Errorf("Qlik column hinted binary: %+v, want binary read as hex", col)
	}
	if col := c.Current("S.G").Columns[0]; col.Type.Kind != KindBinary || col.Range.Hex {
		t.Errorf("GoldenGate column hinted binary: %+v, want binary read as base64", col)
	}
}

// TestColumnsThatDifferOnlyInCaseAreRefused: DuckDB and Spark match column
// names case-insensitively, so of columns A and a they would read one for
// the other (and, across versions, a's values under A). Such metadata is
// bad_metadata; a checkpoint's catalog holding such a table still
// restores.
func TestColumnsThatDifferOnlyInCaseAreRefused(t *testing.T) {
	md := stringTable
	c := NewCatalog(Options{})
	if _, err := c.ApplyMetadata(md("ID", "A"), "p1", time.Time{}); err != nil {
		t.Fatal(err)
	}
	for _, cols := range [][]string{{"ID", "A", "a"}, {"Name", "ID", "NAME"}, {"ID", "id"}} {
		_, err := c.ApplyMetadata(md(cols...), "p2", time.Time{})
		if re, ok := cdc.AsReject(err); !ok || re.Reason != cdc.ReasonBadMetadata || !strings.Contains(err.Error(), "differ only in case") {
			t.Errorf("%v: %v, want bad_metadata", cols, err)
		}
	}
	if v := c.Current("S.T"); v.Number != 1 {
		t.Errorf("a refused metadata changed the version to %d", v.Number)
	}
	restored := restoreAs(t, c, md("ID", "A", "a"))
	if v := restored.Current("S.T"); len(v.Columns) != 3 {
		t.Errorf("restored %d columns, want 3", len(v.Columns))
	}
}

// stringTable is metadata of table S.T with nullable string columns.
func stringTable(names ...string) cdc.TableMetadata {
	m := cdc.TableMetadata{Table: "S.T"}
	for _, n := range names {
		m.Columns = append(m.Columns, cdc.Column{Name: n, Type: "string", Nullable: true})
	}
	return m
}

// restoreAs restores c's snapshot with every table's metadata replaced by
// md, as a checkpoint written by an older version could hold it.
func restoreAs(t *testing.T, c *Catalog, md cdc.TableMetadata) *Catalog {
	t.Helper()
	snap := c.Snapshot()
	for i := range snap.Tables {
		snap.Tables[i].Metadata = md
	}
	restored, err := RestoreCatalog(Options{}, snap)
	if err != nil {
		t.Fatalf("restoring a catalog with columns %v: %v", md.Columns, err)
	}
	return restored
}

// A DDL type refines its column while the metadata agrees on the
// primitive; metadata that says otherwise (after a change the parser did
// not understand, or none at all) is newer, and its type is used.
func TestStaleDDLTypeGivesWayToMetadata(t *testing.T) {
	c := NewCatalog(Options{})
	mustDDL(t, c, "SALES.ORDERS", "CREATE TABLE SALES.ORDERS (ID NUMBER(10) NOT NULL, CODE NUMBER(10))", "P0")
	md := cdc.TableMetadata{Table: "SALES.ORDERS", Columns: []cdc.Column{
		{Name: "ID", Type: "number", Key: true}, {Name: "CODE", Type: "number", Nullable: true}}}
	mustMetadata(t, c, md, "P1")
	checkColumns(t, c.Current("SALES.ORDERS"), []colWant{{"ID", Type{Kind: KindInt64}, false}, {"CODE", Type{Kind: KindInt64}, true}})
	md.Columns[1].Type = "string"
	mustMetadata(t, c, md, "P2")
	checkColumns(t, c.Current("SALES.ORDERS"), []colWant{{"ID", Type{Kind: KindInt64}, false}, {"CODE", Type{Kind: KindString}, true}})
}

// The JSON Schema record that names a table wins over a newer one whose id
// only ends with its name (another table, in another container).
func TestJSONSchemaOfTheTableWinsOverALongerName(t *testing.T) {
	c := NewCatalog(Options{})
	schema := func(id, noteType string) []byte {
		return []byte(`{"$schema":"http://json-schema.org/draft-04/schema#","id":"` + id + `","type":"object","properties":{"after":{"type":"object","properties":{"ID":{"type":"integer"},"NOTE":{"type":["` + noteType + `","null"],"format":"date-time"}}}}}`)
	}
	if _, err := c.ApplySchemaRecord("SALES.ORDERS", schema("SALES.ORDERS", "string")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ApplySchemaRecord("PDB1.SALES.ORDERS", schema("PDB1.SALES.ORDERS", "boolean")); err != nil {
		t.Fatal(err)
	}
	mustMetadata(t, c, cdc.TableMetadata{Table: "SALES.ORDERS", Columns: []cdc.Column{
		{Name: "ID", Type: "number", Key: true}, {Name: "NOTE", Type: "string", Nullable: true}}}, "P1")
	checkColumns(t, c.Current("SALES.ORDERS"), []colWant{{"ID", Type{Kind: KindInt64}, false}, {"NOTE", Type{Kind: KindTimestamp}, true}})
}

// TestEmptyColumnNameIsRefused: a column with an empty name, from
// metadata or from a DDL applied to it, is refused as bad_metadata and
// opens no version (its file would have a nameless field, in the row and
// in the before image, that DuckDB refuses).
func TestEmptyColumnNameIsRefused(t *testing.T) {
	for _, opts := range []Options{{}, {BeforeImage: true}} {
		c := NewCatalog(opts)
		md := ordersMD()
		md.Columns = append(md.Columns, cdc.Column{Name: "", Type: "string"})
		_, err := c.ApplyMetadata(md, "p1", t0)
		if re, ok := cdc.AsReject(err); !ok || re.Reason != cdc.ReasonBadMetadata || !strings.Contains(err.Error(), "empty name") {
			t.Errorf("before image %v: error %v, want bad_metadata naming the empty name", opts.BeforeImage, err)
		}
		if c.Current("SALES.ORDERS") != nil {
			t.Errorf("before image %v: a version was opened", opts.BeforeImage)
		}
	}
	// Oracle allows no empty quoted name: the statement is not taken for
	// an ADD, and no version gets the column.
	c := NewCatalog(Options{})
	mustMetadata(t, c, ordersMD(), "p1")
	if _, err := c.ApplyDDL("SALES.ORDERS", `ALTER TABLE SALES.ORDERS ADD ("" VARCHAR2(10))`, "p2", t0); err == nil && hasColumn(c.Current("SALES.ORDERS"), "") {
		t.Error("a DDL gave the table a column with an empty name")
	}
}

func hasColumn(v *Version, name string) bool {
	if v == nil {
		return false
	}
	for _, col := range v.Columns {
		if col.Name == name {
			return true
		}
	}
	return false
}

// TestDDLWithoutMetadataIsListed: a DDL for a table with no metadata opens
// no version; the table is listed (for the run's warning) until its
// metadata comes.
func TestDDLWithoutMetadataIsListed(t *testing.T) {
	c := NewCatalog(Options{})
	if got := c.DDLWithoutMetadata(); len(got) != 0 {
		t.Fatalf("empty catalog lists %q", got)
	}
	for _, table := range []string{"SALES.ORDERS", "S.NEVER", "S.ALSO_NEVER"} {
		if ev, err := c.ApplyDDL(table, "ALTER TABLE "+table+" ADD X NUMBER(10)", "p1", t0); ev != nil || err != nil {
			t.Fatalf("DDL for %s before its metadata: %+v, %v; want no event", table, ev, err)
		}
	}
	mustMetadata(t, c, ordersMD(), "p2")
	if got := c.DDLWithoutMetadata(); !slices.Equal(got, []string{"S.ALSO_NEVER", "S.NEVER"}) {
		t.Errorf("DDLWithoutMetadata() = %q, want the two tables without metadata, sorted", got)
	}
}

// TestReplayedDDLIsTheVersionItOpened: the DDL record that opened the
// version in force, read again (a replay from a checkpoint rebuilt from
// the lake, whose catalog is already at the newest version), opens no
// other version; the same statement at another position is a change of
// its own.
func TestReplayedDDLIsTheVersionItOpened(t *testing.T) {
	c := NewCatalog(Options{})
	mustMetadata(t, c, stringTable("ID", "A"), "p1")
	const stmt = "ALTER TABLE S.T ADD (B VARCHAR2(10))"
	if ev := mustDDL(t, c, "S.T", stmt, "p3"); ev == nil || ev.Version.Number != 2 {
		t.Fatalf("the DDL: %+v, want version 2 opened", ev)
	}
	mustMetadata(t, c, stringTable("ID", "A", "B"), "p4") // its refresh
	if ev := mustDDL(t, c, "S.T", stmt, "p3"); ev != nil || c.Current("S.T").Number != 2 {
		t.Errorf("the same DDL record again: %+v, version %d; want nothing new", ev, c.Current("S.T").Number)
	}
	if ev := mustDDL(t, c, "S.T", stmt, "p9"); ev == nil || ev.Version.Number != 3 {
		t.Errorf("the statement at another position: %+v, want version 3", ev)
	}
}
