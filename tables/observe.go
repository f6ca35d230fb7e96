package tables

import (
	"time"

	"github.com/apache/iceberg-go/table"
)

// Observer is told about the commits a Publisher makes, for metrics
// (metrics.Metrics is one). Its methods must be cheap and safe for
// concurrent use.
type Observer interface {
	// IcebergCommitted reports a snapshot committed to the table of a
	// source table (a round's files, or files withdrawn by recovery):
	// its id, when the catalog recorded it, and how long the commit call
	// that made it took.
	IcebergCommitted(table string, snapshotID int64, committedAt time.Time, latency time.Duration)
	// IcebergConflict reports a commit to the table of a source table
	// that lost a race with another writer and is tried again.
	IcebergConflict(table string)
}

// committed reports a commit to the observer, if any.
func (p *Publisher) committed(qualTable string, snap *table.Snapshot, latency time.Duration) {
	if p.cfg.Observer == nil || snap == nil {
		return
	}
	p.cfg.Observer.IcebergCommitted(qualTable, snap.SnapshotID, time.UnixMilli(snap.TimestampMs).UTC(), latency)
}

// conflicted reports a conflict to the observer, if any.
func (p *Publisher) conflicted(qualTable string) {
	if p.cfg.Observer != nil {
		p.cfg.Observer.IcebergConflict(qualTable)
	}
}
