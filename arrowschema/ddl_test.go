package arrowschema

import (
	"reflect"
	"strings"
	"testing"
)

func nb(b bool) *bool { return &b }

func add(name, typ string, nullable *bool) Alteration {
	return Alteration{Kind: AlterAdd, Column: ColumnDef{Name: name, SQLType: typ, Nullable: nullable}}
}

func drop(name string) Alteration {
	return Alteration{Kind: AlterDrop, Column: ColumnDef{Name: name}}
}

func modify(name, typ string, nullable *bool) Alteration {
	return Alteration{Kind: AlterModify, Column: ColumnDef{Name: name, SQLType: typ, Nullable: nullable}}
}

func rename(from, to string) Alteration {
	return Alteration{Kind: AlterRename, Column: ColumnDef{Name: from}, NewName: to}
}

func TestParseDDLAlter(t *testing.T) {
	cases := []struct {
		stmt string
		want []Alteration
	}{
		{"ALTER TABLE SALES.ORDERS ADD CUSTOMER_TIER VARCHAR2(20)",
			[]Alteration{add("CUSTOMER_TIER", "VARCHAR2(20)", nil)}},
		{"alter table sales.orders add customer_tier varchar2(20);",
			[]Alteration{add("CUSTOMER_TIER", "VARCHAR2(20)", nil)}},
		{"ALTER TABLE T ADD COLUMN AMOUNT NUMBER(12,2) NOT NULL",
			[]Alteration{add("AMOUNT", "NUMBER(12,2)", nb(false))}},
		{"ALTER TABLE T ADD (A NUMBER(10), B VARCHAR2(30 BYTE) NOT NULL, C DATE DEFAULT SYSDATE NULL)",
			[]Alteration{add("A", "NUMBER(10)", nil), add("B", "VARCHAR2(30 BYTE)", nb(false)), add("C", "DATE", nb(true))}},
		{"ALTER TABLE T ADD TS TIMESTAMP(6) WITH TIME ZONE DEFAULT '2020-01-01' NOT NULL",
			[]Alteration{add("TS", "TIMESTAMP(6) WITH TIME ZONE", nb(false))}},
		{"ALTER TABLE T DROP COLUMN X",
			[]Alteration{drop("X")}},
		{"ALTER TABLE T DROP COLUMN X CASCADE CONSTRAINTS",
			[]Alteration{drop("X")}},
		{"ALTER TABLE T DROP (A, B)",
			[]Alteration{drop("A"), drop("B")}},
		{"ALTER TABLE T RENAME COLUMN OLD_NAME TO NEW_NAME",
			[]Alteration{rename("OLD_NAME", "NEW_NAME")}},
		{"ALTER TABLE T MODIFY (AMOUNT NUMBER(14,2))",
			[]Alteration{modify("AMOUNT", "NUMBER(14,2)", nil)}},
		{"ALTER TABLE T MODIFY AMOUNT NUMBER(14,2) NULL",
			[]Alteration{modify("AMOUNT", "NUMBER(14,2)", nb(true))}},
		{"ALTER TABLE T MODIFY (A NOT NULL, B VARCHAR2(50))",
			[]Alteration{modify("A", "", nb(false)), modify("B", "VARCHAR2(50)", nil)}},
		{"ALTER TABLE T MODIFY A NOT NULL",
			[]Alteration{modify("A", "", nb(false))}},
		{"ALTER TABLE T ADD A NUMBER DROP COLUMN B",
			[]Alteration{add("A", "NUMBER", nil), drop("B")}},
		{`ALTER TABLE "Sales"."Orders" ADD "MixedCase" VARCHAR2(10)`,
			[]Alteration{add("MixedCase", "VARCHAR2(10)", nil)}},
		{`ALTER TABLE T RENAME COLUMN "a" TO b`,
			[]Alteration{rename("a", "B")}},
		{`ALTER TABLE T DROP ("x", y)`,
			[]Alteration{drop("x"), drop("Y")}},
		{"ALTER TABLE T ADD TOTAL NUMBER(*,2)",
			[]Alteration{add("TOTAL", "NUMBER(*,2)", nil)}},
		// Non-ASCII identifiers: the UTF-8 bytes 0xC3 0xA0 (à) must not be
		// taken for white space.
		{"ALTER TABLE T ADD voilà VARCHAR2(5)",
			[]Alteration{add("VOILÀ", "VARCHAR2(5)", nil)}},
		{`ALTER TABLE T ADD "voilà" VARCHAR2(5)`,
			[]Alteration{add("voilà", "VARCHAR2(5)", nil)}},
		{"ALTER TABLE T ADD (A NUMBER(5)) MODIFY (B NOT NULL) DROP (C)",
			[]Alteration{add("A", "NUMBER(5)", nil), modify("B", "", nb(false)), drop("C")}},
		{"ALTER TABLE T ADD A NUMBER NOT NULL RENAME COLUMN B TO C",
			[]Alteration{add("A", "NUMBER", nb(false)), rename("B", "C")}},
		{"ALTER\tTABLE\nT\r\nADD  X   NUMBER ( 5 , 1 )",
			[]Alteration{add("X", "NUMBER(5,1)", nil)}},
	}
	for _, c := range cases {
		got := ParseDDL(c.stmt)
		if !got.Understood {
			t.Errorf("%q: not understood", c.stmt)
			continue
		}
		if !got.ChangesColumns() {
			t.Errorf("%q: ChangesColumns() = false", c.stmt)
		}
		if len(got.Create) != 0 {
			t.Errorf("%q: Create = %+v", c.stmt, got.Create)
		}
		if !reflect.DeepEqual(got.Alters, c.want) {
			t.Errorf("%q:\n got %s\nwant %s", c.stmt, fmtAlters(got.Alters), fmtAlters(c.want))
		}
	}
}

