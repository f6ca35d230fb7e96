package maintain

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/lakehouse-exporter/lakehouse-exporter/partition"
	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
)

// removeOrphans deletes the table's orphan data files (see the package
// comment, step 3). iceberg-go plans them (a walk of the table's data
// folder against every file its snapshots reference); what it cannot know
// is the exporter's pending intents and which files predate the catalog.
func (t *tablePass) removeOrphans(ctx context.Context, s *Summary) error {
	if !t.locationsChecked {
		return errors.New("not removing orphans: compaction failed before it could check that the table's files are under the sink")
	}
	if t.foreign != "" {
		return fmt.Errorf("not removing orphans: the table's data files are outside the sink %s (%s is one): the sink is given another way than the exporter's (a symbolic link, a relative path, another endpoint), and every file of the table would pass for an orphan", t.cfg.Store, t.foreign)
	}
	if time.Since(t.listed) > t.cfg.OrphanAge/2 {
		// A file whose intent was written after the listing is younger
		// than the listing, so the orphan age spares it while the
		// listing is younger than the age; past half of it, list again.
		t.pending = nil
	}
	pending, tbl, err := t.pendingThenTable(ctx)
	if err != nil {
		return err
	}
	born, ok := firstCommit(tbl)
	if !ok {
		return nil // no commit yet: every file may be one in flight
	}
	if !t.cfg.PublishedSince.IsZero() {
		// A margin for the clocks of the machines that wrote the mark and
		// the files; and a table created later (dropped and created
		// again, say) spares the files from before it.
		born = t.cfg.PublishedSince.Add(-publishedMargin)
		if created, ok := createdAt(tbl); ok && created.After(born) {
			born = created
		}
	}
	seg, err := partition.TableSegment(t.name)
	if err != nil {
		return err
	}
	base := t.cfg.Store.String() + "/"
	plan, err := tbl.PlanOrphanFiles(ctx, table.WithLocation(base+seg), table.WithFilesOlderThan(t.cfg.OrphanAge))
	if err != nil {
		return fmt.Errorf("plan the orphan files of %s: %w", seg, err)
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, o := range plan.OrphanFiles() {
		o.Path = fileURL(o.Path)
		key, ok := keyOf(o.Path, base)
		if !ok || !strings.HasPrefix(key, seg+"/") || pending[key] || !strings.HasSuffix(key, ".parquet") {
			continue // not a data file of this table's folders, or one in flight
		}
		if _, ok := folderVersion(key); !ok {
			continue
		}
		mod, err := modTime(fs, o.Path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		// Object stores list times to the second: a file of the
		// table's first second must not pass for an older one.
		if mod.Before(born.Truncate(time.Second)) {
			continue // exported before the table's first commit: data, not an orphan
		}
		if t.cfg.DryRun {
			t.log.Info("orphan file (dry run: not deleted)", "key", key, "bytes", o.SizeBytes, "modified", mod)
		} else {
			if err := t.cfg.Store.Delete(ctx, key); err != nil {
				errs = append(errs, fmt.Errorf("delete orphan %s: %w", key, err))
				continue
			}
			t.log.Info("orphan file deleted", "key", key, "bytes", o.SizeBytes, "modified", mod)
		}
		s.Orphans++
		s.OrphanBytes += o.SizeBytes
	}
	return errors.Join(errs...)
}

// publishedMargin is taken off the lake's publishing time before files
// are compared with it.
const publishedMargin = time.Minute

// createdAt is when the exporter created the table (tables.PropCreatedAt,
// set by versions that write it).
func createdAt(tbl *table.Table) (time.Time, bool) {
	s, ok := tbl.Properties()[tables.PropCreatedAt]
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

// fileURL writes a local location the way the sink names it: iceberg-go's
// walk of a local folder reports file:/DIR/KEY.
func fileURL(loc string) string {
	if rest, ok := strings.CutPrefix(loc, "file:/"); ok && !strings.HasPrefix(rest, "/") {
		return "file:///" + rest
	}
	return loc
}

// keyOf is the sink key of a location iceberg-go's walk reports, which
// for a local folder may have lost the file:// scheme.
func keyOf(loc, base string) (string, bool) {
	if k, ok := strings.CutPrefix(loc, base); ok {
		return k, true
	}
	if local, ok := strings.CutPrefix(base, "file://"); ok {
		return strings.CutPrefix(loc, local)
	}
	return "", false
}

// firstCommit is the earliest time the table's metadata records: its
// oldest snapshot or metadata file. Without the lake's publishing time
// (Config.PublishedSince), files older than it may have been exported
// before the catalog was given, so they are never orphans; it is later
// than the table's creation once history is expired, which only spares
// more files.
func firstCommit(tbl *table.Table) (time.Time, bool) {
	var first int64
	for _, s := range tbl.Metadata().Snapshots() {
		if first == 0 || s.TimestampMs < first {
			first = s.TimestampMs
		}
	}
	for e := range tbl.Metadata().PreviousFiles() {
		if first == 0 || e.TimestampMs < first {
			first = e.TimestampMs
		}
	}
	if first == 0 {
		return time.Time{}, false
	}
	return time.UnixMilli(first), true
}

// modTime is when a file was last written: by the table's file IO, or
// for a local sink the file system's (iceberg-go's local IO does not open
// the file:/// locations it is given).
func modTime(fs iceio.IO, loc string) (time.Time, error) {
	if local, ok := strings.CutPrefix(loc, "file://"); ok {
		info, err := os.Stat(local)
		if err != nil {
			return time.Time{}, fmt.Errorf("stat %s: %w", loc, err)
		}
		return info.ModTime(), nil
	}
	f, err := fs.Open(loc)
	if err != nil {
		return time.Time{}, fmt.Errorf("open %s: %w", loc, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return time.Time{}, fmt.Errorf("stat %s: %w", loc, err)
	}
	return info.ModTime(), nil
}
