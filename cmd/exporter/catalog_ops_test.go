package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
)

// catalogCase is a catalog the sample is exported with: its flags, and
// the config that opens it from the test.
type catalogCase struct {
	name string
	args func(dir string) []string
	cfg  func(dir, sink string) tables.Config
}

var catalogCases = []catalogCase{
	{"sql", func(dir string) []string {
		return []string{"--catalog", "sql", "--catalog-uri", "sqlite://" + filepath.Join(dir, "catalog.db")}
	}, func(dir, sink string) tables.Config {
		return tables.Config{Kind: tables.SQL, URI: "sqlite://" + filepath.Join(dir, "catalog.db"), Warehouse: "file://" + sink + "/_iceberg"}
	}},
	{"hadoop", func(string) []string { return []string{"--catalog", "hadoop"} },
		func(_, sink string) tables.Config {
			return tables.Config{Kind: tables.Hadoop, Warehouse: "file://" + sink + "/_iceberg"}
		}},
}

// exportSampleWithCatalog exports the GoldenGate sample into dir/lake
// through the catalog of c, and returns the sink folder.
func exportSampleWithCatalog(t *testing.T, dir string, c catalogCase) string {
	t.Helper()
	sink := filepath.Join(dir, "lake")
	args := append([]string{"run", "--source", "file:../../testdata/goldengate/sample.jsonl", "--sink", "file://" + sink, "--once"}, c.args(dir)...)
	if code, _, stderr := runExporter(t, nil, args...); code != exitOK {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	return sink
}

// TestTablesShowsEachTablesCurrentSnapshot: with the catalog flags,
// `exporter tables` adds each table's current snapshot as the catalog
// has it (iceberg-go's own view of the table), its rows (the sample's),
// its data files (the table folder's) and its metadata file.
func TestTablesShowsEachTablesCurrentSnapshot(t *testing.T) {
	for _, c := range catalogCases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			sink := exportSampleWithCatalog(t, dir, c)
			code, out, stderr := runExporter(t, nil, append([]string{"tables", "--sink", "file://" + sink}, c.args(dir)...)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			pub, err := tables.Open(context.Background(), c.cfg(dir, sink), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer pub.Close()
			for _, name := range []string{"HR.EMPLOYEES", "SALES.ORDERS"} {
				ident, _ := pub.Identifier(name)
				tbl, err := pub.Catalog().LoadTable(context.Background(), ident)
				if err != nil {
					t.Fatal(err)
				}
				snap := tbl.CurrentSnapshot()
				files, _ := filepath.Glob(filepath.Join(sink, name, "*", "*", "*.parquet"))
				if len(files) == 0 {
					t.Fatalf("%s: no data files in the sink", name)
				}
				want := []string{name, name, strconv.FormatInt(snap.SnapshotID, 10),
					time.UnixMilli(snap.TimestampMs).UTC().Format(time.RFC3339Nano),
					"6", strconv.Itoa(len(files)), tbl.MetadataLocation()}
				if !hasLine(out, want) {
					t.Errorf("no line %v in:\n%s", want, out)
				}
				if _, err := os.Stat(strings.TrimPrefix(tbl.MetadataLocation(), "file://")); err != nil {
					t.Errorf("%s: the metadata file shown is not there: %v", name, err)
				}
			}
		})
	}
}

// hasLine tells whether out has a line of exactly these fields.
func hasLine(out string, fields []string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.Join(strings.Fields(line), " ") == strings.Join(fields, " ") {
			return true
		}
	}
	return false
}

// TestFolderViewsOfAPublishedLakeSaySo: views without the catalog flags,
// over a lake whose tables are published to a catalog, begin with a
// comment (and log a warning) that compaction makes the folder views
// count a partition's rows twice until expiry; a plain lake's do not.
func TestFolderViewsOfAPublishedLakeSaySo(t *testing.T) {
	dir := t.TempDir()
	sink := exportSampleWithCatalog(t, dir, catalogCases[1]) // hadoop
	code, out, stderr := runExporter(t, nil, "views", "--sink", "file://"+sink)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.HasPrefix(out, "-- This lake's tables are published to an Iceberg catalog (--catalog hadoop).") || !strings.Contains(stderr, "count its rows twice") {
		t.Errorf("folder views of a published lake do not say so:\n%s\nstderr: %s", out[:min(len(out), 400)], stderr)
	}
	plain := filepath.Join(t.TempDir(), "lake")
	if code, _, stderr := runExporter(t, nil, "run", "--source", "file:../../testdata/goldengate/sample.jsonl", "--sink", "file://"+plain, "--once"); code != exitOK {
		t.Fatalf("plain run: exit %d: %s", code, stderr)
	}
	if code, out, _ := runExporter(t, nil, "views", "--sink", "file://"+plain); code != exitOK || strings.Contains(out, "Iceberg catalog") {
		t.Errorf("views of a plain lake: exit %d, mention a catalog:\n%s", code, out[:min(len(out), 400)])
	}
}

