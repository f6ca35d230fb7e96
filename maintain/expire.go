package maintain

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
)

// expiryAge is how old a snapshot of tbl must be to be expired (see the
// package comment, step 2); compaction's commit calls it with the table
// state it is built on.
//
// A round whose files a pending intent still names is not checkpointed:
// the exporter may still be retrying its commit, and a retry after a
// commit whose response was lost looks for the round's snapshot by round
// id in the table's history to know that it landed. Expiring that
// snapshot would make the retry commit the round's files a second time,
// so the age limit is stretched to keep the oldest snapshot holding such
// a file.
// The intents are listed after tbl was loaded: a snapshot in tbl was
// committed after its round's intent was written, so the listing names
// every round of tbl that is still pending. The first state is the one
// compaction loaded before its listing; a state reloaded after a lost
// race gets a listing of its own.
func (t *tablePass) expiryAge(ctx context.Context, tbl *table.Table, reloaded bool) (time.Duration, error) {
	if reloaded {
		t.pending = nil // list again (pendingFiles)
	}
	pending, err := t.pendingFiles(ctx)
	if err != nil {
		return 0, err
	}
	olderThan := t.cfg.ExpireAfter
	if oldest, ok, err := t.oldestPendingSnapshot(ctx, tbl, pending); err != nil {
		return 0, err
	} else if ok {
		if need := time.Since(time.UnixMilli(oldest)) + time.Minute; need > olderThan {
			t.log.Info("keeping the snapshots of a round not yet checkpointed: the exporter's retry of its commit recognises the round by them",
				"expire_after", olderThan, "stretched_to", need.Round(time.Second))
			olderThan = need
		}
	}
	return olderThan, nil
}

// expireDryRun counts the snapshots a pass would expire.
func (t *tablePass) expireDryRun(ctx context.Context, s *Summary) error {
	tbl, err := t.cfg.Publisher.CachedTable(ctx, t.name)
	if err != nil {
		return err
	}
	olderThan, err := t.expiryAge(ctx, tbl, false)
	if err != nil {
		return err
	}
	res, err := t.cfg.Publisher.Expire(ctx, t.name, olderThan, t.cfg.KeepSnapshots)
	if err != nil {
		return err
	}
	s.SnapshotsExpired += res.Expired
	return nil
}

// oldestPendingSnapshot returns the commit time (ms) of the oldest
// snapshot, in the current one's history, that holds a file a pending
// intent names.
func (t *tablePass) oldestPendingSnapshot(ctx context.Context, tbl *table.Table, pending map[string]bool) (int64, bool, error) {
	if len(pending) == 0 {
		return 0, false, nil
	}
	base := t.cfg.Store.String() + "/"
	holds := func(files []tables.LiveFile) bool {
		for _, f := range files {
			if k, ok := strings.CutPrefix(f.File.FilePath(), base); ok && pending[k] {
				return true
			}
		}
		return false
	}
	var oldest int64
	found := false
	seen := map[int64]bool{}
	for snap := tbl.CurrentSnapshot(); snap != nil && !seen[snap.SnapshotID]; {
		seen[snap.SnapshotID] = true
		tasks, err := tbl.Scan(table.WithSnapshotID(snap.SnapshotID)).PlanFiles(ctx)
		if err != nil {
			return 0, false, fmt.Errorf("list the data files of snapshot %d: %w", snap.SnapshotID, err)
		}
		files := make([]tables.LiveFile, len(tasks))
		for i, task := range tasks {
			files[i].File = task.File
		}
		if !holds(files) {
			break
		}
		oldest, found = snap.TimestampMs, true
		if snap.ParentSnapshotID == nil {
			break
		}
		snap = tbl.SnapshotByID(*snap.ParentSnapshotID)
	}
	return oldest, found, nil
}
