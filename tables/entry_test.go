package tables

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
)

// TestEntriesBuiltAheadArePublished: a file's manifest entry built as it
// is uploaded (PrepareEntry) is the one its round commits while the
// table's partition spec and the version's schema are the ones it was
// built with, and is built again from the footer's bytes otherwise; a
// round of such files publishes the rows it holds.
func TestEntriesBuiltAheadArePublished(t *testing.T) {
	ctx := context.Background()
	fx := entryFixture(t)
	p, tbl, f := fx.p, fx.tbl, fx.f
	data, err := os.ReadFile(strings.TrimPrefix(f.Location, "file://"))
	if err != nil {
		t.Fatal(err)
	}
	if f.FooterBytes, err = FooterBytes(data); err != nil {
		t.Fatal(err)
	}
	f.Footer = nil // as the exporter holds a round's files

	built := p.PrepareEntry(f)
	if built.entry == nil {
		t.Fatal("no entry built ahead for a file of a prepared version")
	}
	if built.entry.df.Count() != 3 || built.entry.df.FilePath() != f.Location {
		t.Fatalf("entry built ahead: %d rows at %s", built.entry.df.Count(), built.entry.df.FilePath())
	}
	dfs, err := dataFiles(tbl, []DataFile{built})
	if err != nil {
		t.Fatal(err)
	}
	if dfs[0] != built.entry.df {
		t.Fatal("the commit built the entry again although the table's spec and schema are the ones it was built with")
	}
	stale := built
	stale.entry = &builtEntry{df: built.entry.df, specID: built.entry.specID + 1, schemaID: built.entry.schemaID}
	if dfs, err = dataFiles(tbl, []DataFile{stale}); err != nil {
		t.Fatal(err)
	}
	if dfs[0] == built.entry.df || dfs[0].Count() != 3 {
		t.Fatalf("an entry built for another partition spec was committed as it was (rebuilt: %v, %d rows)", dfs[0] != built.entry.df, dfs[0].Count())
	}
	if _, err := p.Publish(ctx, Round{RunID: "run", RoundID: "1", Files: []DataFile{built}}); err != nil {
		t.Fatal(err)
	}
	after, err := p.LoadTable(ctx, "SALES.ORDERS")
	if err != nil {
		t.Fatal(err)
	}
	if rows, _, _ := scan(t, after, after.CurrentSnapshot().SnapshotID); rows != 3 {
		t.Fatalf("%d rows through the catalog, want 3", rows)
	}
}

// TestEntriesBuiltAheadAreForTheirTable: spec and schema ids start over
// in a table dropped and created again under its name, so an entry built
// ahead for the first table must not be committed to the second. Here
// the second is partitioned by hour and the file spans two hours: its
// entry built for the day-partitioned table would put it in one day's
// partition and readers filtering by hour would skip it. Rebuilt for the
// new table, the file is refused instead, also by a commit that began on
// the dropped table and is retried on the new one; and the cache of loaded tables
// takes the new table's state although the old one had more snapshots.
func TestEntriesBuiltAheadAreForTheirTable(t *testing.T) {
	ctx := context.Background()
	fx := entryFixture(t)
	dir, cfg, p, v := fx.dir, fx.cfg, fx.p, fx.v
	built := p.PrepareEntry(fx.f)
	if built.entry == nil {
		t.Fatal("no entry built ahead for a file of a prepared version")
	}
	// The first table gets a few snapshots, so that its state counts more
	// of them than the new table's.
	for i := range 3 {
		g := writeFile(t, dir, fmt.Sprintf("data/part-a%d.parquet", i), v.Schema, 1, []int64{int64(i)}, []time.Time{entryDay}, int64(i))
		if _, err := p.Publish(ctx, Round{RunID: "run", RoundID: fmt.Sprint(i), Files: []DataFile{g}}); err != nil {
			t.Fatal(err)
		}
	}
	ident, err := p.Identifier("SALES.ORDERS")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Catalog().DropTable(ctx, ident); err != nil {
		t.Fatal(err)
	}

	hourly := cfg
	hourly.Partitioning = ByHour
	q, err := Open(ctx, hourly, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if _, err := q.PrepareVersion(ctx, TableVersion{Table: "SALES.ORDERS", Version: 1, Schema: sourceSchema(1)}); err != nil {
		t.Fatal(err)
	}
	recreated, err := q.LoadTable(ctx, "SALES.ORDERS")
	if err != nil {
		t.Fatal(err)
	}
	if recreated.Metadata().DefaultPartitionSpec() != built.entry.specID {
		t.Fatalf("the recreated table's spec id is %d, the entry's %d: the test no longer shows ids starting over",
			recreated.Metadata().DefaultPartitionSpec(), built.entry.specID)
	}
	if dfs, err := dataFiles(recreated, []DataFile{built}); err == nil {
		t.Fatalf("the entry built for the dropped day-partitioned table was committed to the hour-partitioned one (partition %v)", dfs[0].Partition())
	}
	// p still holds the dropped table: its commit fails, and the retry on
	// the table the catalog has now must build the entry for it.
	if _, err := p.Publish(ctx, Round{RunID: "run", RoundID: "late", Files: []DataFile{built}}); err == nil {
		after, lerr := q.LoadTable(ctx, "SALES.ORDERS")
		if lerr != nil {
			t.Fatal(lerr)
		}
		t.Fatalf("a file spanning two hours was committed to the hour-partitioned table (snapshot %v)", after.CurrentSnapshot())
	}

	p.loaded.put(ident, recreated)
	if got := p.loaded.get(ident); got.Metadata().TableUUID() != recreated.Metadata().TableUUID() {
		t.Fatal("the cache kept the dropped table's state over the recreated table's")
	}
}

// entryCase is the orders table (version 1) in a SQLite catalog in dir,
// and a file f of three rows for it on entryDay, spanning two hours.
type entryCase struct {
	dir string
	cfg Config
	p   *Publisher
	v   Prepared
	tbl *table.Table
	f   DataFile
}

var entryDay = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

func entryFixture(t *testing.T) entryCase {
	t.Helper()
	dir := t.TempDir()
	cfg := localCatalogs()["sql-sqlite"](dir)
	p, v, tbl := ordersTable(t, cfg)
	f := writeFile(t, dir, "data/part-1.parquet", v.Schema, 1, []int64{1, 2, 3}, []time.Time{entryDay, entryDay, entryDay.Add(time.Hour)}, 0)
	return entryCase{dir: dir, cfg: cfg, p: p, v: v, tbl: tbl, f: f}
}
