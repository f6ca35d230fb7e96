//go:build cgo

package deploy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/duckq"
)

// TestDuckDBQueries runs every statement of duckdb/queries.sql, in order and
// unchanged, against a lake exported from testdata/ (GoldenGate and Qlik),
// from the folder that holds ./lake as the file says, and checks the
// current-state queries: deleted keys are gone, the latest image wins
// across schema versions, and a column a partial image did not carry keeps
// its earlier value.
func TestDuckDBQueries(t *testing.T) {
	root := repoRoot(t)
	statements := splitSQL(string(readFile(t, filepath.Join("duckdb", "queries.sql"))))

	// The GoldenGate sample, plus an UPDATE that changes a key (1002 becomes
	// 1004), which the sample lacks.
	dir := t.TempDir()
	gg := filepath.Join(dir, "goldengate.jsonl")
	sample := readFile(t, filepath.Join(root, "testdata", "goldengate", "sample.jsonl"))
	keyChange := `{"qual_table":"SALES.ORDERS","op_type":"UPDATE","op_ts":"2026-07-14T03:00:00.000000Z","xid":"key-change","pos":"G-9001",` +
		`"before":{"ORDER_ID":1002,"STATUS":"NEW","TOTAL_AMOUNT":null,"CREATED_AT":null,"CUSTOMER_TIER":null},` +
		`"after":{"ORDER_ID":1004,"STATUS":"NEW","TOTAL_AMOUNT":null,"CREATED_AT":null,"CUSTOMER_TIER":"SILVER"}}` + "\n"
	if err := os.WriteFile(gg, append(append([]byte{}, sample...), keyChange...), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runExporter(t, "run", "--once", "--log-format", "json", "--max-rejects", "0",
		"--source", "file:"+gg+","+filepath.Join(root, "testdata", "qlik", "sample.jsonl"),
		"--sink", "file://"+filepath.Join(dir, "lake"))
	if code != 0 {
		t.Fatalf("export of testdata: exit %d\n%s%s", code, stdout, stderr)
	}
	t.Chdir(dir) // queries.sql reads ./lake

	db := duckq.OpenTB(t)
	ctx := context.Background()
	conn, err := db.Conn(ctx) // SET VARIABLE holds for one connection
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	results := map[string][]map[string]any{}
	for i, st := range statements {
		rows, err := conn.QueryContext(ctx, st.sql)
		if err != nil {
			t.Fatalf("statement %d (%s):\n%s\n%v", i+1, st.name, st.sql, err)
		}
		cols, _ := rows.Columns()
		var out []map[string]any
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for j := range vals {
				ptrs[j] = &vals[j]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatalf("statement %d (%s): %v", i+1, st.name, err)
			}
			row := map[string]any{}
			for j, c := range cols {
				row[c] = vals[j]
			}
			out = append(out, row)
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("statement %d (%s): %v", i+1, st.name, err)
		}
		rows.Close()
		if st.name != "" {
			results[st.name] = out
			if len(out) == 0 {
				t.Errorf("%s: no rows", st.name)
			}
		}
	}

	str := func(v any) string {
		if v == nil {
			return "NULL"
		}
		return fmt.Sprint(v)
	}
	column := func(rows []map[string]any, col string) []string {
		var out []string
		for _, r := range rows {
			out = append(out, str(r[col]))
		}
		return out
	}
	byKey := func(rows []map[string]any, key string) map[string]map[string]any {
		out := map[string]map[string]any{}
		for _, r := range rows {
			out[str(r[key])] = r
		}
		return out
	}

	// SALES.ORDERS: 1001 inserted, updated, deleted (version 1); 1002
	// inserted (version 1), its key changed to 1004 (version 2); 1003
	// inserted and updated (version 2, with the added CUSTOMER_TIER).
	orders := results["orders_current"]
	if got := column(orders, "ORDER_ID"); !slices.Equal(got, []string{"1003", "1004"}) {
		t.Errorf("orders_current keys %v, want [1003 1004] (1001 was deleted, 1002 became 1004)", got)
	}
	if o := byKey(orders, "ORDER_ID")["1003"]; o == nil || str(o["STATUS"]) != "SHIPPED" || str(o["CUSTOMER_TIER"]) != "PLATINUM" || str(o["schema_version"]) != "2" {
		t.Errorf("orders_current 1003: %v, want the latest update (SHIPPED, PLATINUM, schema_version 2)", o)
	}
	if o := byKey(orders, "ORDER_ID")["1004"]; o == nil || str(o["CUSTOMER_TIER"]) != "SILVER" {
		t.Errorf("orders_current 1004: %v, want the key-changing update's image (SILVER)", o)
	}
	if got := column(results["orders_versions"], "schema_version"); !slices.Contains(got, "1") || !slices.Contains(got, "2") {
		t.Errorf("orders_versions: schema versions %v, want 1 and 2", got)
	}
	if got := column(results["orders_one_day"], "ORDER_ID"); !slices.Equal(got, []string{"1003", "1004"}) {
		t.Errorf("orders_one_day: %v", got)
	}

	// SALES.CUSTOMERS (Qlik): 2 deleted; 3's last update did not carry
	// NOTE (columnMask), which must keep the inserted "hello".
	customers := byKey(results["customers_current"], "ID")
	if got := column(results["customers_current"], "ID"); !slices.Equal(got, []string{"1", "3", "4"}) {
		t.Errorf("customers_current keys %v, want [1 3 4] (2 was deleted)", got)
	}
	if c := customers["3"]; c == nil || str(c["NAME"]) != "Edsger W." || str(c["NOTE"]) != "hello" || str(c["ACTIVE"]) != "false" {
		t.Errorf("customers_current 3: %v, want NAME Edsger W., ACTIVE false, NOTE hello (absent from the update, kept)", c)
	}
	if c := customers["4"]; c == nil || str(c["TIER"]) != "GOLD" {
		t.Errorf("customers_current 4: %v, want TIER GOLD (schema version 2)", c)
	}

	var tables []string
	for _, r := range results["schema_versions"] {
		tables = append(tables, str(r["table_folder"])+"/v"+str(r["schema_version"]))
	}
	if want := []string{"HR.EMPLOYEES/v1", "HR.EMPLOYEES/v2", "SALES.CUSTOMERS/v1", "SALES.CUSTOMERS/v2", "SALES.ORDERS/v1", "SALES.ORDERS/v2"}; !slices.Equal(tables, want) {
		t.Errorf("schema_versions %v, want %v", tables, want)
	}
}
