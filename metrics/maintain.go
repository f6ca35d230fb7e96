package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// MaintainCounts is what one table's maintenance pass did.
type MaintainCounts struct {
	FilesRewritten   int   // small files replaced by compaction
	FilesWritten     int   // compacted files committed
	BytesBefore      int64 // bytes of the files replaced
	BytesAfter       int64 // bytes of the files committed
	SnapshotsExpired int
	Orphans          int // orphan files removed
	Took             time.Duration
}

// maintainMetrics are the counters of `exporter maintain`.
type maintainMetrics struct {
	rewritten, written, before, after, expired, orphans *prometheus.CounterVec // table
	seconds                                             prometheus.Histogram
}

func newMaintainMetrics(reg *prometheus.Registry) *maintainMetrics {
	counter := func(name, help string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"table"})
		reg.MustRegister(c)
		return c
	}
	m := &maintainMetrics{
		rewritten: counter("exporter_maintain_files_rewritten_total", "Small data files compaction replaced, by table."),
		written:   counter("exporter_maintain_files_written_total", "Compacted data files committed in their place, by table."),
		before:    counter("exporter_maintain_bytes_before_total", "Bytes of the data files compaction replaced, by table."),
		after:     counter("exporter_maintain_bytes_after_total", "Bytes of the compacted data files committed, by table."),
		expired:   counter("exporter_maintain_snapshots_expired_total", "Snapshots expired, by table."),
		orphans:   counter("exporter_maintain_orphans_removed_total", "Orphan files deleted, by table."),
		seconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "exporter_maintain_table_seconds",
			Help: "Time of one table's maintenance pass.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 14)}),
	}
	reg.MustRegister(m.seconds)
	return m
}

// TableMaintained records one table's maintenance pass.
func (m *Metrics) TableMaintained(table string, c MaintainCounts) {
	mm := m.maintain
	mm.rewritten.WithLabelValues(table).Add(float64(c.FilesRewritten))
	mm.written.WithLabelValues(table).Add(float64(c.FilesWritten))
	mm.before.WithLabelValues(table).Add(float64(c.BytesBefore))
	mm.after.WithLabelValues(table).Add(float64(c.BytesAfter))
	mm.expired.WithLabelValues(table).Add(float64(c.SnapshotsExpired))
	mm.orphans.WithLabelValues(table).Add(float64(c.Orphans))
	mm.seconds.Observe(c.Took.Seconds())
}

// WriteTextfile writes every metric to path in Prometheus' text format
// (for node_exporter's textfile collector, after a one-shot command).
func (m *Metrics) WriteTextfile(path string) error { return prometheus.WriteToTextfile(path, m.reg) }