func fmtAlters(as []Alteration) string {
	s := ""
	for _, a := range as {
		n := "nil"
		if a.Column.Nullable != nil {
			n = map[bool]string{true: "true", false: "false"}[*a.Column.Nullable]
		}
		s += "{" + [...]string{"?", "add", "drop", "rename", "modify"}[a.Kind] + " " + a.Column.Name + " " + a.Column.SQLType + " null=" + n + " new=" + a.NewName + "} "
	}
	return s
}

func TestParseDDLCreateTable(t *testing.T) {
	stmt := `CREATE TABLE SALES.ORDERS (
	  ORDER_ID NUMBER(10) NOT NULL,
	  "Status" VARCHAR2(20) DEFAULT 'NEW',
	  TOTAL_AMOUNT NUMBER(12,2),
	  CREATED_AT TIMESTAMP(6) WITH LOCAL TIME ZONE,
	  CONSTRAINT PK_ORDERS PRIMARY KEY (ORDER_ID),
	  CONSTRAINT CK CHECK (TOTAL_AMOUNT >= 0),
	  FOREIGN KEY (ORDER_ID) REFERENCES X(Y)
	) TABLESPACE USERS`
	got := ParseDDL(stmt)
	if !got.Understood || !got.ChangesColumns() {
		t.Fatalf("not understood: %+v", got)
	}
	want := []ColumnDef{
		{Name: "ORDER_ID", SQLType: "NUMBER(10)", Nullable: nb(false)},
		{Name: "Status", SQLType: "VARCHAR2(20)"},
		{Name: "TOTAL_AMOUNT", SQLType: "NUMBER(12,2)"},
		{Name: "CREATED_AT", SQLType: "TIMESTAMP(6) WITH LOCAL TIME ZONE"},
	}
	if !reflect.DeepEqual(got.Create, want) {
		t.Errorf("create:\n got %+v\nwant %+v", got.Create, want)
	}
	if len(got.Alters) != 0 {
		t.Errorf("alters %+v", got.Alters)
	}

	g := ParseDDL("CREATE GLOBAL TEMPORARY TABLE T (A NUMBER PRIMARY KEY, B CHAR(1))")
	if !g.Understood || len(g.Create) != 2 || g.Create[0].SQLType != "NUMBER" || g.Create[1].Name != "B" {
		t.Errorf("global temporary: %+v", g)
	}
}

