package tables

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEntriesBuiltAheadArePublished: a file's manifest entry built as it
// is uploaded (PrepareEntry) is the one its round commits while the
// table's partition spec and the version's schema are the ones it was
// built with, and is built again from the footer's bytes otherwise; a
// round of such files publishes the rows it holds.
func TestEntriesBuiltAheadArePublished(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := Config{Kind: SQL, URI: "sqlite://" + filepath.Join(dir, "catalog.db"), Warehouse: "file://" + filepath.Join(dir, "wh")}
	p, v, tbl := ordersTable(t, cfg)
	day := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	f := writeFile(t, dir, "data/part-1.parquet", v.Schema, 1, []int64{1, 2, 3}, []time.Time{day, day, day.Add(time.Hour)}, 0)
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
