package maintain_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/lakehouse-exporter/lakehouse-exporter/checkpoint"
	"github.com/lakehouse-exporter/lakehouse-exporter/maintain"
	"github.com/lakehouse-exporter/lakehouse-exporter/pipeline"
	"github.com/lakehouse-exporter/lakehouse-exporter/store"
	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
)

// orphanLake is a lake of three export rounds of one table, and a data
// file of it to copy as orphans. With apart, the last round is in a later
// second than the first (file times are compared to the second).
func orphanLake(t *testing.T, apart bool) (l *lake, name, dir string, data []byte) {
	t.Helper()
	l = newLake(t)
	start := time.Date(2026, 7, 13, 10, 0, 0, 0, time.UTC)
	for i := range 3 {
		if apart && i == 2 {
			time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 10*time.Millisecond)))
		}
		l.export(t, 0, genStream(t, 30*(i+1), 5, start))
	}
	name = "APP.T1"
	files, _ := liveFiles(t, l.open(t), name)
	for d, fs := range files {
		dir = strings.TrimPrefix(d, "file://")
		if data, _ = os.ReadFile(strings.TrimPrefix(fs[0], "file://")); data != nil {
			break
		}
	}
	if data == nil {
		t.Fatal("no data file to copy")
	}
	return l, name, dir, data
}

func writeAt(t *testing.T, p string, data []byte, mod time.Time) string {
	t.Helper()
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mod, mod); err != nil {
		t.Fatal(err)
	}
	return p
}

