package maintain

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
)

// CompactedPrefix begins the name of every file compaction writes; the
// exporter's own files begin with "part-".
const CompactedPrefix = "compact-"

// smallFile is a current data file of the table that compaction may
// rewrite.
type smallFile struct {
	key   string // in the sink
	file  iceberg.DataFile
	bytes int64
	rows  int64
}

// group is the small files of one partition and one folder: one schema
// version's files of one day (or hour), never merged with another's.
type group struct {
	dir     string
	version int
	files   []smallFile
}

// compact rewrites the table's small files and expires its old
// snapshots, in one commit, or in one more for every CommitBytes of
// files rewritten (see the package comment, steps 1 and 2).
func (t *tablePass) compact(ctx context.Context, s *Summary) error {
	tbl, err := t.cfg.Publisher.LoadTable(ctx, t.name)
	if err != nil {
		return err
	}
	live, err := tables.LiveFiles(ctx, tbl)
	if err != nil {
		return err
	}
	t.locationsChecked = true
	if t.foreign = foreignFile(live, t.cfg.Store.String()+"/"); t.foreign != "" {
		return fmt.Errorf("the table's data files are outside the sink %s (%s is one): give maintain the sink as the exporter has it; a symbolic link, a relative path or another endpoint reaches the same files under other names, so nothing is compacted and no orphan removed", t.cfg.Store, t.foreign)
	}
	pending, err := t.pendingFiles(ctx)
	if err != nil {
		return err
	}
	groups := t.groups(live, pending)
	var (
		errs       []error
		batch      []written
		batchBytes int64
	)
	for gi, g := range groups {
		bins := packBins(g.files, t.cfg.TargetFileBytes)
		if len(bins) == 0 {
			continue
		}
		if t.cfg.DryRun {
			for _, b := range bins {
				s.FilesRewritten += len(b)
				s.FilesWritten++
				for _, f := range b {
					s.BytesBefore += f.bytes
					s.Rows += f.rows
				}
			}
			t.log.Info("would compact", "folder", g.dir, "files", len(g.files), "into", len(bins))
			continue
		}
		w, err := t.writeGroup(ctx, g, gi, bins)
		if err != nil {
			s.GroupsGivenUp++
			errs = append(errs, fmt.Errorf("folder %s: %w", g.dir, err))
			continue
		}
		batch = append(batch, w)
		batchBytes += w.before
		if batchBytes >= t.cfg.CommitBytes {
			// Partial progress: what is written so far lands now, so
			// that a crash of a long pass loses at most this much.
			errs = append(errs, t.commitGroups(ctx, batch, nil, s))
			batch, batchBytes = nil, 0
		}
	}
	if t.cfg.DryRun {
		return errors.Join(errs...)
	}
	var expiry *tables.ExpiryPolicy
	if t.cfg.ExpireAfter > 0 {
		expiry = &tables.ExpiryPolicy{Keep: t.cfg.KeepSnapshots,
			OlderThan: func(ctx context.Context, tbl *table.Table, reloaded bool) (time.Duration, error) {
				// After a commit of this pass, the table it left is
				// later than the listing: list again.
				return t.expiryAge(ctx, tbl, reloaded || t.committed)
			}}
	}
	errs = append(errs, t.commitGroups(ctx, batch, expiry, s))
	return errors.Join(errs...)
}

// commitGroups commits the groups written (and the expiry, if any) in
// one maintenance commit, and deletes the files of the groups that did
// not land.
func (t *tablePass) commitGroups(ctx context.Context, batch []written, expiry *tables.ExpiryPolicy, s *Summary) error {
	if len(batch) == 0 && expiry == nil {
		return nil
	}
	commit := make([]tables.RewriteGroup, len(batch))
	for i, w := range batch {
		commit[i] = w.RewriteGroup
	}
	var errs []error
	m, err := t.cfg.Publisher.Maintain(ctx, t.name, commit, expiry)
	if err != nil {
		if !errors.Is(err, tables.ErrOutcomeUnknown) {
			// Nothing committed: the files written are not in the table.
			for _, w := range batch {
				errs = append(errs, t.deleteWritten(ctx, w.Add))
			}
		} // else maybe committed: the files stay; if they are not in the table, the orphan pass removes them
		s.GroupsGivenUp += len(batch)
		return errors.Join(append(errs, err)...)
	}
	if len(m.Replaced) > 0 || m.Expiry.Expired > 0 {
		t.committed, t.committedAt = true, time.Now()
	}
	s.SnapshotsExpired += m.Expiry.Expired
	for _, i := range m.GivenUp {
		w := batch[i]
		s.GroupsGivenUp++
		t.log.Info("compaction of a folder given up: another writer removed one of its files; the next pass tries again", "folder", w.dir)
		errs = append(errs, t.deleteWritten(ctx, w.Add))
	}
	for _, i := range m.Replaced {
		w := batch[i]
		s.Groups++
		s.FilesRewritten += len(w.Old)
		s.FilesWritten += len(w.Add)
		s.BytesBefore += w.before
		s.Rows += w.rows
		for _, f := range w.Add {
			s.BytesAfter += f.SizeBytes
		}
		t.log.Debug("folder compacted", "folder", w.dir, "files", len(w.Old), "into", len(w.Add), "rows", w.rows)
	}
	if len(m.Replaced) > 0 {
		s.Commits++
	}
	return errors.Join(errs...)
}

