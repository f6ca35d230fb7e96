package tables

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// State is a table's current snapshot as the catalog has it, for people
// and for the queries that name its metadata file.
type State struct {
	// Table is the source's qualified name, Identifier its Iceberg
	// table's.
	Table      string
	Identifier table.Identifier
	// Exists is false when the catalog has no table for it (nothing was
	// published with this catalog, or under another namespace).
	Exists bool
	// SnapshotID is the current snapshot; 0 when the table has none yet.
	SnapshotID int64
	// CommittedAt is when the current snapshot was committed.
	CommittedAt time.Time
	// Rows and DataFiles are the snapshot summary's total-records and
	// total-data-files; -1 when the summary does not say.
	Rows      int64
	DataFiles int64
	// MetadataLocation is the table's current metadata file, which
	// readers without the catalog (DuckDB's iceberg_scan, pyiceberg's
	// StaticTable) open.
	MetadataLocation string
}

// Snapshot summary keys every Iceberg writer maintains.
const (
	summaryTotalRecords   = "total-records"
	summaryTotalDataFiles = "total-data-files"
)

// State loads the table of a source table and reports its current
// snapshot.
func (p *Publisher) State(ctx context.Context, qualTable string) (State, error) {
	ident, err := p.Identifier(qualTable)
	if err != nil {
		return State{Table: qualTable}, err
	}
	st := State{Table: qualTable, Identifier: ident, Rows: -1, DataFiles: -1}
	tbl, err := p.cat.LoadTable(ctx, ident)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("load table %s: %w", strings.Join(ident, "."), err)
	}
	st.Exists = true
	st.MetadataLocation = tbl.MetadataLocation()
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return st, nil
	}
	st.SnapshotID = snap.SnapshotID
	st.CommittedAt = time.UnixMilli(snap.TimestampMs).UTC()
	if snap.Summary != nil {
		st.Rows = summaryCount(snap.Summary.Properties[summaryTotalRecords])
		st.DataFiles = summaryCount(snap.Summary.Properties[summaryTotalDataFiles])
	}
	return st, nil
}

func summaryCount(v string) int64 {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// Read scans the current snapshot of the table of a source table through
// the catalog with iceberg-go's table scan: the columns named (all when
// none), at most limit rows (all when limit <= 0). The caller releases
// the result.
func (p *Publisher) Read(ctx context.Context, qualTable string, columns []string, limit int64) (arrow.Table, error) {
	ident, err := p.Identifier(qualTable)
	if err != nil {
		return nil, err
	}
	tbl, err := p.cat.LoadTable(ctx, ident)
	if err != nil {
		return nil, fmt.Errorf("load table %s: %w", strings.Join(ident, "."), err)
	}
	var opts []table.ScanOption
	if len(columns) > 0 {
		opts = append(opts, table.WithSelectedFields(columns...))
	}
	if limit > 0 {
		opts = append(opts, table.WithLimit(limit))
	}
	out, err := tbl.Scan(opts...).ToArrowTable(ctx)
	if err != nil {
		return nil, fmt.Errorf("scan table %s: %w", strings.Join(ident, "."), err)
	}
	return out, nil
}
