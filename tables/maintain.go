package tables

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// SummaryRewritten marks the snapshots Rewrite commits: how many data
// files they replaced.
const SummaryRewritten = propPrefix + "rewritten-files"

// ErrOutcomeUnknown is wrapped by Maintain's error when its commit failed
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

// RewriteGroup is current data files of a table (Old) and files that
// hold exactly their rows (Add): a rewrite replaces all of a group's
// files or none of them.
type RewriteGroup struct {
	Old []iceberg.DataFile
	Add []DataFile
}

// ExpiryPolicy asks Maintain to expire snapshots in the commit that
// replaces the groups' files.
type ExpiryPolicy struct {
	// OlderThan is how old a snapshot must be to be expired, given the
	// table state the commit is built on; retry is false for the first
	// state (the one the caller loaded last), true for each reload after
	// a lost race.
	OlderThan func(ctx context.Context, tbl *table.Table, retry bool) (time.Duration, error)
	// Keep is how many of the newest snapshots are kept whatever their
	// age (at least 1).
	Keep int
}

// Maintenance is what Maintain committed.
type Maintenance struct {
	// Replaced are the indexes of the groups whose files were replaced;
	// GivenUp those left out because one of their Old files was no
	// longer current (another writer removed it): their Add files are
	// not in the table and may be deleted.
	Replaced, GivenUp []int
	Expiry            Expiry
	// SnapshotID is the table's current snapshot after the commit.
	SnapshotID int64
}

// Maintain replaces the files of every group and, with expiry, expires
// snapshots, in one commit to the table of qualTable (a maintenance pass
// of a table then pays for one metadata file and one catalog commit,
// whatever the number of its partitions and schema versions). The
// replacement is iceberg-go's rewrite operation: the snapshot is a
// "replace", which readers and the catalog know changes no row; expiry
// is its ExpireSnapshots, which deletes the manifests and data files no
// kept snapshot references once the commit landed (a failure to delete
// them is logged: the orphan pass removes them).
//
// The first attempt is built on the table as this publisher last saw it;
// a commit that loses a race with another writer (an exporter appending a
// round) is tried again on the table as the catalog has it then, leaving
// out the groups of which a file is no longer current (GivenUp).
//
// When the commit fails otherwise, it may still have reached the
// catalog: Maintain reloads the table and reports success if the Add
// files of the groups are current, and wraps ErrOutcomeUnknown when it
// cannot tell. The caller may delete the Add files after any other
// error.
func (p *Publisher) Maintain(ctx context.Context, qualTable string, groups []RewriteGroup, expiry *ExpiryPolicy) (Maintenance, error) {
	ident, err := p.Identifier(qualTable)
	if err != nil {
		return Maintenance{}, err
	}
	name := strings.Join(ident, ".")
	tbl, err := p.current(ctx, ident)
	if err != nil {
		return Maintenance{}, fmt.Errorf("load table %s: %w", name, err)
	}
	groups = slices.Clone(groups) // keepCurrent refreshes their Old files
	var res Maintenance
	for i := range groups {
		res.Replaced = append(res.Replaced, i)
	}
	var reloaded *table.Table // the table read back after a failed commit
	for attempt := 1; ; attempt++ {
		if attempt > 1 {
			if tbl = reloaded; tbl == nil {
				if tbl, err = p.load(ctx, ident); err != nil {
					return Maintenance{}, fmt.Errorf("load table %s: %w", name, err)
				}
			}
			if err := keepCurrent(ctx, tbl, groups, &res); err != nil {
				return Maintenance{}, err
			}
		}
		txn, exp, err := p.maintenanceTxn(ctx, tbl, groups, res.Replaced, expiry, attempt > 1)
		var done *table.Table
		start := time.Now()
		switch {
		case err != nil && !isStale(err):
			return Maintenance{}, fmt.Errorf("%s: %w", name, err)
		case err == nil && len(res.Replaced) == 0 && exp.Expired == 0:
			res.Expiry = exp
			return res, nil
		case err == nil:
			res.Expiry = exp
			done, err = txn.Commit(ctx)
		}
		if err == nil || done != nil {
			// done with an error: committed, and deleting the files
			// the expired snapshots alone referenced failed.
			if err != nil {
				p.log.Warn("snapshots expired; some files they alone referenced were not deleted (the orphan pass removes them)", "table", name, "error", err)
			}
			p.loaded.put(ident, done)
			p.committed(qualTable, done.CurrentSnapshot(), time.Since(start))
			res.SnapshotID = done.CurrentSnapshot().SnapshotID
			return res, nil
		}
		what := fmt.Sprintf("maintenance commit (%d files replaced in %d groups, %d snapshots expired)", res.oldFiles(groups), len(res.Replaced), res.Expiry.Expired)
		reloaded = nil
		if !isStale(err) {
			// The commit may have landed with its response lost: read
			// the table back first. Taken for a lost race, it would be
			// retried on a table whose replaced files are gone (this
			// commit removed them): its groups would be given up and
			// the files it added, now the table's, deleted.
			var add []DataFile
			for _, i := range res.Replaced {
				add = append(add, groups[i].Add...)
			}
			var lerr error
			if reloaded, lerr = p.load(ctx, ident); lerr != nil {
				if len(add) > 0 {
					return Maintenance{}, fmt.Errorf("%s of %s: %w (%w; reading the table back: %w)", what, name, ErrOutcomeUnknown, err, lerr)
				}
				return Maintenance{}, commitFailed(what, ident, attempt, p.cfg.CommitAttempts, err, lerr, false)
			}
			if ok, cerr := holdsAll(ctx, reloaded, add); cerr != nil {
				return Maintenance{}, fmt.Errorf("%s of %s: %w (%w; reading the table back: %w)", what, name, ErrOutcomeUnknown, err, cerr)
			} else if ok {
				res.SnapshotID = reloaded.CurrentSnapshot().SnapshotID
				return res, nil // the response was lost, not the commit
			}
			if !raced(err, tbl, reloaded) {
				return Maintenance{}, commitFailed(what, ident, attempt, p.cfg.CommitAttempts, err, nil, false)
			}
		}
		// Built on a state the catalog has moved past: nothing was
		// committed.
		if attempt >= p.cfg.CommitAttempts {
			return Maintenance{}, commitFailed(what, ident, attempt, p.cfg.CommitAttempts, err, nil, true)
		}
		p.conflicted(qualTable)
		p.log.Info("iceberg maintenance conflict, retrying on the table as it is now", "table", name, "attempt", attempt, "error", err)
		if err := waitRetry(ctx, attempt); err != nil {
			return Maintenance{}, err
		}
	}
}

