package tables

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/iceberg-go"
)

// TestWithdrawFileSplitIntoScanTasks: a file that iceberg-go's scan
// plans as several tasks (larger than the table's read.split.target-size,
// with several row groups) is withdrawn once; listed once per task, it
// made every withdrawal fail, and with it the recovery of its partition.
func TestWithdrawFileSplitIntoScanTasks(t *testing.T) {
	for name, mk := range localCatalogs() {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			ctx := context.Background()
			p, v, tbl := ordersTable(t, mk(dir))
			txn := tbl.NewTransaction()
			if err := txn.SetProperties(iceberg.Properties{"read.split.target-size": "1024"}); err != nil {
				t.Fatal(err)
			}
			if _, err := txn.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			p.Forget("SALES.ORDERS")
			day := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
			ids := make([]int64, 40)
			times := make([]time.Time, len(ids))
			for i := range ids {
				ids[i], times[i] = int64(i), day
			}
			props := parquet.NewWriterProperties(parquet.WithStats(true), parquet.WithMaxRowGroupLength(2))
			f := writeFileWith(t, props, dir, "data/part-split.parquet", v.Schema, 1, ids, times, 0)
			if _, err := p.Publish(ctx, Round{RunID: "run", RoundID: "1", Files: []DataFile{f}}); err != nil {
				t.Fatal(err)
			}
			tbl, err := p.LoadTable(ctx, "SALES.ORDERS")
			if err != nil {
				t.Fatal(err)
			}
			tasks, err := tbl.Scan().PlanFiles(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(tasks) < 2 {
				t.Fatalf("%d scan tasks for the file: the test would prove nothing", len(tasks))
			}
			if n, err := p.Withdraw(ctx, "SALES.ORDERS", []string{f.Location}); err != nil || n != 1 {
				t.Fatalf("withdraw: %d files, %v; want 1", n, err)
			}
			tbl, err = p.LoadTable(ctx, "SALES.ORDERS")
			if err != nil {
				t.Fatal(err)
			}
			if live, err := LiveFiles(ctx, tbl); err != nil || len(live) != 0 {
				t.Errorf("after the withdrawal: %d live files, %v; want none", len(live), err)
			}
		})
	}
}
