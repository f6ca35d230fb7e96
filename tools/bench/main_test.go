package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/duckq"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/gen"
)

// TestBenchMeasuresAndChecksRowForRow runs the benchmark's steps on a small
// stream of each format: the exporter child reports its peak RSS and
// allocations, DuckDB converts the input, the row-for-row check passes on
// the exporter's output, and the check fails once a data file is gone.
func TestBenchMeasuresAndChecksRowForRow(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the exporter and runs DuckDB")
	}
	bin := buildExporter(t)
	for _, format := range []string{gen.FormatGoldenGate, gen.FormatQlik} {
		t.Run(format, func(t *testing.T) {
			work := t.TempDir()
			o := options{exporter: bin, work: work, budget: 64 << 20,
				gen: gen.Options{Records: 3000, Tables: 3, Columns: 8, MaxColumns: 10, UpdateRatio: 0.3, DeleteRatio: 0.1, NullRatio: 0.1, Seed: 2, Format: format}}
			in, st, err := stream(o, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err != nil || st.DML != 3000 {
				t.Fatalf("stream: %d records, %v", st.DML, err)
			}
			ctx := context.Background()
			lake := filepath.Join(work, "lake")
			r, err := export(ctx, o, in, lake, "")
			if err != nil {
				t.Fatal(err)
			}
			if r.peakRSS <= 0 || r.outBytes <= 0 || r.allocated == "" {
				t.Errorf("export run reports peak RSS %d, output %d bytes, allocated %q", r.peakRSS, r.outBytes, r.allocated)
			}
			db := duckq.OpenTB(t)
			convert, dir := duckq.ConvertSQL, filepath.Join(work, "duckdb")
			if format == gen.FormatQlik {
				convert = duckq.ConvertQlikSQL
			}
			if _, err := db.ExecContext(ctx, convert(in, dir)); err != nil {
				t.Fatalf("duckdb conversion: %v", err)
			}
			var n int
			if err := db.QueryRowContext(ctx, "SELECT count(*) FROM read_parquet('"+dir+"/*/*.parquet')").Scan(&n); err != nil || n != 3000 {
				t.Errorf("duckdb wrote %d rows (%v), want 3000", n, err)
			}
			if err := check(ctx, db, io.Discard, format, in, lake); err != nil {
				t.Fatal(err)
			}
			files, _ := filepath.Glob(filepath.Join(lake, "*", "schema_version=*", "*", "*.parquet"))
			if len(files) == 0 {
				t.Fatal("no data files in the lake")
			}
			if err := os.Remove(files[0]); err != nil {
				t.Fatal(err)
			}
			if err := check(ctx, db, io.Discard, format, in, lake); err == nil {
				t.Error("the check passed with a data file missing")
			}
		})
	}
}

// A second run in a work folder that a run holds stops at once, saying
// what to do, instead of deleting the first run's outputs.
func TestBenchRunsOneAtATimeInAWorkFolder(t *testing.T) {
	work := t.TempDir()
	unlock, err := lockWork(work)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lockWork(work); err == nil || !strings.Contains(err.Error(), "-work") {
		t.Fatalf("second lock: %v, want an error naming -work", err)
	}
	unlock()
	again, err := lockWork(work)
	if err != nil {
		t.Fatalf("lock after the first run ended: %v", err)
	}
	again()
}

// TestBenchComparesTableCounts runs the benchmark with -compare-tables:
// both streams are exported and checked row for row, and the reported
// ratio is the compared stream's records/s over the first's, from the
// best runs the report prints.
func TestBenchComparesTableCounts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the exporter and runs DuckDB")
	}
	bin := buildExporter(t)
	var report strings.Builder
	o := options{exporter: bin, work: t.TempDir(), budget: 64 << 20, runs: 2, check: true, compareTables: 40, stdout: &report,
		gen: gen.Options{Records: 4000, Tables: 2, Columns: 8, MaxColumns: 10, UpdateRatio: 0.3, DeleteRatio: 0.1, NullRatio: 0.1, Seed: 2, Format: gen.FormatGoldenGate}}
	if err := run(context.Background(), o); err != nil {
		t.Fatalf("bench: %v\n%s", err, report.String())
	}
	out := report.String()
	if got := strings.Count(out, "check: input 4000 DML records, lake 4000 rows, 0 missing or different, 0 extra"); got != 2 {
		t.Errorf("%d passing checks in the report, want one per stream:\n%s", got, out)
	}
	rate := func(prefix string) float64 {
		m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(prefix) + ` [0-9.]+s  ([0-9]+) records/s`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no %q line in the report:\n%s", prefix, out)
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		return v
	}
	first, compared := rate("exporter:"), rate("exporter, 40 tables:")
	m := regexp.MustCompile(`ratio 40 tables / 2 tables: ([0-9.]+) in records/s`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no ratio line in the report:\n%s", out)
	}
	ratio, _ := strconv.ParseFloat(m[1], 64)
	if want := compared / first; ratio < want-0.01 || ratio > want+0.01 {
		t.Errorf("reported ratio %.2f, want %.2f (%.0f / %.0f records/s)", ratio, want, compared, first)
	}
	if !strings.Contains(out, "compared stream: 4000 DML records, 40 tables") {
		t.Errorf("the report does not describe the compared stream:\n%s", out)
	}
}

// buildExporter builds the exporter binary the benchmark runs.
func buildExporter(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "exporter")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/exporter").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