// Comments and q-quoted literals are read past: a quote or parenthesis in
// them neither ends the statement's text nor unbalances it.
func TestParseDDLCommentsAndQQuotes(t *testing.T) {
	for _, c := range []struct {
		stmt string
		want []ColumnDef
	}{
		{"CREATE TABLE S.T (A NUMBER(10), B VARCHAR2(20)) -- owner's copy",
			[]ColumnDef{{Name: "A", SQLType: "NUMBER(10)"}, {Name: "B", SQLType: "VARCHAR2(20)"}}},
		{"CREATE TABLE S.T (A NUMBER(10), /* see note (1 */ B VARCHAR2(20))",
			[]ColumnDef{{Name: "A", SQLType: "NUMBER(10)"}, {Name: "B", SQLType: "VARCHAR2(20)"}}},
		{"CREATE TABLE S.T (\n  A NUMBER(10), -- the key (it's unique)\n  B DATE\n)",
			[]ColumnDef{{Name: "A", SQLType: "NUMBER(10)"}, {Name: "B", SQLType: "DATE"}}},
		{"CREATE TABLE S.T (A VARCHAR2(10) DEFAULT q'[it's (x]', B NUMBER DEFAULT nq'{)}')",
			[]ColumnDef{{Name: "A", SQLType: "VARCHAR2(10)"}, {Name: "B", SQLType: "NUMBER"}}},
	} {
		got := ParseDDL(c.stmt)
		if !got.Understood || !reflect.DeepEqual(got.Create, c.want) {
			t.Errorf("%q: understood %v, columns %+v; want %+v", c.stmt, got.Understood, got.Create, c.want)
		}
	}
	a := ParseDDL("ALTER TABLE S.T ADD C VARCHAR2(10) DEFAULT q'[it's]'")
	if !a.Understood || !reflect.DeepEqual(a.Alters, []Alteration{add("C", "VARCHAR2(10)", nil)}) {
		t.Errorf("q-quoted default: %+v", a)
	}
	for _, stmt := range []string{"CREATE TABLE S.T (A NUMBER(10)) /* cut off", "ALTER TABLE S.T ADD C VARCHAR2(10) DEFAULT q'[cut"} {
		if ParseDDL(stmt).Understood {
			t.Errorf("%q: understood", stmt)
		}
	}
}

func TestParseDDLWithoutColumnChange(t *testing.T) {
	for _, stmt := range []string{
		"CREATE INDEX SALES.IX_ORDERS ON SALES.ORDERS (STATUS)",
		"CREATE UNIQUE INDEX IX ON T (A)",
		"CREATE BITMAP INDEX IX ON T (A)",
		"DROP INDEX IX",
		"ALTER INDEX IX REBUILD",
		"ALTER TABLE SALES.ORDERS ADD CONSTRAINT PK PRIMARY KEY (ORDER_ID)",
		"ALTER TABLE T ADD PRIMARY KEY (A)",
		"ALTER TABLE T ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS",
		"ALTER TABLE T DROP CONSTRAINT PK",
		"ALTER TABLE T DROP PRIMARY KEY",
		"ALTER TABLE T MODIFY CONSTRAINT PK DISABLE",
		"ALTER TABLE T RENAME CONSTRAINT A TO B",
		"GRANT SELECT ON SALES.ORDERS TO REPORTING",
		"REVOKE SELECT ON SALES.ORDERS FROM REPORTING",
		"COMMENT ON TABLE SALES.ORDERS IS 'orders'",
		"COMMENT ON COLUMN SALES.ORDERS.STATUS IS 'the status'",
		"TRUNCATE TABLE SALES.ORDERS",
		"ANALYZE TABLE T COMPUTE STATISTICS",
		"grant select on t to u",
		"ALTER TABLE T MOVE TABLESPACE X",
		"ALTER TABLE T MOVE ONLINE",
		"ALTER TABLE S.T ENABLE ROW MOVEMENT",
		"ALTER TABLE T DISABLE ROW MOVEMENT",
		"ALTER TABLE T SHRINK SPACE CASCADE",
		"ALTER TABLE T NOLOGGING",
		"ALTER TABLE T PARALLEL 4",
		"ALTER TABLE T DISABLE ALL TRIGGERS",
		"ALTER TABLE T ENABLE CONSTRAINT PK",
		"ALTER TABLE T READ ONLY",
		"ALTER TABLE T ADD PARTITION P2 VALUES LESS THAN (100)",
		"ALTER TABLE T DROP PARTITION P1",
		"ALTER TABLE T TRUNCATE PARTITION P1",
		"ALTER TABLE T SPLIT PARTITION P1 AT (50) INTO (PARTITION P1A, PARTITION P1B)",
		"ALTER TABLE T MODIFY PARTITION P1 NOLOGGING",
		"alter table t enable row movement",
	} {
		got := ParseDDL(stmt)
		if !got.Understood {
			t.Errorf("%q: not understood", stmt)
		}
		if got.ChangesColumns() {
			t.Errorf("%q: ChangesColumns() = true (%+v)", stmt, got)
		}
	}
}

