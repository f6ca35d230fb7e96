package cdc

import (
	"fmt"
	"strings"
	"testing"
)

// Field names are remembered by position per table; records whose order
// or names change, and tables that alternate, must still get their own
// names in their own order.
func TestImageFieldNamesFollowEachRecord(t *testing.T) {
	d, err := NewGoldenGate(GoldenGateNames{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		table, after string
		want         string
	}{
		{"S.T1", `{"A":1,"B":2}`, "A,B"},
		{"S.T1", `{"B":1,"A":2}`, "B,A"},
		{"S.T2", `{"A":1,"C":2}`, "A,C"},
		{"S.T1", `{"A":1,"B":2,"D":3}`, "A,B,D"},
		{"S.T1", `{"A":1}`, "A"},
		{"S.T2", `{"A":1,"C":2}`, "A,C"},
		{"S.T1", `{"A\u0042":1,"B":2}`, "AB,B"},
		{"S.T1", `{"A":1,"A":2}`, "A,A"},
	} {
		var r Record
		line := fmt.Sprintf(`{"qual_table":%q,"op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","pos":"1","after":%s}`, c.table, c.after)
		if err := d.Decode([]byte(line), &r); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		var names []string
		for _, f := range r.After.Fields {
			names = append(names, f.Name)
		}
		if got := strings.Join(names, ","); got != c.want {
			t.Errorf("%s %s: fields %s, want %s", c.table, c.after, got, c.want)
		}
	}
}

// A table's name and its remembered field names are found by one lookup
// of qual_table; past maxKeyTables tables the memory starts over, and a
// table named with an escape takes the other path. Each record must still
// get its own table and fields.
func TestTableNamesPastTheRememberedTables(t *testing.T) {
	d, err := NewGoldenGate(GoldenGateNames{})
	if err != nil {
		t.Fatal(err)
	}
	decode := func(qual, after string) Record {
		t.Helper()
		var r Record
		line := fmt.Sprintf(`{"qual_table":"%s","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","pos":"1","after":%s}`, qual, after)
		if err := d.Decode([]byte(line), &r); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		return r
	}
	check := func(r Record, table, fields string) {
		t.Helper()
		var names []string
		for _, f := range r.After.Fields {
			names = append(names, f.Name)
		}
		if r.Table != table || strings.Join(names, ",") != fields {
			t.Errorf("got table %q fields %s, want %q %s", r.Table, strings.Join(names, ","), table, fields)
		}
	}
	for i := range maxKeyTables + 5 {
		name := fmt.Sprintf("S.T%d", i)
		check(decode(name, fmt.Sprintf(`{"K%d":1,"V":2}`, i)), name, fmt.Sprintf("K%d,V", i))
	}
	check(decode("S.T0", `{"V":1,"K0":2}`), "S.T0", "V,K0")
	check(decode(`S.T\u0031`, `{"K1":1}`), "S.T1", "K1")
	check(decode("S.T1", `{"V":1}`), "S.T1", "V")
	check(decode("S.T0", `{"V":1,"K0":2}`), "S.T0", "V,K0")
}
