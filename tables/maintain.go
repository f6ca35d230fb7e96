package tables

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// SummaryRewritten marks the snapshots Rewrite commits: how many data
// files they replaced.
const SummaryRewritten = propPrefix + "rewritten-files"

// ErrReplacedGone is wrapped by Rewrite's error when a file it was to
// replace is no longer a current data file of the table (another writer
// removed it): the rewrite is given up and nothing was committed.
var ErrReplacedGone = errors.New("a file to replace is no longer in the table")

// ErrOutcomeUnknown is wrapped by Rewrite's error when its commit failed
// in a way that may still have reached the catalog and the table could
// not be read to tell: the files it was to add must stay.
var ErrOutcomeUnknown = errors.New("the rewrite commit's outcome is unknown")

// LiveFile is a current data file of a table.
type LiveFile struct {
	File iceberg.DataFile
	// SpecID is the partition spec the file was written under.
	SpecID int
}

// LoadTable loads the Iceberg table of a source table as the catalog has
// it now.
func (p *Publisher) LoadTable(ctx context.Context, qualTable string) (*table.Table, error) {
	ident, err := p.Identifier(qualTable)
	if err != nil {
		return nil, err
	}
	tbl, err := p.load(ctx, ident)
	if err != nil {
		return nil, fmt.Errorf("load table %s: %w", strings.Join(ident, "."), err)
	}
	return tbl, nil
}

// LiveFiles lists the data files of tbl's current snapshot, each once.
func LiveFiles(ctx context.Context, tbl *table.Table) ([]LiveFile, error) {
	if tbl.CurrentSnapshot() == nil {
		return nil, nil
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the data files of %s: %w", strings.Join(tbl.Identifier(), "."), err)
	}
	seen := make(map[string]bool, len(tasks))
	out := make([]LiveFile, 0, len(tasks))
	for _, t := range tasks {
		if seen[t.File.FilePath()] {
			continue // a file split into several tasks
		}
		seen[t.File.FilePath()] = true
		out = append(out, LiveFile{File: t.File, SpecID: int(t.File.SpecID())})
	}
	return out, nil
}

// Rewrite replaces, in one snapshot of the table of qualTable, the
// current data files old by the files add (which must hold exactly their
// rows), with iceberg-go's rewrite operation: the snapshot is a
// "replace", which readers and the catalog know changes no row. The first
// attempt is built on the table as this publisher last saw it; a commit
// that loses a race with another writer (an exporter appending a round)
// is tried again on the table as the catalog has it then, as long as
// every file of old is still current there; when one is not, Rewrite
// gives up with ErrReplacedGone. It returns the snapshot id.
//
// When the commit fails otherwise, it may still have reached the
// catalog: Rewrite reloads the table and reports success if the files of
// add are current, and wraps ErrOutcomeUnknown when it cannot tell. The
// caller may delete the files of add after any other error.
func (p *Publisher) Rewrite(ctx context.Context, qualTable string, old []iceberg.DataFile, add []DataFile) (snapshotID int64, err error) {
	ident, err := p.Identifier(qualTable)
	if err != nil {
		return 0, err
	}
	name := strings.Join(ident, ".")
	tbl, err := p.current(ctx, ident)
	if err != nil {
		return 0, fmt.Errorf("load table %s: %w", name, err)
	}
	drop := old
	for attempt := 1; ; attempt++ {
		if attempt > 1 {
			if tbl, err = p.load(ctx, ident); err != nil {
				return 0, fmt.Errorf("load table %s: %w", name, err)
			}
			if drop, err = stillCurrent(ctx, tbl, old); err != nil {
				return 0, err
			}
		}
		dfs, err := dataFiles(tbl, add)
		if err != nil {
			return 0, err
		}
		txn := tbl.NewTransaction()
		rw := txn.NewRewrite(iceberg.Properties{SummaryRewritten: fmt.Sprint(len(drop))})
		for _, df := range drop {
			rw.DeleteFile(df)
		}
		for _, df := range dfs {
			rw.AddDataFile(df)
		}
		start := time.Now()
		var done *table.Table
		if err = rw.Commit(ctx); err == nil {
			done, err = txn.Commit(ctx)
		}
		if err == nil {
			p.loaded.put(ident, done)
			p.committed(qualTable, done.CurrentSnapshot(), time.Since(start))
			return done.CurrentSnapshot().SnapshotID, nil
		}
		if isStale(err) || p.lostRace(ctx, ident, err, tbl) {
			// Built on a state the catalog has moved past: the
			// transaction found a file to replace missing, or the
			// catalog refused the commit. Nothing was committed.
			if attempt >= p.cfg.CommitAttempts {
				return 0, fmt.Errorf("rewrite %d files of %s into %d (attempt %d): %w", len(drop), name, len(add), attempt, err)
			}
			p.conflicted(qualTable)
			p.log.Info("iceberg rewrite conflict, retrying on the table as it is now", "table", name, "attempt", attempt, "error", err)
			if err := waitRetry(ctx, attempt); err != nil {
				return 0, err
			}
			continue
		}
		id, ok, checkErr := p.holdsAll(ctx, ident, add)
		if ok {
			return id, nil // the response was lost, not the commit
		}
		if checkErr != nil {
			return 0, fmt.Errorf("rewrite %d files of %s: %w (%w; reading the table back: %w)", len(drop), name, ErrOutcomeUnknown, err, checkErr)
		}
		return 0, fmt.Errorf("rewrite %d files of %s into %d (attempt %d): %w", len(drop), name, len(add), attempt, err)
	}
}