func TestParseDDLNotUnderstood(t *testing.T) {
	for _, stmt := range []string{
		"",
		"garbage",
		"!!! @@@",
		"ALTER TABLE SALES.ORDERS RENAME TO ORDERS_OLD",
		"ALTER TABLE T",
		"ALTER TABLE T ADD",
		"ALTER TABLE T ADD (A NUMBER, )",
		"ALTER TABLE T ADD (A)",
		"ALTER TABLE T DROP COLUMN",
		"ALTER TABLE T DROP (A B)",
		"ALTER TABLE T DROP UNUSED COLUMNS",
		"ALTER TABLE T RENAME COLUMN A B",
		"ALTER TABLE T ROW ARCHIVAL",
		"ALTER TABLE T NO ROW ARCHIVAL",
		"ALTER TABLE T SET UNUSED (A)",
		"ALTER TABLE T SET UNUSED COLUMN A",
		"ALTER TABLE T MOVE LOB (A) STORE AS (TABLESPACE X) COLUMN",
		`ALTER TABLE T "ENABLE" ROW MOVEMENT`,
		"CREATE TABLE T AS SELECT * FROM U",
		"CREATE TABLE T (A NUMBER",
		"CREATE TABLE T (A)",
		"CREATE VIEW V AS SELECT 1 FROM DUAL",
		"DROP TABLE T",
		`ALTER TABLE "unterminated`,
		// Cut off at maxDDLTextSize: an open parenthesis or quote.
		"ALTER TABLE SALES.ORDERS ADD AMOUNT NUMBER(12",
		"ALTER TABLE SALES.ORDERS ADD (A NUMBER(10), B VARCHAR2(20)",
		"ALTER TABLE T ADD A VARCHAR2(20) DEFAULT 'open",
		"CREATE TABLE T (A NUMBER(10), B DATE",
		"ALTER TABLE T ADD A NUMBER(10))",
	} {
		got := ParseDDL(stmt)
		if got.Understood {
			t.Errorf("%q: understood as %+v", stmt, got)
		}
		if got.ChangesColumns() {
			t.Errorf("%q: not understood but reports column changes", stmt)
		}
	}
}

func TestSQLTypeOf(t *testing.T) {
	cases := []struct {
		in   string
		want Type
		prim string
	}{
		{"NUMBER(10)", Type{Kind: KindInt64}, "number"},
		{"NUMBER(18)", Type{Kind: KindInt64}, "number"},
		{"NUMBER(18,0)", Type{Kind: KindInt64}, "number"},
		{"NUMBER(19)", Type{Kind: KindDecimal, Precision: 19}, "number"},
		{"NUMBER(20)", Type{Kind: KindDecimal, Precision: 20, Scale: 0}, "number"},
		{"NUMBER(12,2)", Type{Kind: KindDecimal, Precision: 12, Scale: 2}, "number"},
		{"NUMBER(38,10)", Type{Kind: KindDecimal, Precision: 38, Scale: 10}, "number"},
		{"NUMBER(*,2)", Type{Kind: KindDecimal, Precision: 38, Scale: 2}, "number"},
		{"DECIMAL(9,3)", Type{Kind: KindDecimal, Precision: 9, Scale: 3}, "number"},
		{"INTEGER", Type{Kind: KindDecimal, Precision: 38}, "number"},
		{"VARCHAR2(20)", Type{Kind: KindString}, "string"},
		{"VARCHAR2(20 CHAR)", Type{Kind: KindString}, "string"},
		{"NVARCHAR2(20)", Type{Kind: KindString}, "string"},
		{"CHAR(1)", Type{Kind: KindString}, "string"},
		{"CLOB", Type{Kind: KindString}, "string"},
		{"DATE", Type{Kind: KindTimestamp}, "string"},
		{"TIMESTAMP", Type{Kind: KindTimestamp}, "string"},
		{"TIMESTAMP(6)", Type{Kind: KindTimestamp}, "string"},
		{"TIMESTAMP(6) WITH TIME ZONE", Type{Kind: KindTimestamp}, "string"},
		// more digits than microseconds: the exact text, not values refused
		{"TIMESTAMP(9) WITH LOCAL TIME ZONE", Type{Kind: KindString}, "string"},
		{"TIMESTAMP(7)", Type{Kind: KindString}, "string"},
		{"TIMESTAMP(0)", Type{Kind: KindTimestamp}, "string"},
		{"FLOAT", Type{Kind: KindFloat64}, "number"},
		{"FLOAT(126)", Type{Kind: KindFloat64}, "number"},
		{"BINARY_DOUBLE", Type{Kind: KindFloat64}, "number"},
		{"BOOLEAN", Type{Kind: KindBoolean}, "boolean"},
		// lower case (a caller that did not go through the tokenizer)
		{"number(12,2)", Type{Kind: KindDecimal, Precision: 12, Scale: 2}, "number"},
		{"varchar2(5)", Type{Kind: KindString}, "string"},
	}
	for _, c := range cases {
		got, prim, ok := SQLTypeOf(c.in)
		if !ok {
			t.Errorf("SQLTypeOf(%q) not ok", c.in)
			continue
		}
		if got != c.want || prim != c.prim {
			t.Errorf("SQLTypeOf(%q) = %v, %q; want %v, %q", c.in, got, prim, c.want, c.prim)
		}
	}
}

