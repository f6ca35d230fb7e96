// Package metrics exposes what the exporter does as Prometheus metrics on
// its own registry, with bounded labels (tables, ops, reasons, partitions).
package metrics

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics implements the pipeline's observer and serves /metrics.
type Metrics struct {
	reg *prometheus.Registry

	records        *prometheus.CounterVec // table, op
	recordCounters counterCache[[2]string]
	readCounters   counterCache[string]
	rowsWritten    *prometheus.CounterVec // table
	rejected       *prometheus.CounterVec // reason
	files          *prometheus.CounterVec // table
	bytes          *prometheus.CounterVec // table
	flushes        *prometheus.CounterVec // reason
	read           *prometheus.CounterVec // partition
	uploadSeconds  prometheus.Histogram
	storageRetries *prometheus.CounterVec // op
	fallbacks      *prometheus.CounterVec // reason
	buffered       prometheus.Gauge
	budget         prometheus.Gauge
	versions       *prometheus.GaugeVec // table
	lastCheckpoint prometheus.Gauge
	lag            *prometheus.GaugeVec // partition

	icebergCommits    *prometheus.CounterVec // table
	icebergConflicts  *prometheus.CounterVec // table
	icebergSeconds    prometheus.Histogram
	icebergLastCommit *prometheus.GaugeVec // table
	icebergSnapshot   *prometheus.GaugeVec // table, snapshot_id
	maintain          *maintainMetrics
	snapshotsMu       sync.Mutex
	snapshots         map[string]string // table → the snapshot_id label of its icebergSnapshot series

	newestOpTS atomic.Int64 // unix micro of the newest op_ts in a durable file
	now        func() time.Time
}

// New builds the metrics on a fresh registry.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), now: time.Now}
	f := func(c prometheus.Collector) { m.reg.MustRegister(c) }
	m.records = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "exporter_records_total",
		Help: "DML records accepted into a table buffer, by table and op."}, []string{"table", "op"})
	m.rowsWritten = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "exporter_rows_written_total",
		Help: "Rows in data files that are durable in the sink, by table."}, []string{"table"})
	m.rejected = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "exporter_rejected_total",
		Help: "Records sent to the dead-letter output, by reason."}, []string{"reason"})
	m.files = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "exporter_files_total",
		Help: "Data files written, by table."}, []string{"table"})
	m.bytes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "exporter_file_bytes_total",
		Help: "Bytes of data files written, by table."}, []string{"table"})
	m.flushes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "exporter_flushes_total",
		Help: "Files closed, by reason: rows, bytes, age, interval, ddl, budget, rebalance, shutdown."}, []string{"reason"})
	m.read = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "exporter_records_read_total",
		Help: "Records read, by source partition."}, []string{"partition"})
	m.uploadSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "exporter_upload_seconds",
		Help: "Time to upload one data file, retries included.", Buckets: prometheus.ExponentialBuckets(0.005, 2, 14)})
	m.storageRetries = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "exporter_storage_retries_total",
		Help: "Storage requests retried after throttling, 5xx or network errors, by operation."}, []string{"op"})
	m.buffered = prometheus.NewGauge(prometheus.GaugeOpts{Name: "exporter_buffered_bytes",
		Help: "Memory the data holds, as measured: open table buffers, files being encoded, encoded files waiting for upload."})
	m.budget = prometheus.NewGauge(prometheus.GaugeOpts{Name: "exporter_buffer_budget_bytes",
		Help: "The memory budget (--max-buffer-bytes); the data is kept under 45% of it."})
	m.versions = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "exporter_schema_version",
		Help: "Schema version in force, by table."}, []string{"table"})
	m.lastCheckpoint = prometheus.NewGauge(prometheus.GaugeOpts{Name: "exporter_last_checkpoint_timestamp_seconds",
		Help: "When the last checkpoint was written (unix seconds)."})
	m.lag = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "exporter_source_lag_records",
		Help: "Records of a source partition behind the one just read (Kafka consumer lag)."}, []string{"partition"})
	lag := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "exporter_event_time_lag_seconds",
		Help: "Now minus the newest op_ts in a durable file; NaN before the first file."}, func() float64 {
		us := m.newestOpTS.Load()
		if us == 0 {
			return math.NaN()
		}
		return m.now().Sub(time.UnixMicro(us)).Seconds()
	})
	m.fallbacks = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "exporter_encoder_fallbacks_total",
		Help: "Data files written by pqarrow because the lean Parquet encoder does not take their shape, by reason: schema, batch."}, []string{"reason"})
	m.icebergCommits = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "exporter_iceberg_commits_total",
		Help: "Snapshots committed to the Iceberg tables (a round's files, or files withdrawn by recovery), by table."}, []string{"table"})
	m.icebergConflicts = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "exporter_iceberg_commit_conflicts_total",
		Help: "Iceberg commits that lost a race with another writer and were tried again, by table."}, []string{"table"})
	m.icebergSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "exporter_iceberg_commit_seconds",
		Help: "Time of one table's Iceberg commit that made a snapshot (manifests written, catalog updated).", Buckets: prometheus.ExponentialBuckets(0.005, 2, 14)})
	m.icebergLastCommit = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "exporter_iceberg_last_commit_timestamp_seconds",
		Help: "When the catalog recorded the last snapshot this process committed to a table (unix seconds), by table."}, []string{"table"})
	m.icebergSnapshot = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "exporter_iceberg_last_snapshot_info",
		Help: "Always 1: the id of the last snapshot this process committed to a table, as a label (a float loses snapshot ids' low digits)."}, []string{"table", "snapshot_id"})
	m.snapshots = map[string]string{}
	m.maintain = newMaintainMetrics(m.reg)
	for _, c := range []prometheus.Collector{m.icebergCommits, m.icebergConflicts, m.icebergSeconds, m.icebergLastCommit, m.icebergSnapshot} {
		f(c)
	}
	for _, c := range []prometheus.Collector{m.records, m.rowsWritten, m.rejected, m.files, m.bytes, m.flushes, m.read,
		m.uploadSeconds, m.storageRetries, m.fallbacks, m.buffered, m.budget, m.versions, m.lastCheckpoint, lag, m.lag,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		f(c)
	}
	return m
}

