package tables

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// Two instances publishing to one table: each keeps the table as it last
// committed it, so the second one's commit starts from a state the first
// has moved past. The catalog refuses it (the SQL and hadoop catalogs say
// "requirement failed", not ErrCommitFailed), and the publisher reloads
// and commits again: both rounds are in the table, each once.
func TestInterleavedPublishersRetryStaleCommits(t *testing.T) {
	for name, mk := range localCatalogs() {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			ctx := context.Background()
			a, err := Open(ctx, mk(dir), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			b, err := Open(ctx, mk(dir), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			day := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
			round := func(p *Publisher, run string, n int) {
				t.Helper()
				v, err := p.PrepareVersion(ctx, TableVersion{Table: "SALES.ORDERS", Version: 1, Schema: sourceSchema(1)})
				if err != nil {
					t.Fatal(err)
				}
				f := writeFile(t, dir, fmt.Sprintf("data/%s-%d.parquet", run, n), v.Schema, 1,
					[]int64{int64(n)}, []time.Time{day}, int64(n))
				res, err := p.Publish(ctx, Round{RunID: run, RoundID: fmt.Sprint(n), Files: []DataFile{f}})
				if err != nil {
					t.Fatalf("%s round %d: %v", run, n, err)
				}
				if len(res) != 1 || res[0].Already {
					t.Fatalf("%s round %d: %+v", run, n, res)
				}
			}
			round(a, "run-a", 1) // a creates the table and keeps it
			round(b, "run-b", 2) // b loads it and commits on top
			round(a, "run-a", 3) // a's kept state is one snapshot behind
			round(b, "run-b", 4)

			tbl, err := a.cat.LoadTable(ctx, []string{"SALES", "ORDERS"})
			if err != nil {
				t.Fatal(err)
			}
			tasks, err := tbl.Scan().PlanFiles(ctx)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]int{}
			for _, task := range tasks {
				seen[filepath.Base(task.File.FilePath())]++
			}
			for _, want := range []string{"run-a-1.parquet", "run-b-2.parquet", "run-a-3.parquet", "run-b-4.parquet"} {
				if seen[want] != 1 {
					t.Errorf("file %s is in the table %d times, want once (table holds %v)", want, seen[want], seen)
				}
			}
			if len(seen) != 4 {
				t.Errorf("table holds %v, want the 4 rounds' files", seen)
			}
		})
	}
}