func (m Maintenance) oldFiles(groups []RewriteGroup) int {
	n := 0
	for _, i := range m.Replaced {
		n += len(groups[i].Old)
	}
	return n
}

// maintenanceTxn builds, on tbl, the transaction of a maintenance
// commit: the rewrite of the groups replaced, then the expiry.
func (p *Publisher) maintenanceTxn(ctx context.Context, tbl *table.Table, groups []RewriteGroup, replaced []int, expiry *ExpiryPolicy, retry bool) (*table.Transaction, Expiry, error) {
	txn := tbl.NewTransaction()
	snapshots := len(tbl.Metadata().Snapshots())
	if len(replaced) > 0 {
		var old int
		for _, i := range replaced {
			old += len(groups[i].Old)
		}
		rw := txn.NewRewrite(iceberg.Properties{SummaryRewritten: fmt.Sprint(old)})
		for _, i := range replaced {
			dfs, err := dataFiles(tbl, groups[i].Add)
			if err != nil {
				return nil, Expiry{}, err
			}
			for _, df := range groups[i].Old {
				rw.DeleteFile(df)
			}
			for _, df := range dfs {
				rw.AddDataFile(df)
			}
		}
		if err := rw.Commit(ctx); err != nil {
			return nil, Expiry{}, fmt.Errorf("rewrite %d files: %w", old, err)
		}
		snapshots++
	}
	if expiry == nil {
		return txn, Expiry{Kept: snapshots}, nil
	}
	olderThan, err := expiry.OlderThan(ctx, tbl, retry)
	if err != nil {
		return nil, Expiry{}, err
	}
	if err := txn.ExpireSnapshots(table.WithOlderThan(olderThan), table.WithRetainLast(max(expiry.Keep, 1))); err != nil {
		return nil, Expiry{}, fmt.Errorf("expire snapshots: %w", err)
	}
	staged, err := txn.StagedTable()
	if err != nil {
		return nil, Expiry{}, fmt.Errorf("expire snapshots: %w", err)
	}
	kept := len(staged.Metadata().Snapshots())
	return txn, Expiry{Expired: snapshots - kept, Kept: kept}, nil
}