// Registry is the registry the metrics live on.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// RecordRead counts a record read from partition.
func (m *Metrics) RecordRead(partition string) {
	m.readCounters.get(partition, func() prometheus.Counter { return m.read.WithLabelValues(partition) }).Inc()
}

// RecordAccepted counts a DML record decoded into a buffer.
func (m *Metrics) RecordAccepted(table, op string) {
	m.recordCounters.get([2]string{table, op}, func() prometheus.Counter { return m.records.WithLabelValues(table, op) }).Inc()
}

// counterCache remembers a vector's counters by their label values. The
// two per-record counters were looked up by the vector itself, which
// hashes the label values a byte at a time: 4% of an export's CPU.
type counterCache[K comparable] struct {
	mu sync.Mutex
	m  map[K]prometheus.Counter
}

func (c *counterCache[K]) get(key K, newCounter func() prometheus.Counter) prometheus.Counter {
	c.mu.Lock()
	defer c.mu.Unlock()
	counter, ok := c.m[key]
	if !ok {
		if c.m == nil {
			c.m = map[K]prometheus.Counter{}
		}
		counter = newCounter()
		c.m[key] = counter
	}
	return counter
}

// Rejected counts a dead letter.
func (m *Metrics) Rejected(reason string) { m.rejected.WithLabelValues(reason).Inc() }

// FileDurable records a data file that is in the sink.
func (m *Metrics) FileDurable(table string, rows, bytes int, reason string, upload time.Duration, newestOpTS time.Time) {
	m.rowsWritten.WithLabelValues(table).Add(float64(rows))
	m.files.WithLabelValues(table).Inc()
	m.bytes.WithLabelValues(table).Add(float64(bytes))
	m.flushes.WithLabelValues(reason).Inc()
	m.uploadSeconds.Observe(upload.Seconds())
	us := newestOpTS.UnixMicro()
	for {
		cur := m.newestOpTS.Load()
		if us <= cur || m.newestOpTS.CompareAndSwap(cur, us) {
			return
		}
	}
}

// SchemaVersion records the version in force for table.
func (m *Metrics) SchemaVersion(table string, version int) {
	m.versions.WithLabelValues(table).Set(float64(version))
}

// Checkpointed records a written checkpoint.
func (m *Metrics) Checkpointed(at time.Time) { m.lastCheckpoint.Set(float64(at.UnixNano()) / 1e9) }

// Buffered records the bytes in open buffers and the configured budget.
func (m *Metrics) Buffered(bytes, budget int64) {
	m.buffered.Set(float64(bytes))
	m.budget.Set(float64(budget))
}

// SourceLag records how far a partition's reader is behind its end.
func (m *Metrics) SourceLag(partition string, lag int64) {
	m.lag.WithLabelValues(partition).Set(float64(lag))
}

// StorageRetry counts a retried storage request.
func (m *Metrics) StorageRetry(op string) { m.storageRetries.WithLabelValues(op).Inc() }

// EncoderFallback counts a data file pqarrow wrote because the lean
// encoder does not take its shape (parquetenc.Observer).
func (m *Metrics) EncoderFallback(reason string) { m.fallbacks.WithLabelValues(reason).Inc() }

// IcebergCommitted records a snapshot committed to the Iceberg table of
// a source table (tables.Observer).
func (m *Metrics) IcebergCommitted(table string, snapshotID int64, committedAt time.Time, latency time.Duration) {
	m.icebergCommits.WithLabelValues(table).Inc()
	m.icebergSeconds.Observe(latency.Seconds())
	m.icebergLastCommit.WithLabelValues(table).Set(float64(committedAt.UnixMilli()) / 1e3)
	id := strconv.FormatInt(snapshotID, 10)
	m.snapshotsMu.Lock()
	defer m.snapshotsMu.Unlock()
	// One series per table: the previous snapshot's goes.
	if prev, ok := m.snapshots[table]; ok && prev != id {
		m.icebergSnapshot.DeleteLabelValues(table, prev)
	}
	m.snapshots[table] = id
	m.icebergSnapshot.WithLabelValues(table, id).Set(1)
}

// IcebergConflict counts an Iceberg commit tried again after a conflict
// (tables.Observer).
func (m *Metrics) IcebergConflict(table string) { m.icebergConflicts.WithLabelValues(table).Inc() }

// Probe says whether the exporter is ready; nil means ready.
type Probe func(ctx context.Context) error

// Handler serves /metrics, /healthz (the process is alive) and /readyz
// (every probe passes: the sink is reachable, the pipeline is not stalled).
func (m *Metrics) Handler(probes ...Probe) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		defer cancel()
		for _, p := range probes {
			if err := p(ctx); err != nil {
				http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		w.Write([]byte("ready\n"))
	})
	return mux
}