// Expiry drops the table's early snapshots and its metadata log the
// early metadata files: the table's history then starts late. An orphan
// left before that (a compaction that died before its commit) is still
// removed, since the lake's mark says when its tables began to be
// published and the table when it was created; a file older than the
// mark (exported before the catalog) is kept, and so is one older than
// the table's creation (a table dropped and created again after the mark).
func TestOrphansOlderThanTheTablesHistory(t *testing.T) {
	l, name, dir, data := orphanLake(t, true)
	ctx := context.Background()
	since, marked, err := pipeline.PublishedSince(ctx, l.st)
	if err != nil || !marked {
		t.Fatalf("the lake's catalog mark: marked %v, error %v", marked, err)
	}
	// The table says it was created at the mark's time (it is, within
	// the first run): a file half a minute older is not its orphan,
	// though the mark's margin alone would take it for one.
	created := since
	orphan := writeAt(t, filepath.Join(dir, "compact-dead-000-000.parquet"), data, created)
	preCatalog := writeAt(t, filepath.Join(dir, "part-y-00000000000000000000.parquet"), data, since.Add(-time.Hour))
	preTable := writeAt(t, filepath.Join(dir, "part-z-00000000000000000000.parquet"), data, since.Add(-30*time.Second))

	// Keep one metadata file in the log, then expire every snapshot
	// but the newest.
	p := l.open(t)
	tbl, err := p.LoadTable(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	txn := tbl.NewTransaction()
	if err := txn.SetProperties(iceberg.Properties{table.MetadataPreviousVersionsMaxKey: "1",
		tables.PropCreatedAt: created.Format(time.RFC3339Nano)}); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	cfg := l.config(t, l.open(t))
	cfg.ExpireAfter, cfg.KeepSnapshots, cfg.Tables = time.Nanosecond, 1, []string{name}
	if _, err := maintain.Run(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	p = l.open(t)
	tbl, err = p.LoadTable(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	history := time.UnixMilli(tbl.CurrentSnapshot().TimestampMs)
	for e := range tbl.Metadata().PreviousFiles() {
		if ts := time.UnixMilli(e.TimestampMs); ts.Before(history) {
			history = ts
		}
	}
	if !history.Truncate(time.Second).After(created) {
		t.Fatalf("the table's history starts at %v, not in a second after the orphan's (%v): the test proves nothing", history, created)
	}

	cfg = l.config(t, p)
	cfg.OrphanAge, cfg.PublishedSince, cfg.Tables = time.Nanosecond, since, []string{name}
	sum, err := maintain.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Orphans != 1 || exists(orphan) {
		t.Errorf("removed %d orphans; the one older than the table's history exists: %v", sum.Orphans, exists(orphan))
	}
	if !exists(preCatalog) || !exists(preTable) {
		t.Errorf("removed a file older than the lake's catalog mark (%v) or one older than the table (%v)", !exists(preCatalog), !exists(preTable))
	}
}

// An exporter writes an intent just after the pass listed the pending
// intents, for a file it then uploads: orphan removal, with an orphan
// age shorter than the pass, lists them again and spares the file.
func TestOrphanRemovalListsIntentsAgain(t *testing.T) {
	l, name, dir, data := orphanLake(t, false)
	ctx := context.Background()
	uploaded := filepath.Join(dir, "part-late-00000000000000000000.parquet")
	var once sync.Once
	hooked := &countingList{Local: l.st, after: func(prefix string) {
		if !strings.HasPrefix(prefix, "_checkpoints/intents") {
			return
		}
		once.Do(func() {
			rel, _ := filepath.Rel(l.dir, uploaded)
			if _, err := checkpoint.WriteIntent(ctx, l.st, "late", 0, []string{filepath.ToSlash(rel)}, "run-late"); err != nil {
				t.Error(err)
			}
			writeAt(t, uploaded, data, time.Now())
		})
	}}
	cfg := l.config(t, l.open(t))
	cfg.Store, cfg.OrphanAge, cfg.Tables = hooked, time.Nanosecond, []string{name}
	if _, err := maintain.Run(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if !exists(uploaded) {
		t.Error("removed a file whose intent was written after the pass first listed the intents")
	}
}

// An intent that its partition's checkpoint covers (its removal failed)
// does not stop expiry, and its file is compacted like the others.
func TestCoveredIntentIsNotPending(t *testing.T) {
	l, name, _, _ := orphanLake(t, false)
	ctx := context.Background()
	file, key := compactableFile(t, l, name)
	cps, err := l.st.List(ctx, "_checkpoints/partitions/")
	if err != nil || len(cps) == 0 {
		t.Fatalf("checkpoints %v, error %v", cps, err)
	}
	part := strings.TrimSuffix(strings.TrimPrefix(cps[0], "_checkpoints/partitions/"), ".json")
	cp, err := checkpoint.Load(ctx, l.st, part)
	if err != nil || !cp.Found {
		t.Fatalf("checkpoint of %q: found %v, error %v", part, cp.Found, err)
	}
	if _, err := checkpoint.WriteIntent(ctx, l.st, part, 0, []string{key}, cp.Owner); err != nil {
		t.Fatal(err)
	}
	cfg := l.config(t, l.open(t))
	cfg.ExpireAfter, cfg.KeepSnapshots, cfg.Tables = time.Nanosecond, 1, []string{name}
	sum, err := maintain.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sum.SnapshotsExpired == 0 || exists(file) {
		t.Errorf("expired %d snapshots; the covered intent's file is still there: %v (want it compacted and deleted with its snapshots)",
			sum.SnapshotsExpired, exists(file))
	}
}

// The sink given another way than the exporter's (here a symbolic link
// to its folder): the table's files are all outside it, so the pass
// refuses to compact or remove orphans, and deletes nothing.
func TestSinkReachedAnotherWay(t *testing.T) {
	l, name, _, _ := orphanLake(t, false)
	ctx := context.Background()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(l.dir, link); err != nil {
		t.Fatal(err)
	}
	other, err := store.NewLocal(link)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := liveFiles(t, l.open(t), name)
	cfg := l.config(t, l.open(t))
	cfg.Store, cfg.OrphanAge, cfg.Tables = other, time.Nanosecond, []string{name}
	_, err = maintain.Run(ctx, cfg)
	if err == nil || !strings.Contains(err.Error(), "outside the sink") {
		t.Fatalf("error %v, want one that says the table's files are outside the sink", err)
	}
	for _, fs := range before {
		for _, f := range fs {
			if !exists(strings.TrimPrefix(f, "file://")) {
				t.Fatalf("%s was deleted", f)
			}
		}
	}
}

// An exporter commits a round while the pass lists the intents again
// for orphan removal, after the pass's own commit: the round's files are
// in neither the listing nor the table the commit left, so orphan removal
// must read the table anew, after the listing.
func TestOrphanRemovalReadsTheTableAfterItsListing(t *testing.T) {
	l, name, dir, _ := orphanLake(t, false)
	ctx := context.Background()
	calls := 0
	var hookErr error
	stream := genStream(t, 60, 11, time.Date(2026, 7, 13, 10, 0, 0, 0, time.UTC))
	hooked := &countingList{Local: l.st, after: func(prefix string) {
		if !strings.HasPrefix(prefix, "_checkpoints/intents") {
			return
		}
		if calls++; calls != 2 { // the first is compaction's
			return
		}
		start := time.Now()
		l.export(t, 0, stream)
		// Old enough for any orphan age: only the listing and the table
		// can tell that they are the round's.
		hookErr = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() && !info.ModTime().Before(start) {
				old := start.Add(-time.Hour)
				return os.Chtimes(p, old, old)
			}
			return err
		})
	}}
	cfg := l.config(t, l.open(t))
	cfg.Store, cfg.OrphanAge, cfg.Tables = hooked, time.Nanosecond, []string{name}
	cfg.ExpireAfter, cfg.KeepSnapshots = time.Hour, 100 // a commit, no expiry
	if _, err := maintain.Run(ctx, cfg); err != nil || hookErr != nil {
		t.Fatal(err, hookErr)
	}
	if calls < 2 {
		t.Fatalf("the intents were listed %d times, want a second listing for orphan removal", calls)
	}
	files, _ := liveFiles(t, l.open(t), name)
	for _, fs := range files {
		for _, f := range fs {
			if !exists(strings.TrimPrefix(f, "file://")) {
				t.Fatalf("%s, a file of the table, was deleted as an orphan", f)
			}
		}
	}
}

// compactableFile returns a data file of the table in a folder of
// several (one compaction rewrites), as a local path and as a sink key.
func compactableFile(t *testing.T, l *lake, name string) (path, key string) {
	t.Helper()
	files, _ := liveFiles(t, l.open(t), name)
	for _, fs := range files {
		if len(fs) > 1 {
			path = strings.TrimPrefix(fs[0], "file://")
		}
	}
	if path == "" {
		t.Fatal("no folder of several files")
	}
	rel, err := filepath.Rel(l.dir, path)
	if err != nil {
		t.Fatal(err)
	}
	return path, filepath.ToSlash(rel)
}

// countingList is a store that calls after each listing.
type countingList struct {
	*store.Local
	after func(prefix string)
}

func (c *countingList) List(ctx context.Context, prefix string) ([]string, error) {
	keys, err := c.Local.List(ctx, prefix)
	c.after(prefix)
	return keys, err
}

// A partition's corrupt checkpoint does not stop maintenance: its intents
// count as pending (their files neither compacted nor orphans) until the
// checkpoint is rebuilt.
func TestCorruptCheckpointKeepsItsIntentsPending(t *testing.T) {
	l, name, _, _ := orphanLake(t, false)
	ctx := context.Background()
	file, key := compactableFile(t, l, name)
	if _, err := checkpoint.WriteIntent(ctx, l.st, "broken", 0, []string{key}, "run-broken"); err != nil {
		t.Fatal(err)
	}
	if err := l.st.Put(ctx, checkpoint.Key("broken"), []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	cfg := l.config(t, l.open(t))
	cfg.ExpireAfter, cfg.KeepSnapshots, cfg.OrphanAge, cfg.Tables = time.Nanosecond, 1, time.Nanosecond, []string{name}
	sum, err := maintain.Run(ctx, cfg)
	if err != nil {
		t.Fatalf("a corrupt checkpoint of another partition failed the pass: %v", err)
	}
	if sum.FilesRewritten == 0 || !exists(file) {
		t.Errorf("rewrote %d files; the pending file exists: %v (want others compacted, it kept)", sum.FilesRewritten, exists(file))
	}
}
