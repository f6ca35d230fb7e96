package pipeline_test

import (
	"strings"
	"testing"

	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
	"github.com/lakehouse-exporter/lakehouse-exporter/pipeline"
)

// TestFilesUseOnlyTypesSparkAndDuckDBRead checks every column of every file
// made from both sample streams: no INT96, no unsigned integers, no
// nanosecond timestamps.
func TestFilesUseOnlyTypesSparkAndDuckDBRead(t *testing.T) {
	dir := t.TempDir()
	if _, err := export(t, dir, func(c *pipeline.Config) { c.Decoder = autoDecoder(t, cdc.QlikOptions{}) }, samplePath, qlikSample); err != nil {
		t.Fatal(err)
	}
	db := openDuck(t)
	files := dataFiles(t, dir)
	if len(files) < 8 {
		t.Fatalf("only %d files", len(files))
	}
	checked := 0
	for _, f := range files {
		rows := query(t, db, `SELECT name, coalesce(type, ''), coalesce(converted_type, ''), coalesce(logical_type::VARCHAR, '') FROM parquet_schema('`+f+`')`)
		for _, r := range rowStrings(rows) {
			upper := strings.ToUpper(r)
			for _, bad := range []string{"INT96", "UINT", "UNSIGNED", "NANOS=NANOSECONDS", "ISSIGNED=0"} {
				if strings.Contains(upper, bad) {
					t.Errorf("%s: column %s uses %s", f, r, bad)
				}
			}
			checked++
		}
	}
	if checked < 100 {
		t.Errorf("only %d columns checked", checked)
	}
}
