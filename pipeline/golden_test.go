package pipeline_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

const samplePath = "../testdata/goldengate/sample.jsonl"

// TestSampleStreamReadBackWithDuckDB exports the bundled sample and reads
// every file back with DuckDB. The expected rows are written out by hand
// from testdata/goldengate/sample.jsonl.
func TestSampleStreamReadBackWithDuckDB(t *testing.T) {
	dir := t.TempDir()
	sum, err := export(t, dir, nil, samplePath)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records != 22 || sum.Rejected != 0 {
		t.Fatalf("summary: %d records, %d rejected; want 22 and 0", sum.Records, sum.Rejected)
	}
	checkSampleLake(t, dir)
}

// checkSampleLake checks a lake made from the sample stream, wherever it
// was written.
func checkSampleLake(t *testing.T, dir string) {
	t.Helper()
	db := openDuck(t)

	orders := query(t, db, `SELECT op_type, make_timestamp(epoch_us(op_ts))::VARCHAR, xid, pos, ORDER_ID, STATUS, TOTAL_AMOUNT,
		make_timestamp(epoch_us(CREATED_AT))::VARCHAR, CUSTOMER_TIER, schema_version, dt::VARCHAR, absent_columns::VARCHAR
		FROM `+lakeGlob(dir, "SALES.ORDERS")+` ORDER BY op_ts`)
	equalLines(t, "SALES.ORDERS rows", rowStrings(orders), []string{
		"INSERT|2026-07-13 04:01:01.123456|example-transaction-1001|G-QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=1001|1001|NEW|125.5|2026-07-13 04:01:01|NULL|1|2026-07-13|NULL",
		"INSERT|2026-07-13 04:01:30.000001|example-transaction-1001|G-QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=1001b|1002|NEW|NULL|NULL|NULL|1|2026-07-13|NULL",
		"UPDATE|2026-07-13 04:02:12.654321|example-transaction-1002|G-R0hJSktMTU5PUFFSU1RVVldYWVo=1002|1001|APPROVED|NULL|NULL|NULL|1|2026-07-13|[TOTAL_AMOUNT, CREATED_AT]",
		"DELETE|2026-07-13 04:03:15|example-transaction-1003|G-SktMTU5PUFFSU1RVVldYWVo=1003|1001|APPROVED|NULL|NULL|NULL|1|2026-07-13|[TOTAL_AMOUNT, CREATED_AT]",
		"INSERT|2026-07-13 04:05:00|example-transaction-1005|G-VVldYWVo=1005|1003|NEW|99.99|2026-07-13 04:05:00|GOLD|2|2026-07-13|NULL",
		// 23:59:59.999999-02:00 is the next day in UTC
		"UPDATE|2026-07-14 01:59:59.999999|example-transaction-1006|G-WVo=1006|1003|SHIPPED|99.99|2026-07-13 04:05:00|PLATINUM|2|2026-07-14|NULL",
	})

	emps := query(t, db, `SELECT op_type, EMP_ID, NAME, SALARY, ACTIVE, schema_version, dt::VARCHAR, absent_columns::VARCHAR,
		before_image.EMP_ID, before_image.SALARY
		FROM `+lakeGlob(dir, "HR.EMPLOYEES")+` ORDER BY op_ts`)
	equalLines(t, "HR.EMPLOYEES rows", rowStrings(emps), []string{
		`INSERT|7|Ada "the first" Lovelace|5200.25|true|1|2026-07-13|NULL|NULL|NULL`,
		`INSERT|8|Grace Hopper|NULL|false|1|2026-07-13|NULL|NULL|NULL`,
		`UPSERT|8|Grace Hopper|6100|true|1|2026-07-14|NULL|NULL|NULL`,
		// CloudEvents-wrapped partial update
		`UPDATE|7|NULL|5300.75|NULL|1|2026-07-14|[NAME, ACTIVE]|7|NULL`,
		// between the DROP COLUMN DDL and the refreshed metadata: decoded with the DDL applied
		`DELETE|7|Ada "the first" Lovelace|5300.75|NULL|2|2026-07-14|NULL|7|5300.75`,
		`INSERT|9|Edsger Dijkstra|7000|NULL|2|2026-07-14|NULL|NULL|NULL`,
	})

	types := query(t, db, `SELECT typeof(op_type), typeof(op_ts), typeof(xid), typeof(pos), typeof(ORDER_ID), typeof(STATUS),
		typeof(TOTAL_AMOUNT), typeof(CREATED_AT) FROM `+lakeGlob(dir, "SALES.ORDERS")+` LIMIT 1`)
	equalLines(t, "SALES.ORDERS types", rowStrings(types), []string{
		// ORDER_ID is integer in the JSON Schema record, CREATED_AT a date-time
		"VARCHAR|TIMESTAMP WITH TIME ZONE|VARCHAR|VARCHAR|BIGINT|VARCHAR|DOUBLE|TIMESTAMP WITH TIME ZONE",
	})

	// Parquet physical types: INT64 microsecond UTC timestamps, never INT96.
	for _, f := range dataFiles(t, dir) {
		rows := query(t, db, `SELECT name, type, logical_type::VARCHAR FROM parquet_schema('`+f+`') WHERE name IN ('op_ts', 'CREATED_AT')`)
		for _, r := range rowStrings(rows) {
			want := []string{"op_ts|INT64|TimestampType(isAdjustedToUTC=1, unit=TimeUnit(MILLIS=<null>, MICROS=MicroSeconds(), NANOS=<null>))",
				"CREATED_AT|INT64|TimestampType(isAdjustedToUTC=1, unit=TimeUnit(MILLIS=<null>, MICROS=MicroSeconds(), NANOS=<null>))"}
			if r != want[0] && r != want[1] {
				t.Errorf("%s: timestamp column stored as %s", filepath.Base(f), r)
			}
		}
		kv := query(t, db, `SELECT decode(key), decode(value) FROM parquet_kv_metadata('`+f+`') WHERE decode(key) LIKE 'lakehouse.%' ORDER BY 1`)
		if len(kv) != 7 {
			t.Errorf("%s: %d lakehouse.* key/value entries, want 7: %v", filepath.Base(f), len(kv), rowStrings(kv))
		}
	}

	// One schema version per source change: the refreshed metadata after
	// each DDL completes the version the DDL opened, and metadata that
	// repeats does not open one.
	for _, c := range []struct {
		table   string
		version int
		ddl     string
		cols    int
	}{
		{"SALES.ORDERS", 1, "", 4},
		{"SALES.ORDERS", 2, "ALTER TABLE SALES.ORDERS ADD CUSTOMER_TIER VARCHAR2(20)", 5},
		{"HR.EMPLOYEES", 1, "", 4},
		{"HR.EMPLOYEES", 2, "ALTER TABLE HR.EMPLOYEES DROP COLUMN ACTIVE", 3},
	} {
		data, err := os.ReadFile(filepath.Join(dir, "_schemas", c.table, "v"+string(rune('0'+c.version))+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Table          string          `json:"table"`
			Version        int             `json:"schema_version"`
			DDL            string          `json:"ddl"`
			Columns        []any           `json:"columns"`
			Fields         []any           `json:"arrow_schema"`
			StreamMetadata json.RawMessage `json:"stream_metadata"`
			Provisional    bool            `json:"provisional"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Table != c.table || doc.Version != c.version || doc.DDL != c.ddl || len(doc.Columns) != c.cols || doc.Provisional {
			t.Errorf("%s v%d: got table %q version %d ddl %q %d columns provisional=%v", c.table, c.version, doc.Table, doc.Version, doc.DDL, len(doc.Columns), doc.Provisional)
		}
		if len(doc.StreamMetadata) == 0 {
			t.Errorf("%s v%d: stream metadata missing from the schema registry entry", c.table, c.version)
		}
	}
	for _, extra := range []string{"_schemas/SALES.ORDERS/v3.json", "_schemas/HR.EMPLOYEES/v3.json", "_dlq"} {
		if _, err := os.Stat(filepath.Join(dir, extra)); err == nil {
			t.Errorf("%s exists; the sample has two versions per table and no bad records", extra)
		}
	}
}