func TestSQLTypeOfNotPrecise(t *testing.T) {
	cases := map[string]string{
		"NUMBER":        "number", // bare NUMBER says no more than the metadata
		"NUMBER(*)":     "number", // Oracle's NUMBER(*) is a bare NUMBER; only (*,s) fixes a scale
		"NUMBER(40)":    "number", // wider than Decimal128
		"NUMBER(10,-2)": "number",
		"NUMBER(x)":     "number",
		"RAW(16)":       "string",
		"BLOB":          "string",
		"XMLTYPE":       "string",
		"":              "string",
	}
	for in, prim := range cases {
		got, p, ok := SQLTypeOf(in)
		if ok {
			t.Errorf("SQLTypeOf(%q) = %v, ok; want not ok", in, got)
		}
		if p != prim {
			t.Errorf("SQLTypeOf(%q) primitive %q, want %q", in, p, prim)
		}
	}
}

// The types ParseDDL writes down are the ones SQLTypeOf reads.
func TestParseDDLFeedsSQLTypeOf(t *testing.T) {
	p := ParseDDL("ALTER TABLE T ADD (A number(12, 2), B timestamp ( 6 ) with time zone, C varchar2(10 byte))")
	if len(p.Alters) != 3 {
		t.Fatalf("%+v", p)
	}
	want := []Type{{Kind: KindDecimal, Precision: 12, Scale: 2}, {Kind: KindTimestamp}, {Kind: KindString}}
	for i, a := range p.Alters {
		got, _, ok := SQLTypeOf(a.Column.SQLType)
		if !ok || got != want[i] {
			t.Errorf("%s %q → %v ok=%v, want %v", a.Column.Name, a.Column.SQLType, got, ok, want[i])
		}
	}
}

// FuzzParseDDL: any text parses without a panic; what is not understood
// changes no columns; a line comment appended on a line of its own changes
// nothing.
func FuzzParseDDL(f *testing.F) {
	for _, s := range []string{
		"ALTER TABLE SALES.ORDERS ADD CUSTOMER_TIER VARCHAR2(20)",
		"CREATE TABLE S.T (A NUMBER(10) NOT NULL, B VARCHAR2(20) DEFAULT 'x', CONSTRAINT P PRIMARY KEY (A))",
		"ALTER TABLE T RENAME COLUMN A TO B", "ALTER TABLE T DROP (A, B)", "ALTER TABLE T MODIFY (A NUMBER(12,2) NULL)",
		"CREATE TABLE S.T (A VARCHAR2(10) DEFAULT q'[it's]') /* c */ -- d",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, stmt string) {
		got := ParseDDL(stmt)
		if !got.Understood && got.ChangesColumns() {
			t.Fatalf("%q: not understood but changes columns: %+v", stmt, got)
		}
		if strings.Contains(stmt, "/*") || strings.Contains(stmt, "--") || strings.ContainsAny(stmt, "'\"") {
			return // the appended comment could close one of these or be quoted by it
		}
		if again := ParseDDL(stmt + "\n-- a comment (it's here"); !reflect.DeepEqual(again, got) {
			t.Fatalf("%q: a trailing comment changed the parse: %+v, then %+v", stmt, got, again)
		}
	})
}
