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
