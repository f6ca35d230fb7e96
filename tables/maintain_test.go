package tables

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// TestRewriteRetriesAfterAConcurrentAppend: publisher a lists the
// table's files; another publisher appends a round; a's rewrite of the
// files it listed is built on the state before the append, the catalog
// refuses it, and a builds it again on the new state: the table then
// holds the compacted file and the appended one, and not the replaced
// ones. A rewrite of a file another writer withdrew meanwhile gives up
// (Maintenance.GivenUp) and commits nothing.
func TestRewriteRetriesAfterAConcurrentAppend(t *testing.T) {
	for name, mk := range localCatalogs() {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			ctx := context.Background()
			rec := newCommitRecorder()
			open := func() *Publisher {
				cfg := mk(dir)
				cfg.Observer = rec
				p, err := Open(ctx, cfg, nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { p.Close() })
				return p
			}
			a, b := open(), open()
			day := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
			file := func(p *Publisher, name string, ids ...int64) DataFile {
				v, err := p.PrepareVersion(ctx, TableVersion{Table: "SALES.ORDERS", Version: 1, Schema: sourceSchema(1)})
				if err != nil {
					t.Fatal(err)
				}
				times := make([]time.Time, len(ids))
				for i := range times {
					times[i] = day
				}
				return writeFile(t, dir, "data/"+name+".parquet", v.Schema, 1, ids, times, ids[0])
			}
			publish := func(p *Publisher, round string, fs ...DataFile) {
				if _, err := p.Publish(ctx, Round{RunID: "run", RoundID: round, Files: fs}); err != nil {
					t.Fatal(err)
				}
			}
			publish(a, "1", file(a, "small-1", 1), file(a, "small-2", 2))
			tbl, err := a.LoadTable(ctx, "SALES.ORDERS")
			if err != nil {
				t.Fatal(err)
			}
			live, err := LiveFiles(ctx, tbl)
			if err != nil {
				t.Fatal(err)
			}
			publish(b, "2", file(b, "appended", 3)) // lands between a's listing and its commit
			compacted := file(a, "compacted", 1, 2)
			old := []string{live[0].File.FilePath(), live[1].File.FilePath()}
			if m, err := a.Maintain(ctx, "SALES.ORDERS", []RewriteGroup{{Old: []iceberg.DataFile{live[0].File, live[1].File}, Add: []DataFile{compacted}}}, nil); err != nil || len(m.Replaced) != 1 {
				t.Fatalf("rewrite after a concurrent append: %+v, %v", m, err)
			}
			if rec.conflicts["SALES.ORDERS"] != 1 {
				t.Errorf("%d conflicts, want one: the rewrite built on the state before the append must be refused and built again", rec.conflicts["SALES.ORDERS"])
			}
			holds := func() map[string]bool {
				tbl, err := b.LoadTable(ctx, "SALES.ORDERS")
				if err != nil {
					t.Fatal(err)
				}
				live, err := LiveFiles(ctx, tbl)
				if err != nil {
					t.Fatal(err)
				}
				out := map[string]bool{}
				for _, f := range live {
					out[filepath.Base(f.File.FilePath())] = true
				}
				return out
			}
			got := holds()
			if fmt.Sprint(got) != fmt.Sprint(map[string]bool{"appended.parquet": true, "compacted.parquet": true}) {
				t.Fatalf("the table holds %v after the rewrite (replaced %v), want the appended and the compacted file", got, old)
			}

			// b withdraws the compacted file; a, still holding the
			// state where it is current, tries to rewrite it.
			if n, err := b.Withdraw(ctx, "SALES.ORDERS", []string{compacted.Location}); err != nil || n != 1 {
				t.Fatalf("withdraw: %d, %v", n, err)
			}
			tbl, _ = a.CachedTable(ctx, "SALES.ORDERS")
			live, _ = LiveFiles(ctx, tbl)
			var stale []iceberg.DataFile
			for _, f := range live {
				stale = append(stale, f.File)
			}
			gaveUp, err := a.Maintain(ctx, "SALES.ORDERS", []RewriteGroup{{Old: stale, Add: []DataFile{file(a, "again", 1, 2, 3)}}}, nil)
			if err != nil || len(gaveUp.Replaced) != 0 || fmt.Sprint(gaveUp.GivenUp) != "[0]" {
				t.Fatalf("rewrite of a withdrawn file: %+v, %v; want it given up", gaveUp, err)
			}
			if got := holds(); len(got) != 1 || !got["appended.parquet"] {
				t.Errorf("after the given-up rewrite the table holds %v, want the appended file alone", got)
			}

			// Two groups in one commit, built on a's stale state again:
			// the group whose file is gone is left out, the other is
			// replaced, and the snapshots expire in that same commit.
			var appended, gone iceberg.DataFile
			for _, f := range stale {
				if filepath.Base(f.FilePath()) == "appended.parquet" {
					appended = f
				} else {
					gone = f
				}
			}
			commitsBefore := rec.commits["SALES.ORDERS"]
			m, err := a.Maintain(ctx, "SALES.ORDERS", []RewriteGroup{
				{Old: []iceberg.DataFile{gone}, Add: []DataFile{file(a, "gone-group", 1, 2)}},
				{Old: []iceberg.DataFile{appended}, Add: []DataFile{file(a, "kept-group", 3)}},
			}, &ExpiryPolicy{Keep: 1, OlderThan: func(context.Context, *table.Table, bool) (time.Duration, error) { return time.Nanosecond, nil }})
			if err != nil {
				t.Fatalf("maintain: %v", err)
			}
			if fmt.Sprint(m.Replaced, m.GivenUp) != "[1] [0]" || m.Expiry.Expired == 0 || m.Expiry.Kept != 1 {
				t.Errorf("maintain replaced groups %v, gave up %v, expiry %+v; want [1], [0] and every snapshot but the new one expired", m.Replaced, m.GivenUp, m.Expiry)
			}
			if got := holds(); len(got) != 1 || !got["kept-group.parquet"] {
				t.Errorf("after the maintenance commit the table holds %v, want the kept group's file alone", got)
			}
			tbl, _ = b.LoadTable(ctx, "SALES.ORDERS")
			if n := len(tbl.Metadata().Snapshots()); n != 1 || tbl.CurrentSnapshot().SnapshotID != m.SnapshotID {
				t.Errorf("%d snapshots after the maintenance commit, current %d; want its own alone (%d)", n, tbl.CurrentSnapshot().SnapshotID, m.SnapshotID)
			}
			if n := rec.commits["SALES.ORDERS"] - commitsBefore; n != 1 {
				t.Errorf("the rewrite and the expiry took %d commits, want one", n)
			}

			// A pass done with a table lets go of its state.
			ident, _ := a.Identifier("SALES.ORDERS")
			if a.loaded.get(ident) == nil {
				t.Fatal("the publisher kept no state of the table it committed to")
			}
			a.Forget("SALES.ORDERS")
			if a.loaded.get(ident) != nil {
				t.Error("Forget kept the table's state")
			}
		})
	}
}
