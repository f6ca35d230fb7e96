package pipeline_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/duckq"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/gen"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/kafkatest"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/miniotest"
	"github.com/lakehouse-exporter/lakehouse-exporter/pipeline"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
	"github.com/lakehouse-exporter/lakehouse-exporter/store"
	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
	"github.com/lakehouse-exporter/lakehouse-exporter/writer"
)

// benchRecords is the size of the benchmark stream; BENCH_RECORDS
// overrides it.
func benchRecords() int {
	if s := os.Getenv("BENCH_RECORDS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return n
		}
	}
	return 200_000
}

// BenchmarkConvert converts one generated GoldenGate stream (4 tables, 12
// columns, 30% updates, 10% deletes) to zstd Parquet, with the exporter and
// with DuckDB's read_json → COPY ... (FORMAT parquet) in the same run, so
// that the two figures can be compared (scripts/bench.sh prints the ratio).
func BenchmarkConvert(b *testing.B) {
	n := benchRecords()
	in := filepath.Join(b.TempDir(), "stream.jsonl")
	f, err := os.Create(in)
	if err != nil {
		b.Fatal(err)
	}
	tableCount := 4
	if v, err := strconv.Atoi(os.Getenv("BENCH_TABLES")); err == nil && v > 0 {
		tableCount = v
	}
	st, err := gen.Write(f, gen.Options{Records: n, Tables: tableCount, Columns: 12, Seed: 1})
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	// report gives records/s by the clock and the process's CPU time per
	// record since cpu0: on a shared machine the clock measures the
	// neighbours too, the CPU time much less so.
	report := func(b *testing.B, cpu0 time.Duration) {
		secs := b.Elapsed().Seconds() / float64(b.N)
		b.ReportMetric(float64(st.DML)/secs, "records/s")
		b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N)/float64(st.DML), "cpu-ns/record")
		b.ReportMetric(float64(st.Bytes)/secs/1e6, "MB/s")
		b.ReportMetric(0, "ns/op")
	}

	fromFile := func() (source.Source, error) { return source.NewFiles([]string{in}, 0, nil) }
	var exportWith func(b *testing.B, st pipeline.Store, open func() (source.Source, error), with func(*pipeline.Config))
	// exportTo runs the exporter from a fresh source into st and checks
	// that every row arrived.
	exportTo := func(b *testing.B, st pipeline.Store, open func() (source.Source, error)) {
		exportWith(b, st, open, func(*pipeline.Config) {})
	}
	exportWith = func(b *testing.B, st pipeline.Store, open func() (source.Source, error), with func(*pipeline.Config)) {
		src, err := open()
		if err != nil {
			b.Fatal(err)
		}
		dec, _ := cdc.NewGoldenGate(cdc.GoldenGateNames{})
		cfg := pipeline.Config{Source: src, Store: st, Decoder: dec, MaxRejects: 0,
			NewDecoder: newGG, DecodeWorkers: decodeWorkers(),
			Schema: arrowschema.Options{BeforeImage: true}, Writer: writer.Config{MaxRows: 25_000}}
		with(&cfg)
		sum, err := pipeline.Run(context.Background(), cfg)
		src.Close()
		if err != nil {
			b.Fatal(err)
		}
		var rows int64
		for _, r := range sum.RowsByTable {
			rows += r
		}
		if rows != int64(n) {
			b.Fatalf("wrote %d rows, want %d", rows, n)
		}
	}

	b.Run("exporter", func(b *testing.B) {
		b.ReportAllocs()
		var out int64
		cpu0 := processCPU()
		for i := 0; b.Loop(); i++ {
			dir := filepath.Join(b.TempDir(), strconv.Itoa(i))
			st, _ := store.NewLocal(dir)
			exportTo(b, st, fromFile)
			out = dirSize(dir)
			os.RemoveAll(dir)
		}
		report(b, cpu0)
		b.ReportMetric(float64(out), "out-bytes")
		// The process's peak RSS so far: run this sub-benchmark alone
		// (-bench 'Convert/exporter$') for a figure that is the exporter's.
		var ru syscall.Rusage
		if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
			b.ReportMetric(float64(ru.Maxrss)/1024, "peak-rss-MiB")
		}
	})

	// The same export publishing every table to Iceberg through the SQL
	// catalog: on the PostgreSQL of EXPORTER_TEST_POSTGRES_DSN when it is
	// set (scripts/bench-catalog.sh starts one), else on SQLite. Each
	// iteration gets a catalog of its own, so every run creates its
	// tables anew.
	catalogFor := func(b *testing.B, dir string, i int) tables.Config {
		cat := tables.Config{Kind: tables.SQL, Name: fmt.Sprintf("bench%d_%d", i, time.Now().UnixNano()),
			URI: "sqlite://" + filepath.Join(b.TempDir(), "catalog.db"), Warehouse: "file://" + filepath.Join(dir, "_iceberg")}
		if dsn := os.Getenv("EXPORTER_TEST_POSTGRES_DSN"); dsn != "" {
			cat.URI = dsn
		}
		return cat
	}
	b.Run("exporter-catalog", func(b *testing.B) {
		b.ReportAllocs()
		var commits commitClock
		cpu0 := processCPU()
		for i := 0; b.Loop(); i++ {
			dir := filepath.Join(b.TempDir(), strconv.Itoa(i))
			st, _ := store.NewLocal(dir)
			cat := catalogFor(b, dir, i)
			cat.Observer = &commits
			exportWith(b, st, fromFile, func(c *pipeline.Config) { c.Catalog = &cat })
			os.RemoveAll(dir)
		}
		report(b, cpu0)
		commits.report(b)
	})
	// The tables exist already (created by an export before the clock
	// starts): what every run after the first pays.
	b.Run("exporter-catalog-warm", func(b *testing.B) {
		b.ReportAllocs()
		warehouse := b.TempDir()
		cat := catalogFor(b, warehouse, 0)
		first, _ := store.NewLocal(filepath.Join(b.TempDir(), "first"))
		exportWith(b, first, fromFile, func(c *pipeline.Config) { c.Catalog = &cat })
		var commits commitClock
		cat.Observer = &commits
		cpu0 := processCPU()
		for i := 0; b.Loop(); i++ {
			dir := filepath.Join(b.TempDir(), strconv.Itoa(i))
			st, _ := store.NewLocal(dir)
			exportWith(b, st, fromFile, func(c *pipeline.Config) { c.Catalog = &cat })
			os.RemoveAll(dir)
		}
		report(b, cpu0)
		commits.report(b)
	})

	// The same export to MinIO: uploads overlap decoding, so this should
	// stay close to the local figure.
	b.Run("exporter-s3", func(b *testing.B) {
		creds := miniotest.Shared(b)
		b.ReportAllocs()
		cpu0 := processCPU()
		for i := 0; b.Loop(); i++ {
			st, _ := miniotest.NewBucket(b, creds, "bench", nil)
			exportTo(b, st, fromFile)
		}
		report(b, cpu0)
	})

	// Kafka → Parquet, the production path, to a local folder and to
	// MinIO. The broker is the Apache Kafka broker of
	// EXPORTER_TEST_KAFKA_BROKERS when it is set (scripts/bench-paths.sh
	// starts one), else kfake in this process, whose own work then counts
	// against the exporter. The topic (BENCH_PARTITIONS partitions, 3 by
	// default) is filled once; each iteration drains it with a new
	// consumer group.
	var kafkaAddrs []string
	var kafkaTopic string
	fromKafka := func(i int) func() (source.Source, error) {
		group := fmt.Sprintf("bench-%d-%d", i, time.Now().UnixNano())
		return func() (source.Source, error) {
			return source.NewKafka(source.KafkaConfig{Brokers: kafkaAddrs, Topics: []string{kafkaTopic}, Group: group, Once: true})
		}
	}
	parent := b
	fillKafka := func(b *testing.B) {
		if kafkaAddrs != nil {
			return
		}
		partitions := 3
		if v, err := strconv.Atoi(os.Getenv("BENCH_PARTITIONS")); err == nil && v > 0 {
			partitions = v
		}
		// kfake lives as long as BenchmarkConvert, for both sub-benchmarks.
		kafkaAddrs = kafkatest.Cluster(parent)
		kafkaTopic = kafkatest.Unique("bench")
		kafkatest.CreateTopic(b, kafkaAddrs, kafkaTopic, partitions)
		data, _ := os.ReadFile(in)
		lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
		kafkatest.Produce(b, kafkaAddrs, kafkaTopic, lines, kafkatest.TableKey)
		// One drain before the clock starts: the broker's JVM compiles
		// its fetch path during the first one (a running broker has),
		// which made whichever Kafka sub-benchmark ran first the slower.
		st, _ := store.NewLocal(b.TempDir())
		exportTo(b, st, fromKafka(-1))
	}
	b.Run("exporter-kafka", func(b *testing.B) {
		fillKafka(b)
		b.ReportAllocs()
		cpu0 := processCPU()
		for i := 0; b.Loop(); i++ {
			dir := filepath.Join(b.TempDir(), strconv.Itoa(i))
			st, _ := store.NewLocal(dir)
			exportTo(b, st, fromKafka(i))
			os.RemoveAll(dir)
		}
		report(b, cpu0)
	})
	b.Run("exporter-kafka-s3", func(b *testing.B) {
		creds := miniotest.Shared(b)
		fillKafka(b)
		b.ReportAllocs()
		cpu0 := processCPU()
		for i := 0; b.Loop(); i++ {
			st, _ := miniotest.NewBucket(b, creds, "bench", nil)
			exportTo(b, st, fromKafka(i))
		}
		report(b, cpu0)
	})

	b.Run("duckdb", func(b *testing.B) {
		db := duckq.OpenTB(b)
		var out int64
		cpu0 := processCPU()
		for i := 0; b.Loop(); i++ {
			dir := filepath.Join(b.TempDir(), strconv.Itoa(i))
			if _, err := db.Exec(duckq.ConvertSQL(in, dir)); err != nil {
				b.Fatal(err)
			}
			out = dirSize(dir)
			os.RemoveAll(dir)
		}
		report(b, cpu0)
		b.ReportMetric(float64(out), "out-bytes")
	})
}