// foreignFile returns a file of live when none of them is under base
// (the sink's URL and "/"), "" otherwise. Files elsewhere beside files
// of the sink are other writers' (a Spark job's, in the table's own
// location): compaction and orphan removal leave them alone.
func foreignFile(live []tables.LiveFile, base string) string {
	for _, lf := range live {
		if strings.HasPrefix(lf.File.FilePath(), base) {
			return ""
		}
	}
	if len(live) == 0 {
		return ""
	}
	return live[0].File.FilePath()
}

// groups sorts the table's small, settled files into groups.
func (t *tablePass) groups(live []tables.LiveFile, pending map[string]bool) []*group {
	base := t.cfg.Store.String() + "/"
	byKey := map[string]*group{}
	var out []*group
	for _, lf := range live {
		f := lf.File
		key, ok := strings.CutPrefix(f.FilePath(), base)
		if !ok || f.FileSizeBytes() >= t.cfg.TargetFileBytes || pending[key] || !strings.HasSuffix(key, ".parquet") {
			continue
		}
		version, ok := folderVersion(key)
		if !ok || isSplitPart(key) {
			continue
		}
		gk := fmt.Sprint(lf.SpecID, f.Partition(), path.Dir(key))
		g := byKey[gk]
		if g == nil {
			g = &group{dir: path.Dir(key), version: version}
			byKey[gk] = g
			out = append(out, g)
		}
		g.files = append(g.files, smallFile{key: key, file: f, bytes: f.FileSizeBytes(), rows: f.Count()})
	}
	slices.SortFunc(out, func(a, b *group) int { return strings.Compare(a.dir, b.dir) })
	return out
}

// isSplitPart reports whether key is a full part of a bin too large in
// Arrow (writeBin): it holds about BinArrowBytes of rows already, and
// compacting it again would write it again as it is, pass after pass.
func isSplitPart(key string) bool {
	base := path.Base(key)
	if !strings.HasPrefix(base, CompactedPrefix) {
		return false
	}
	rest, ok := strings.CutSuffix(base, ".parquet")
	if !ok {
		return false
	}
	i := strings.LastIndex(rest, splitPartMark)
	if i < 0 {
		return false
	}
	_, err := strconv.Atoi(rest[i+len(splitPartMark):])
	return err == nil
}

// splitPartMark comes before the part number in the name of a split
// bin's files (compact-RUN-GROUP-BIN-pN.parquet).
const splitPartMark = "-p"

// folderVersion reads the schema version from a data file's folder
// ({table}/schema_version={N}/...).
func folderVersion(key string) (int, bool) {
	parts := strings.Split(key, "/")
	if len(parts) < 3 {
		return 0, false
	}
	v, ok := strings.CutPrefix(parts[1], "schema_version=")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	return n, err == nil
}

// packBins packs a group's files, in name order (the exporter names files
// by source partition and first offset), into bins of at most target
// bytes, and drops what would not shrink the file count: a group of one
// file, or of bins that are each one file.
func packBins(files []smallFile, target int64) [][]smallFile {
	if len(files) < 2 {
		return nil
	}
	slices.SortFunc(files, func(a, b smallFile) int { return strings.Compare(a.key, b.key) })
	var bins [][]smallFile
	var cur []smallFile
	var size int64
	for _, f := range files {
		if len(cur) > 0 && size+f.bytes > target {
			bins = append(bins, cur)
			cur, size = nil, 0
		}
		cur = append(cur, f)
		size += f.bytes
	}
	bins = append(bins, cur)
	out := bins[:0]
	for _, b := range bins {
		if len(b) > 1 {
			out = append(out, b)
		}
	}
	return out
}

// written is a group's compacted files, written and not yet committed.
type written struct {
	tables.RewriteGroup
	dir          string
	before, rows int64
}

// writeGroup writes the files of a group's bins (one per bin, or more
// where a bin's rows pass BinArrowBytes); when one fails, those written
// are deleted.
func (t *tablePass) writeGroup(ctx context.Context, g *group, gi int, bins [][]smallFile) (written, error) {
	w := written{dir: g.dir}
	for i, b := range bins {
		name := fmt.Sprintf("%s/%s%s-%03d-%03d", g.dir, CompactedPrefix, t.cfg.Run, gi, i)
		dfs, n, err := t.writeBin(ctx, g, b, name)
		w.Add = append(w.Add, dfs...)
		if err != nil {
			return written{}, errors.Join(err, t.deleteWritten(ctx, w.Add))
		}
		w.rows += n
		for _, f := range b {
			w.Old = append(w.Old, f.file)
			w.before += f.bytes
		}
	}
	return w, nil
}

// deleteWritten deletes compacted files that are not in the table.
func (t *tablePass) deleteWritten(ctx context.Context, files []tables.DataFile) error {
	var errs []error
	for _, f := range files {
		key := strings.TrimPrefix(f.Location, t.cfg.Store.String()+"/")
		if err := t.cfg.Store.Delete(context.WithoutCancel(ctx), key); err != nil {
			errs = append(errs, fmt.Errorf("delete %s, written and not committed (the orphan pass removes it): %w", key, err))
		}
	}
	return errors.Join(errs...)
}