// lostRace reports whether a commit built on base failed because
// another writer committed to the table first (see raced), reloading the
// table to tell when the catalog's error does not say so itself.
func (p *Publisher) lostRace(ctx context.Context, ident table.Identifier, err error, base *table.Table) bool {
	if errors.Is(err, table.ErrCommitFailed) {
		return true
	}
	reloaded, lerr := p.load(ctx, ident)
	return lerr == nil && raced(err, base, reloaded)
}

// isStale reports whether building a transaction failed because a file
// to replace is not in the table state it was built on (iceberg-go says
// so only in words).
func isStale(err error) bool {
	return strings.Contains(err.Error(), "cannot delete files that do not belong to the table")
}

// stillCurrent returns the current data files of tbl at the locations of
// old, or ErrReplacedGone when one is not current.
func stillCurrent(ctx context.Context, tbl *table.Table, old []iceberg.DataFile) ([]iceberg.DataFile, error) {
	live, err := LiveFiles(ctx, tbl)
	if err != nil {
		return nil, err
	}
	want := make(map[string]bool, len(old))
	for _, f := range old {
		want[f.FilePath()] = true
	}
	var out []iceberg.DataFile
	for _, f := range live {
		if want[f.File.FilePath()] {
			out = append(out, f.File)
		}
	}
	if len(out) != len(want) {
		return nil, fmt.Errorf("rewrite %d files of %s: %d of them are no longer current: %w", len(want), strings.Join(tbl.Identifier(), "."), len(want)-len(out), ErrReplacedGone)
	}
	return out, nil
}

// current returns the table as this publisher last loaded or committed
// it, loading it if it has not.
func (p *Publisher) current(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	if tbl := p.loaded.get(ident); tbl != nil {
		return tbl, nil
	}
	return p.load(ctx, ident)
}

// CachedTable returns the table of a source table as this publisher last
// loaded or committed it (see loadedTables), loading it if it has not.
func (p *Publisher) CachedTable(ctx context.Context, qualTable string) (*table.Table, error) {
	ident, err := p.Identifier(qualTable)
	if err != nil {
		return nil, err
	}
	tbl, err := p.current(ctx, ident)
	if err != nil {
		return nil, fmt.Errorf("load table %s: %w", strings.Join(ident, "."), err)
	}
	return tbl, nil
}

// holdsAll reports whether every file of add is a current data file of
// the table, and the current snapshot's id.
func (p *Publisher) holdsAll(ctx context.Context, ident table.Identifier, add []DataFile) (int64, bool, error) {
	tbl, err := p.load(ctx, ident)
	if err != nil {
		return 0, false, err
	}
	if tbl.CurrentSnapshot() == nil {
		return 0, false, nil
	}
	live, err := LiveFiles(ctx, tbl)
	if err != nil {
		return 0, false, err
	}
	cur := make(map[string]bool, len(live))
	for _, f := range live {
		cur[f.File.FilePath()] = true
	}
	for _, f := range add {
		if !cur[f.Location] {
			return 0, false, nil
		}
	}
	return tbl.CurrentSnapshot().SnapshotID, len(add) > 0, nil
}

// Expiry is what Expire did, or would do, to a table.
type Expiry struct {
	// Expired is the number of snapshots removed from the table's
	// metadata (or that would be, in a dry run).
	Expired int
	// Kept is the number of snapshots left.
	Kept int
}

// Expire removes the snapshots of the table of qualTable older than
// olderThan, keeping at least the last keep of its history, with
// iceberg-go's ExpireSnapshots, which also deletes the manifests and the
// data files that no kept snapshot references any more once the commit
// landed. With dryRun it only counts them.
func (p *Publisher) Expire(ctx context.Context, qualTable string, olderThan time.Duration, keep int, dryRun bool) (Expiry, error) {
	ident, err := p.Identifier(qualTable)
	if err != nil {
		return Expiry{}, err
	}
	name := strings.Join(ident, ".")
	for attempt := 1; ; attempt++ {
		load := p.load
		if attempt == 1 {
			load = p.current
		}
		tbl, err := load(ctx, ident)
		if err != nil {
			return Expiry{}, fmt.Errorf("load table %s: %w", name, err)
		}
		before := len(tbl.Metadata().Snapshots())
		txn := tbl.NewTransaction()
		if err := txn.ExpireSnapshots(table.WithOlderThan(olderThan), table.WithRetainLast(keep)); err != nil {
			return Expiry{}, fmt.Errorf("expire snapshots of %s: %w", name, err)
		}
		staged, err := txn.StagedTable()
		if err != nil {
			return Expiry{}, fmt.Errorf("expire snapshots of %s: %w", name, err)
		}
		res := Expiry{Expired: before - len(staged.Metadata().Snapshots()), Kept: len(staged.Metadata().Snapshots())}
		if dryRun || res.Expired == 0 {
			return res, nil
		}
		start := time.Now()
		done, err := txn.Commit(ctx)
		if err == nil || done != nil {
			// done with an error: committed, and deleting the
			// unreferenced files failed; the orphan pass removes them.
			p.loaded.put(ident, done)
			p.committed(qualTable, done.CurrentSnapshot(), time.Since(start))
			if err != nil {
				p.log.Warn("snapshots expired; some files they alone referenced were not deleted (the orphan pass removes them)", "table", name, "error", err)
			}
			return res, nil
		}
		if attempt >= p.cfg.CommitAttempts || !p.lostRace(ctx, ident, err, tbl) {
			return Expiry{}, fmt.Errorf("expire snapshots of %s (attempt %d): %w", name, attempt, err)
		}
		p.conflicted(qualTable)
		if err := waitRetry(ctx, attempt); err != nil {
			return Expiry{}, err
		}
	}
}