func newGG() pipeline.Decoder { d, _ := cdc.NewGoldenGate(cdc.GoldenGateNames{}); return d }

// decodeWorkers is runtime.GOMAXPROCS, or BENCH_DECODE_WORKERS (0 turns
// parallel decoding off, for before/after comparisons).
func decodeWorkers() int {
	if s := os.Getenv("BENCH_DECODE_WORKERS"); s != "" {
		n, _ := strconv.Atoi(s)
		return n
	}
	return runtime.GOMAXPROCS(0)
}

func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// processCPU is the CPU time, user and system, the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// commitClock counts the Iceberg commits of a benchmark's runs and sums
// their latencies: the commit latency per table per round.
type commitClock struct {
	n, nanos atomic.Int64
}

func (c *commitClock) IcebergCommitted(_ string, _ int64, _ time.Time, latency time.Duration) {
	c.n.Add(1)
	c.nanos.Add(int64(latency))
}

func (c *commitClock) IcebergConflict(string) {}

// report gives the commits per run and their mean latency.
func (c *commitClock) report(b *testing.B) {
	if n := c.n.Load(); n > 0 {
		b.ReportMetric(float64(n)/float64(b.N), "commits/run")
		b.ReportMetric(float64(c.nanos.Load())/float64(n)/1e6, "commit-ms")
	}
}