// TestViewsPrintCatalogQueries: with the catalog flags, views adds the
// Spark catalog settings and a view per table over lakehouse.NS.TABLE,
// or DuckDB's iceberg_scan of each table's current metadata file (as
// iceberg-go loads it), after the glob views. Spark runs the printed SQL
// in enginetest/test_iceberg_reads.py.
func TestViewsPrintCatalogQueries(t *testing.T) {
	dir := t.TempDir()
	c := catalogCases[1] // hadoop
	sink := exportSampleWithCatalog(t, dir, c)
	views := func(dialect string) string {
		code, out, stderr := runExporter(t, nil, append([]string{"views", "--sink", "file://" + sink, "--dialect", dialect}, c.args(dir)...)...)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", dialect, code, stderr)
		}
		if !strings.Contains(out, "__current") {
			t.Errorf("%s: the glob views are gone:\n%s", dialect, out)
		}
		return out
	}
	spark := views("spark")
	for _, want := range []string{
		"SET spark.sql.catalog.lakehouse=org.apache.iceberg.spark.SparkCatalog;",
		"SET spark.sql.catalog.lakehouse.type=hadoop;",
		"SET spark.sql.catalog.lakehouse.warehouse=file://" + sink + "/_iceberg;",
		"CREATE OR REPLACE TEMPORARY VIEW `SALES.ORDERS__iceberg` AS SELECT * FROM `lakehouse`.`SALES`.`ORDERS`;",
		"CREATE OR REPLACE TEMPORARY VIEW `HR.EMPLOYEES__iceberg` AS SELECT * FROM `lakehouse`.`HR`.`EMPLOYEES`;",
	} {
		if !strings.Contains(spark, want) {
			t.Errorf("spark views lack %q:\n%s", want, spark)
		}
	}
	duck := views("duckdb")
	pub, err := tables.Open(context.Background(), c.cfg(dir, sink), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	for _, name := range []string{"HR.EMPLOYEES", "SALES.ORDERS"} {
		ident, _ := pub.Identifier(name)
		tbl, err := pub.Catalog().LoadTable(context.Background(), ident)
		if err != nil {
			t.Fatal(err)
		}
		want := `CREATE OR REPLACE VIEW "` + name + `__iceberg" AS SELECT * FROM iceberg_scan('` + tbl.MetadataLocation() + `');`
		if !strings.Contains(duck, want) {
			t.Errorf("duckdb views lack %q:\n%s", want, duck)
		}
	}
}

// TestDemoIcebergCommands runs what `scripts/demo.sh --iceberg` runs: an
// export with the hadoop catalog, tables with it, and a scan of
// SALES.ORDERS through it that shows every change the sample holds for
// the table (counted from the sample here), with the column its DDL
// added.
func TestDemoIcebergCommands(t *testing.T) {
	dir := t.TempDir()
	sink := "file://" + filepath.Join(dir, "lake")
	for _, args := range [][]string{
		{"run", "--source", "file:../../testdata/goldengate/sample.jsonl", "--sink", sink, "--once", "--catalog", "hadoop", "--log-format", "text"},
		{"tables", "--sink", sink, "--catalog", "hadoop"},
	} {
		if code, _, stderr := runExporter(t, nil, args...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
	code, out, stderr := runExporter(t, nil, "scan", "SALES.ORDERS", "--sink", sink, "--catalog", "hadoop",
		"--columns", "op_type,op_ts,ORDER_ID,STATUS,CUSTOMER_TIER")
	if code != exitOK {
		t.Fatalf("scan: exit %d: %s", code, stderr)
	}
	sample, err := os.ReadFile("../../testdata/goldengate/sample.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var want []string // op_type and ORDER_ID of each change
	for _, line := range strings.Split(string(sample), "\n") {
		var rec struct {
			Table  string         `json:"qual_table"`
			Op     string         `json:"op_type"`
			After  map[string]any `json:"after"`
			Before map[string]any `json:"before"`
		}
		if json.Unmarshal([]byte(line), &rec) != nil || rec.Table != "SALES.ORDERS" || (rec.After == nil && rec.Before == nil) {
			continue
		}
		image := rec.After
		if rec.Op == "DELETE" {
			image = rec.Before
		}
		want = append(want, fmt.Sprintf("%s %v", rec.Op, image["ORDER_ID"]))
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if strings.Join(strings.Fields(lines[0]), " ") != "op_type op_ts ORDER_ID STATUS CUSTOMER_TIER" {
		t.Fatalf("scan header: %q", lines[0])
	}
	var got []string
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		got = append(got, f[0]+" "+f[2])
	}
	sort.Strings(got)
	sort.Strings(want)
	if len(want) == 0 || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("scan rows (op, ORDER_ID) %v, want the sample's %v:\n%s", got, want, out)
	}
	if !strings.Contains(out, "PLATINUM") {
		t.Errorf("the DDL's CUSTOMER_TIER value is not read through the catalog:\n%s", out)
	}
	if code, _, stderr := runExporter(t, nil, "scan", "SALES.ORDERS", "--sink", sink); code != exitFailure || !strings.Contains(stderr, "--catalog") {
		t.Errorf("scan without --catalog: exit %d: %s", code, stderr)
	}
}
