package maintain_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/lakehouse-exporter/lakehouse-exporter/checkpoint"
	"github.com/lakehouse-exporter/lakehouse-exporter/maintain"
)

// snapshotFiles lists the data files of each snapshot of a table.
func snapshotFiles(t *testing.T, tbl *table.Table) map[int64][]string {
	t.Helper()
	out := map[int64][]string{}
	for _, s := range tbl.Metadata().Snapshots() {
		tasks, err := tbl.Scan(table.WithSnapshotID(s.SnapshotID)).PlanFiles(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range tasks {
			out[s.SnapshotID] = append(out[s.SnapshotID], strings.TrimPrefix(task.File.FilePath(), "file://"))
		}
	}
	return out
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestExpiryKeepsWhatItMust: after three exports, a compaction and a
// fourth export, a dry run counts the snapshots it would expire and
// changes nothing; the pass then keeps the newest two snapshots, time travel to the older of them
// reads what it read before, every file a kept snapshot references is
// there, and the files only expired snapshots referenced (the compacted
// ones' inputs) are deleted.
func TestExpiryKeepsWhatItMust(t *testing.T) {
	l := newLake(t)
	start := time.Date(2026, 7, 13, 10, 0, 0, 0, time.UTC)
	for i := range 3 {
		l.export(t, 9, genStream(t, 90, uint64(10+i), start.Add(time.Duration(i)*time.Minute)))
	}
	p := l.open(t)
	cfg := l.config(t, p)
	if sum, err := maintain.Run(context.Background(), cfg); err != nil || sum.Groups == 0 || sum.Commits > sum.Tables {
		t.Fatalf("compaction: %+v, %v; want groups compacted in a commit per table", sum, err)
	}
	// A round after the compaction: the two newest snapshots then
	// reference the compacted files and this round's, and only expired
	// snapshots the compacted files' inputs.
	l.export(t, 9, genStream(t, 90, 13, start.Add(3*time.Minute)))
	const name = "APP.T0"
	tbl, err := p.LoadTable(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	before := snapshotFiles(t, tbl)
	history := tbl.Metadata().Snapshots()
	if len(history) < 4 {
		t.Fatalf("%s has %d snapshots: the test needs more than it keeps", name, len(history))
	}
	keptOld := history[len(history)-2].SnapshotID
	rowsAt := func(id int64) int64 {
		tbl, err := p.LoadTable(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		at, err := tbl.Scan(table.WithSnapshotID(id)).ToArrowTable(context.Background())
		if err != nil {
			t.Fatalf("time travel to snapshot %d: %v", id, err)
		}
		defer at.Release()
		return at.NumRows()
	}
	wantOld := rowsAt(keptOld)

	// Expiry alone: no file is smaller than a target of one byte.
	cfg.ExpireAfter, cfg.KeepSnapshots, cfg.Tables, cfg.TargetFileBytes = time.Nanosecond, 2, []string{name}, 1
	cfg.DryRun = true
	dry, err := maintain.Run(context.Background(), cfg)
	if err != nil || dry.SnapshotsExpired != len(history)-2 {
		t.Fatalf("dry run: %+v, %v; want %d snapshots to expire", dry, err, len(history)-2)
	}
	if tbl, _ := p.LoadTable(context.Background(), name); len(tbl.Metadata().Snapshots()) != len(history) {
		t.Fatalf("the dry run expired snapshots")
	}
	if want := fmt.Sprintf("nothing changed: would rewrite 0 files into 0 (0 rows, 0 bytes); would expire %d snapshots", len(history)-2); !strings.Contains(dry.String(), want) {
		t.Errorf("dry run summary %q, want it to say %q", dry, want)
	}
	cfg.DryRun = false
	sum, err := maintain.Run(context.Background(), cfg)
	if err != nil || sum.SnapshotsExpired != len(history)-2 {
		t.Fatalf("expiry: %+v, %v", sum, err)
	}
	tbl, _ = p.LoadTable(context.Background(), name)
	var kept []int64
	for _, s := range tbl.Metadata().Snapshots() {
		kept = append(kept, s.SnapshotID)
	}
	if !slices.Equal(kept, []int64{keptOld, history[len(history)-1].SnapshotID}) {
		t.Fatalf("kept snapshots %v, want the newest two", kept)
	}
	if got := rowsAt(keptOld); got != wantOld {
		t.Errorf("time travel to kept snapshot %d: %d rows, %d before the expiry", keptOld, got, wantOld)
	}
	referenced := map[string]bool{}
	for _, id := range kept {
		for _, f := range before[id] {
			referenced[f] = true
			if !exists(f) {
				t.Errorf("%s, referenced by kept snapshot %d, was deleted", f, id)
			}
		}
	}
	deleted := 0
	for _, files := range before {
		for _, f := range files {
			if !referenced[f] {
				if exists(f) {
					t.Errorf("%s, referenced only by expired snapshots, is still there", f)
				}
				deleted++
			}
		}
	}
	if deleted == 0 {
		t.Fatal("no file was referenced by expired snapshots alone: the test proves nothing")
	}
}

// TestOrphanRemoval: files of a table's folders that no snapshot
// references are deleted once older than the orphan age, unless a
// pending intent names them (an exporter's upload not yet committed) or
// they were written before the table's first commit (exported before
// the catalog); a dry run lists and deletes nothing.
func TestOrphanRemoval(t *testing.T) {
	l := newLake(t)
	l.export(t, 9, genStream(t, 90, 5, time.Date(2026, 7, 13, 10, 0, 0, 0, time.UTC)))
	p := l.open(t)
	const name = "APP.T1"
	files, tbl := liveFiles(t, p, name)
	var dir, src string
	for d, fs := range files {
		dir, src = strings.TrimPrefix(d, "file://"), strings.TrimPrefix(fs[0], "file://")
		break
	}
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	born := time.UnixMilli(tbl.Metadata().Snapshots()[0].TimestampMs)
	for _, s := range tbl.Metadata().Snapshots() {
		if ts := time.UnixMilli(s.TimestampMs); ts.Before(born) {
			born = ts
		}
	}
	mk := func(name string, mod time.Time) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mod, mod); err != nil {
			t.Fatal(err)
		}
		return p
	}
	after := born.Add(time.Millisecond)
	crashed := mk("compact-dead-000-000.parquet", after)            // a maintenance pass died before its commit
	pendingFile := mk("part-x-00000000000000000000.parquet", after) // an exporter's upload, its round not committed
	preCatalog := mk("part-y-00000000000000000000.parquet", born.Add(-time.Hour))
	rel, _ := filepath.Rel(l.dir, pendingFile)
	if _, err := checkpoint.WriteIntent(context.Background(), l.st, "x", 0, []string{filepath.ToSlash(rel)}, "run-x"); err != nil {
		t.Fatal(err)
	}
	rowsBefore := rows(t, p, name)
	pass := func(age time.Duration, dry bool) maintain.Summary {
		cfg := l.config(t, p)
		cfg.OrphanAge, cfg.DryRun, cfg.Tables = age, dry, []string{name}
		sum, err := maintain.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	if sum := pass(time.Since(after)+time.Hour, false); sum.Orphans != 0 || !exists(crashed) {
		t.Fatalf("an orphan younger than the orphan age was removed: %+v", sum)
	}
	if sum := pass(time.Nanosecond, true); sum.Orphans != 1 || !exists(crashed) {
		t.Fatalf("dry run: %+v, the orphan exists: %v; want it listed and kept", sum, exists(crashed))
	}
	if sum := pass(time.Nanosecond, false); sum.Orphans != 1 || exists(crashed) {
		t.Fatalf("pass: %+v, the orphan exists: %v; want it removed", sum, exists(crashed))
	}
	if !exists(pendingFile) || !exists(preCatalog) {
		t.Errorf("removed a file a pending intent names (%v) or one older than the table (%v)", !exists(pendingFile), !exists(preCatalog))
	}
	if got := rows(t, p, name); !slices.Equal(got, rowsBefore) {
		t.Errorf("the table reads %d rows after orphan removal, %d before", len(got), len(rowsBefore))
	}
}
