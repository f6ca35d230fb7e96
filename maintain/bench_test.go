package maintain_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/gen"
	"github.com/lakehouse-exporter/lakehouse-exporter/maintain"
)

// BenchmarkMaintainPass builds a lake of many small files (a generated
// stream over benchTables tables, exported in benchRounds commit rounds
// with a SQLite catalog, as scripts/bench-maintain.sh does at a smaller
// scale), then times one pass that compacts every table and expires every
// snapshot but the newest. It reports the pass's rows/s, the exporter's
// records/s on the same stream in the same run, and their ratio (issue
// 34 asks for at least 0.5). Profile with -cpuprofile.
func BenchmarkMaintainPass(b *testing.B) {
	// BENCH_RECORDS, BENCH_TABLES and BENCH_ROUNDS set the lake's shape
	// (scripts/bench-maintain.sh's is 200000, 500 and 20).
	records, benchTables, benchRounds := envInt("BENCH_RECORDS", 40000), envInt("BENCH_TABLES", 100), envInt("BENCH_ROUNDS", 10)
	var stream bytes.Buffer
	if _, err := gen.Write(&stream, gen.Options{Records: records, Tables: benchTables, Columns: 12, Seed: 7,
		DDLEvery: records / 4, Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}); err != nil {
		b.Fatal(err)
	}
	lines := bytes.SplitAfter(stream.Bytes(), []byte("\n"))
	dir := b.TempDir()
	write := func(name string, n int) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, bytes.Join(lines[:n], nil), 0o644); err != nil {
			b.Fatal(err)
		}
		return p
	}
	all := write("all.jsonl", len(lines))

	one := newLake(b)
	start, cpu0 := time.Now(), cpuTime(b)
	one.export(b, 0, all)
	exportRate := float64(records) / time.Since(start).Seconds()
	exportCPURate := float64(records) / (cpuTime(b) - cpu0).Seconds()

	var rows int64
	var took, cpu time.Duration
	for range b.N {
		b.StopTimer()
		l := newLake(b)
		for i := 1; i <= benchRounds; i++ {
			l.export(b, 0, write("in.jsonl", len(lines)*i/benchRounds))
		}
		p := l.open(b)
		cfg := l.config(b, p)
		cfg.ExpireAfter, cfg.KeepSnapshots = time.Nanosecond, 1
		cfg.Allocator = nil // the binary's: a checked allocator's bookkeeping would dominate the profile
		if c, err := strconv.Atoi(os.Getenv("BENCH_CONCURRENCY")); err == nil {
			cfg.Concurrency = c
		}
		b.StartTimer()
		start, cpu0 := time.Now(), cpuTime(b)
		s, err := maintain.Run(context.Background(), cfg)
		took += time.Since(start)
		cpu += cpuTime(b) - cpu0
		if err != nil {
			b.Fatal(err)
		}
		if s.FilesRewritten == 0 {
			b.Fatalf("the pass compacted nothing: %s", s)
		}
		rows += s.Rows
	}
	rate := float64(rows) / took.Seconds()
	b.ReportMetric(rate, "rows/s")
	b.ReportMetric(exportRate, "export-records/s")
	b.ReportMetric(rate/exportRate, "ratio")
	// The same by CPU time (both sides use every core they can): on a
	// machine other work shares, wall times vary from run to run far
	// more than the CPU either side spends.
	b.ReportMetric(float64(rows)/cpu.Seconds()/exportCPURate, "cpu-ratio")
	// The pass's CPU time over its wall time: how many cores it kept
	// busy (below the machine's cores: it waited for something).
	b.ReportMetric(cpu.Seconds()/took.Seconds(), "cores")
}

// cpuTime is the CPU time (user and system) this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// envInt is the positive integer of the environment variable name, or def.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
