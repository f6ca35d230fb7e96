package main

import (
	"strings"
	"testing"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/duckq"
)

// TestViewsCommandSQLRunsInDuckDB: the printed SQL runs as is, and the
// current state of the sample is what replaying it by hand gives.
func TestViewsCommandSQLRunsInDuckDB(t *testing.T) {
	sink := exportSample(t)
	code, sql, stderr := runExporter(t, nil, "views", "--sink", "file://"+sink, "--dialect", "duckdb")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	db := duckq.OpenTB(t)
	if _, err := db.Exec(sql); err != nil {
		t.Fatalf("views SQL: %v\n%s", err, sql)
	}
	_, rows, err := duckq.Rows(db, `SELECT ORDER_ID::VARCHAR || ':' || STATUS FROM "SALES.ORDERS__current" ORDER BY ORDER_ID`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r[0].(string))
	}
	// 1001 was deleted; 1002 is NEW; 1003 ended SHIPPED
	if strings.Join(got, ",") != "1002:NEW,1003:SHIPPED" {
		t.Errorf("current SALES.ORDERS: %v", got)
	}
	code, spark, _ := runExporter(t, nil, "views", "--sink", "file://"+sink, "--dialect", "spark", "--root", "s3a://lake/gg")
	if code != 0 || !strings.Contains(spark, "TEMPORARY VIEW `SALES.ORDERS`") || !strings.Contains(spark, "s3a://lake/gg/SALES.ORDERS") {
		t.Errorf("spark views:\n%s", spark)
	}
}
