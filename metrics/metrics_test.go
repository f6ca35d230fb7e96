package metrics_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/miniotest"
	"github.com/lakehouse-exporter/lakehouse-exporter/metrics"
	"github.com/lakehouse-exporter/lakehouse-exporter/parquetenc"
	"github.com/lakehouse-exporter/lakehouse-exporter/pipeline"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
	"github.com/lakehouse-exporter/lakehouse-exporter/store"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("/metrics: %d", rec.Code)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(rec.Body.String()))
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// value returns the value of the series of name whose labels include want.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
	total := 0.0
	found := false
outer:
	for _, m := range f.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue outer
			}
		}
		found = true
		switch {
		case m.Counter != nil:
			total += m.Counter.GetValue()
		case m.Gauge != nil:
			total += m.Gauge.GetValue()
		}
	}
	if !found {
		return -1
	}
	return total
}

// TestMetricsAfterExportingTheSample: the endpoint reports the exact
// record, reject and file counts of a run.
func TestMetricsAfterExportingTheSample(t *testing.T) {
	sample, err := os.ReadFile("../testdata/goldengate/sample.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(t.TempDir(), "in.jsonl")
	bad := "not json\n{\"qual_table\":\"SALES.ORDERS\",\"op_type\":\"MERGE\",\"op_ts\":\"2026-07-13T04:00:00Z\",\"after\":{}}\nnot json either\n"
	os.WriteFile(in, append(sample, bad...), 0o644)
	dir := t.TempDir()
	st, _ := store.NewLocal(dir)
	src, _ := source.NewFiles([]string{in}, 0, nil)
	defer src.Close()
	dec, _ := cdc.NewGoldenGate(cdc.GoldenGateNames{})
	m := metrics.New()
	sum, err := pipeline.Run(context.Background(), pipeline.Config{Source: src, Store: st, Decoder: dec, MaxRejects: -1,
		Schema: arrowschema.Options{BeforeImage: true}, Observer: m})
	if err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, m.Handler())
	// counted by hand from testdata/goldengate/sample.jsonl
	for _, c := range []struct {
		table, op string
		n         float64
	}{{"SALES.ORDERS", "INSERT", 3}, {"SALES.ORDERS", "UPDATE", 2}, {"SALES.ORDERS", "DELETE", 1},
		{"HR.EMPLOYEES", "INSERT", 3}, {"HR.EMPLOYEES", "UPSERT", 1}, {"HR.EMPLOYEES", "UPDATE", 1}, {"HR.EMPLOYEES", "DELETE", 1}} {
		if got := value(fams, "exporter_records_total", map[string]string{"table": c.table, "op": c.op}); got != c.n {
			t.Errorf("records_total{%s,%s} = %v, want %v", c.table, c.op, got, c.n)
		}
	}
	if got := value(fams, "exporter_rows_written_total", map[string]string{"table": "SALES.ORDERS"}); got != 6 {
		t.Errorf("rows_written_total SALES.ORDERS = %v, want 6", got)
	}
	if got := value(fams, "exporter_rejected_total", map[string]string{"reason": "malformed_json"}); got != 2 {
		t.Errorf("rejected malformed_json = %v, want 2", got)
	}
	if got := value(fams, "exporter_rejected_total", map[string]string{"reason": "unknown_op_type"}); got != 1 {
		t.Errorf("rejected unknown_op_type = %v, want 1", got)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*", "*", "*.parquet"))
	if got := value(fams, "exporter_files_total", nil); got != float64(len(files)) || got != float64(sum.Files) {
		t.Errorf("files_total = %v, %d files on disk, summary %d", got, len(files), sum.Files)
	}
	if got := value(fams, "exporter_records_read_total", nil); got != float64(22+3) {
		t.Errorf("records_read_total = %v, want 25", got)
	}
	if got := value(fams, "exporter_schema_version", map[string]string{"table": "HR.EMPLOYEES"}); got != 2 {
		t.Errorf("schema_version HR.EMPLOYEES = %v, want 2", got)
	}
	if got := value(fams, "exporter_last_checkpoint_timestamp_seconds", nil); got < float64(time.Now().Add(-time.Minute).Unix()) {
		t.Errorf("last checkpoint %v", got)
	}
	if got := value(fams, "exporter_event_time_lag_seconds", nil); got < float64(time.Since(time.Date(2026, 7, 14, 2, 0, 0, 0, time.UTC))/time.Second)-5 {
		t.Errorf("event-time lag %v: the newest op_ts of the sample is 2026-07-14 02:00", got)
	}
}

// TestReadinessFollowsTheStore: /readyz turns false while the store is
// stopped and true again when it returns; /healthz stays true.
func TestReadinessFollowsTheStore(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and stops a MinIO server")
	}
	srv := miniotest.Own(t)
	s3, _ := miniotest.NewBucket(t, srv.Creds, "", nil)
	h := metrics.New().Handler(func(ctx context.Context) error { return s3.Check(ctx) })
	status := func(path string) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec.Code
	}
	if s := status("/readyz"); s != 200 {
		t.Fatalf("ready before the outage: %d", s)
	}
	srv.Stop()
	if s := status("/readyz"); s != 503 {
		t.Errorf("readyz with the store down: %d, want 503", s)
	}
	if s := status("/healthz"); s != 200 {
		t.Errorf("healthz with the store down: %d, want 200", s)
	}
	srv.Start()
	if s := status("/readyz"); s != 200 {
		t.Errorf("readyz after the store came back: %d, want 200", s)
	}
}

// Files pqarrow writes for the lean encoder are counted by reason; the
// metrics are a parquetenc.Observer, which the pipeline finds by that.
func TestEncoderFallbacksAreCounted(t *testing.T) {
	m := metrics.New()
	var o parquetenc.Observer = m
	o.EncoderFallback(parquetenc.FallbackBatch)
	o.EncoderFallback(parquetenc.FallbackBatch)
	fams := scrape(t, m.Handler())
	if got := value(fams, "exporter_encoder_fallbacks_total", map[string]string{"reason": "batch"}); got != 2 {
		t.Errorf("exporter_encoder_fallbacks_total{reason=batch} = %v, want 2", got)
	}
}
