package metrics_test

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
	"github.com/lakehouse-exporter/lakehouse-exporter/metrics"
	"github.com/lakehouse-exporter/lakehouse-exporter/pipeline"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
	"github.com/lakehouse-exporter/lakehouse-exporter/store"
	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
)

// TestIcebergCommitMetricsAfterARun: after exporting the sample with the
// SQL catalog on SQLite, the commit counts and the last snapshot of each
// table are those the catalog holds (every snapshot of the fresh tables
// is this run's), and no conflict is counted.
func TestIcebergCommitMetricsAfterARun(t *testing.T) {
	dir := t.TempDir()
	lake := filepath.Join(dir, "lake")
	st, err := store.NewLocal(lake)
	if err != nil {
		t.Fatal(err)
	}
	src, err := source.NewFiles([]string{"../testdata/goldengate/sample.jsonl"}, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dec, _ := cdc.NewGoldenGate(cdc.GoldenGateNames{})
	cfg := tables.Config{Kind: tables.SQL, URI: "sqlite://" + filepath.Join(dir, "catalog.db"), Warehouse: "file://" + filepath.Join(lake, "_iceberg")}
	m := metrics.New()
	if _, err := pipeline.Run(context.Background(), pipeline.Config{Source: src, Store: st, Decoder: dec, MaxRejects: -1,
		Schema: arrowschema.Options{BeforeImage: true}, Catalog: &cfg, Observer: m}); err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, m.Handler())

	pub, err := tables.Open(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	total := 0
	for _, name := range []string{"SALES.ORDERS", "HR.EMPLOYEES"} {
		ident, _ := pub.Identifier(name)
		tbl, err := pub.Catalog().LoadTable(context.Background(), ident)
		if err != nil {
			t.Fatal(err)
		}
		snaps := len(tbl.Metadata().Snapshots())
		if snaps == 0 {
			t.Fatalf("%s: no snapshot", name)
		}
		total += snaps
		table := map[string]string{"table": name}
		if got := value(fams, "exporter_iceberg_commits_total", table); got != float64(snaps) {
			t.Errorf("%s: commits_total %v, the table has %d snapshots", name, got, snaps)
		}
		cur := tbl.CurrentSnapshot()
		if got := value(fams, "exporter_iceberg_last_snapshot_info", map[string]string{"table": name, "snapshot_id": strconv.FormatInt(cur.SnapshotID, 10)}); got != 1 {
			t.Errorf("%s: no last_snapshot_info series for the current snapshot %d", name, cur.SnapshotID)
		}
		if got := value(fams, "exporter_iceberg_last_snapshot_info", table); got != 1 {
			t.Errorf("%s: %v last_snapshot_info series, want exactly one", name, got)
		}
		if got := value(fams, "exporter_iceberg_last_commit_timestamp_seconds", table); got != float64(cur.TimestampMs)/1e3 {
			t.Errorf("%s: last commit at %v, the current snapshot's time is %d ms", name, got, cur.TimestampMs)
		}
		if got := value(fams, "exporter_iceberg_commit_conflicts_total", table); got > 0 {
			t.Errorf("%s: %v conflicts counted in a run alone", name, got)
		}
	}
	if h := fams["exporter_iceberg_commit_seconds"]; h == nil || h.Metric[0].Histogram.GetSampleCount() != uint64(total) {
		t.Errorf("commit_seconds histogram: want %d observations, got %v", total, h)
	}
}

// TestLastSnapshotKeepsOneSeriesPerTable: a table's next snapshot
// replaces its last_snapshot_info series instead of adding one per
// snapshot.
func TestLastSnapshotKeepsOneSeriesPerTable(t *testing.T) {
	m := metrics.New()
	var o tables.Observer = m
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	o.IcebergCommitted("SALES.ORDERS", 1111, at, time.Millisecond)
	o.IcebergCommitted("SALES.ORDERS", 2222, at.Add(time.Second), time.Millisecond)
	o.IcebergCommitted("HR.EMPLOYEES", 3333, at, time.Millisecond)
	o.IcebergConflict("SALES.ORDERS")
	fams := scrape(t, m.Handler())
	if got := len(fams["exporter_iceberg_last_snapshot_info"].GetMetric()); got != 2 {
		t.Errorf("%d last_snapshot_info series, want 2 (one per table)", got)
	}
	if got := value(fams, "exporter_iceberg_last_snapshot_info", map[string]string{"table": "SALES.ORDERS", "snapshot_id": "2222"}); got != 1 {
		t.Errorf("SALES.ORDERS last snapshot series: %v", got)
	}
	if got := value(fams, "exporter_iceberg_commits_total", map[string]string{"table": "SALES.ORDERS"}); got != 2 {
		t.Errorf("SALES.ORDERS commits %v, want 2", got)
	}
	if got := value(fams, "exporter_iceberg_last_commit_timestamp_seconds", map[string]string{"table": "SALES.ORDERS"}); got != float64(at.Unix()+1) {
		t.Errorf("SALES.ORDERS last commit %v, want %d", got, at.Unix()+1)
	}
	if got := value(fams, "exporter_iceberg_commit_conflicts_total", map[string]string{"table": "SALES.ORDERS"}); got != 1 {
		t.Errorf("SALES.ORDERS conflicts %v, want 1", got)
	}
}
