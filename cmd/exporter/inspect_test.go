package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func exportSample(t *testing.T) string {
	t.Helper()
	sink := t.TempDir()
	code, _, stderr := runExporter(t, nil, "run", "--source", "file:../../testdata/goldengate/sample.jsonl", "--sink", "file://"+sink, "--once")
	if code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	return sink
}

func TestTablesListsVersionsFilesRowsAndLastPosition(t *testing.T) {
	sink := exportSample(t)
	code, out, stderr := runExporter(t, nil, "tables", "--sink", "file://"+sink)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	files := func(table string) int {
		m, _ := filepath.Glob(filepath.Join(sink, table, "*", "*", "*.parquet"))
		return len(m)
	}
	// from the sample: 2 versions and 6 rows each; the last DML of each table
	for _, want := range [][]string{
		{"HR.EMPLOYEES", "2", itoa(files("HR.EMPLOYEES")), "6", "G-2007"},
		{"SALES.ORDERS", "2", itoa(files("SALES.ORDERS")), "6", "G-WVo=1006"},
	} {
		found := false
		for _, line := range strings.Split(out, "\n") {
			if strings.Join(strings.Fields(line), " ") == strings.Join(want, " ") {
				found = true
			}
		}
		if !found {
			t.Errorf("no line %v in:\n%s", want, out)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestSchemaShowsHistoryAndOneVersion(t *testing.T) {
	sink := exportSample(t)
	code, out, _ := runExporter(t, nil, "schema", "SALES.ORDERS", "--sink", "file://"+sink)
	if code != 0 || !strings.Contains(out, "2 schema versions") || !strings.Contains(out, "ALTER TABLE SALES.ORDERS ADD CUSTOMER_TIER VARCHAR2(20)") ||
		!strings.Contains(out, "CUSTOMER_TIER") {
		t.Errorf("schema history:\n%s", out)
	}
	code, out, _ = runExporter(t, nil, "schema", "SALES.ORDERS", "--version", "1", "--sink", "file://"+sink)
	if code != 0 || !strings.Contains(out, "schema version 1") || strings.Contains(out, "CUSTOMER_TIER") {
		t.Errorf("version 1:\n%s", out)
	}
	if code, _, stderr := runExporter(t, nil, "schema", "NO.SUCH", "--sink", "file://"+sink); code != exitFailure || !strings.Contains(stderr, "NO.SUCH") {
		t.Errorf("unknown table: exit %d %s", code, stderr)
	}
	// Environments set EXPORTER_VERSION for their own reasons: the schema
	// version comes from EXPORTER_SCHEMA_VERSION only.
	t.Setenv("EXPORTER_VERSION", "1.2.3")
	if code, out, stderr := runExporter(t, nil, "schema", "SALES.ORDERS", "--sink", "file://"+sink); code != 0 || !strings.Contains(out, "2 schema versions") {
		t.Errorf("with EXPORTER_VERSION set: exit %d\n%s%s", code, out, stderr)
	}
	t.Setenv("EXPORTER_SCHEMA_VERSION", "1")
	if code, out, _ := runExporter(t, nil, "schema", "SALES.ORDERS", "--sink", "file://"+sink); code != 0 || !strings.Contains(out, "schema version 1") || strings.Contains(out, "CUSTOMER_TIER") {
		t.Errorf("EXPORTER_SCHEMA_VERSION=1:\n%s", out)
	}
}

func TestValidateReportsEveryProblemWithItsKey(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(cfg, []byte(`source: file:/no/such/input.jsonl
compression: lz5
file-max-rows: many
snk: file:///tmp/x
partition-by: week
type-hint:
  "S.T:C": decimal(99,1)
`), 0o644)
	code, _, stderr := runExporter(t, nil, "validate", "--config", cfg)
	if code != exitUsage {
		t.Fatalf("exit %d", code)
	}
	for _, key := range []string{"compression:", "file-max-rows:", "snk:", "partition-by:", "type-hint:", "source:"} {
		if !strings.Contains(stderr, "\n  "+key) {
			t.Errorf("no problem reported for %s in:\n%s", key, stderr)
		}
	}
	good := filepath.Join(t.TempDir(), "good.yaml")
	os.WriteFile(good, []byte("source: file:../../testdata/goldengate/sample.jsonl\nsink: file://"+t.TempDir()+"\ncompression: snappy\n"), 0o644)
	if code, out, stderr := runExporter(t, nil, "validate", "--config", good); code != 0 || !strings.Contains(out, "OK") {
		t.Errorf("good config: exit %d %s %s", code, out, stderr)
	}
}

// The commands that read a lake refuse a sink folder that does not exist,
// and do not make it: a mistyped --sink is not an empty lake.
func TestInspectingAMissingSinkFolderSaysSo(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-lake-here")
	for _, args := range [][]string{{"tables"}, {"views"}, {"schema", "SALES.ORDERS"}} {
		code, _, stderr := runExporter(t, nil, append(args, "--sink", "file://"+missing)...)
		if code != exitFailure || !strings.Contains(stderr, "sink folder "+missing) || !strings.Contains(stderr, "check --sink") {
			t.Errorf("%v: exit %d, %s", args, code, stderr)
		}
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("the folder was made: %v", err)
	}
}
