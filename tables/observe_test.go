package tables

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// commitRecorder is an Observer that keeps what it is told.
type commitRecorder struct {
	mu        sync.Mutex
	commits   map[string]int
	conflicts map[string]int
	last      map[string]int64
	at        map[string]time.Time
}

func newCommitRecorder() *commitRecorder {
	return &commitRecorder{commits: map[string]int{}, conflicts: map[string]int{}, last: map[string]int64{}, at: map[string]time.Time{}}
}

func (r *commitRecorder) IcebergCommitted(table string, snapshotID int64, committedAt time.Time, _ time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.commits[table]++
	r.last[table], r.at[table] = snapshotID, committedAt
}

func (r *commitRecorder) IcebergConflict(table string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.conflicts[table]++
}

// racingCatalog answers the first commit made through it with a
// conflict, as a REST catalog's 409 does, after another writer commits:
// the table the commit was built on is then stale.
type racingCatalog struct {
	catalog.Catalog
	race func()
}

// LoadTable loads the table so that its commits go through c.
func (c *racingCatalog) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	tbl, err := c.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, err
	}
	return table.New(ident, tbl.Metadata(), tbl.MetadataLocation(), tbl.FS, c), nil
}

func (c *racingCatalog) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	if race := c.race; race != nil {
		c.race = nil
		race()
		return nil, "", fmt.Errorf("%w: injected: another writer committed first", table.ErrCommitFailed)
	}
	return c.Catalog.CommitTable(ctx, ident, reqs, updates)
}

// TestObserverCountsCommitsAndConflicts: a round whose first commit
// loses to another writer (the catalog says so) is reported as one conflict and one commit,
// whose snapshot is the table's current one; the other writer's commit
// is not this publisher's to report.
func TestObserverCountsCommitsAndConflicts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := Config{Kind: SQL, URI: "sqlite://" + filepath.Join(dir, "catalog.db"), Warehouse: "file://" + filepath.Join(dir, "warehouse")}
	rec := newCommitRecorder()
	withObserver := cfg
	withObserver.Observer = rec
	p, err := Open(ctx, withObserver, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	other, err := Open(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	// The other writer creates the table and commits a first round.
	v1, err := other.PrepareVersion(ctx, TableVersion{Table: "SALES.ORDERS", Version: 1, Schema: sourceSchema(1)})
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	first := writeFile(t, dir, "data/first.parquet", v1.Schema, 1, []int64{1}, []time.Time{day}, 0)
	mine := writeFile(t, dir, "data/mine.parquet", v1.Schema, 1, []int64{2, 3}, []time.Time{day, day}, 1)
	theirs := writeFile(t, dir, "data/theirs.parquet", v1.Schema, 1, []int64{4}, []time.Time{day}, 10)
	if _, err := other.Publish(ctx, Round{RunID: "other", RoundID: "0", Files: []DataFile{first}}); err != nil {
		t.Fatal(err)
	}

	// This publisher loads the table through the racing catalog, whose
	// first commit lets the other writer commit again and then reports
	// the conflict.
	inner := p.cat
	racing := &racingCatalog{Catalog: inner}
	p.cat = racing
	defer func() { p.cat = inner }()
	if _, err := p.PrepareVersion(ctx, TableVersion{Table: "SALES.ORDERS", Version: 1, Schema: sourceSchema(1)}); err != nil {
		t.Fatal(err)
	}
	racing.race = func() {
		if _, err := other.Publish(ctx, Round{RunID: "other", RoundID: "1", Files: []DataFile{theirs}}); err != nil {
			t.Errorf("the other writer's commit: %v", err)
		}
	}
	if _, err := p.Publish(ctx, Round{RunID: "mine", RoundID: "1", Files: []DataFile{mine}}); err != nil {
		t.Fatal(err)
	}

	tbl, err := inner.LoadTable(ctx, v1.Identifier)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tbl.Metadata().Snapshots()); n != 3 {
		t.Fatalf("the table has %d snapshots, want 3 (the other writer's two and this one's)", n)
	}
	cur := tbl.CurrentSnapshot()
	if s := RoundSnapshot(tbl, "mine", "1"); s == nil || s.SnapshotID != cur.SnapshotID {
		t.Fatalf("the current snapshot is not this publisher's round")
	}
	if rec.commits["SALES.ORDERS"] != 1 || rec.conflicts["SALES.ORDERS"] != 1 {
		t.Errorf("reported %d commits and %d conflicts, want 1 and 1", rec.commits["SALES.ORDERS"], rec.conflicts["SALES.ORDERS"])
	}
	if rec.last["SALES.ORDERS"] != cur.SnapshotID || !rec.at["SALES.ORDERS"].Equal(time.UnixMilli(cur.TimestampMs)) {
		t.Errorf("reported snapshot %d at %v, the table's current is %d at %d ms", rec.last["SALES.ORDERS"], rec.at["SALES.ORDERS"], cur.SnapshotID, cur.TimestampMs)
	}
}