// keepCurrent leaves out of m.Replaced the groups of which a file is no
// longer a current data file of tbl, adding them to m.GivenUp, and
// points the others' Old files at tbl's entries for them.
func keepCurrent(ctx context.Context, tbl *table.Table, groups []RewriteGroup, m *Maintenance) error {
	live, err := LiveFiles(ctx, tbl)
	if err != nil {
		return err
	}
	cur := make(map[string]iceberg.DataFile, len(live))
	for _, f := range live {
		cur[f.File.FilePath()] = f.File
	}
	kept := m.Replaced[:0]
	for _, i := range m.Replaced {
		g := &groups[i]
		fresh := make([]iceberg.DataFile, 0, len(g.Old))
		for _, f := range g.Old {
			if c, ok := cur[f.FilePath()]; ok {
				fresh = append(fresh, c)
			}
		}
		if len(fresh) != len(g.Old) {
			m.GivenUp = append(m.GivenUp, i)
			continue
		}
		g.Old = fresh
		kept = append(kept, i)
	}
	m.Replaced = kept
	return nil
}

// isStale reports whether building a transaction failed because a file
// to replace is not in the table state it was built on (iceberg-go says
// so only in words).
func isStale(err error) bool {
	return strings.Contains(err.Error(), "cannot delete files that do not belong to the table")
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

// Forget drops what this publisher keeps of the table of qualTable (its
// last loaded or committed state, see loadedTables): a maintenance pass
// is done with a table once it has maintained it, and a state holds what
// iceberg-go read of the table's manifests, a megabyte or more.
func (p *Publisher) Forget(qualTable string) {
	if ident, err := p.Identifier(qualTable); err == nil {
		p.loaded.forget(ident)
	}
}

// holdsAll reports whether tbl's current snapshot holds every file of
// add (and add is not empty).
func holdsAll(ctx context.Context, tbl *table.Table, add []DataFile) (bool, error) {
	if len(add) == 0 || tbl.CurrentSnapshot() == nil {
		return false, nil
	}
	live, err := LiveFiles(ctx, tbl)
	if err != nil {
		return false, err
	}
	cur := make(map[string]bool, len(live))
	for _, f := range live {
		cur[f.File.FilePath()] = true
	}
	for _, f := range add {
		if !cur[f.Location] {
			return false, nil
		}
	}
	return true, nil
}

// Expiry is what an expiry did to a table (Maintain), or would do (Expire).
type Expiry struct {
	// Expired is the number of snapshots removed from the table's
	// metadata (or that would be, in a dry run).
	Expired int
	// Kept is the number of snapshots left.
	Kept int
}

// Expire counts the snapshots of the table of qualTable that an expiry
// of those older than olderThan, keeping at least the last keep, would
// remove (a dry run: Maintain commits expiries).
func (p *Publisher) Expire(ctx context.Context, qualTable string, olderThan time.Duration, keep int) (Expiry, error) {
	ident, err := p.Identifier(qualTable)
	if err != nil {
		return Expiry{}, err
	}
	tbl, err := p.current(ctx, ident)
	if err != nil {
		return Expiry{}, fmt.Errorf("load table %s: %w", strings.Join(ident, "."), err)
	}
	age := func(context.Context, *table.Table, bool) (time.Duration, error) { return olderThan, nil }
	_, res, err := p.maintenanceTxn(ctx, tbl, nil, nil, &ExpiryPolicy{OlderThan: age, Keep: keep}, false)
	if err != nil {
		return Expiry{}, fmt.Errorf("%s: %w", strings.Join(ident, "."), err)
	}
	return res, nil
}
