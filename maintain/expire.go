package maintain

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
)

// expire removes old snapshots (see the package comment, step 2).
//
// A round whose files a pending intent still names is not checkpointed:
// the exporter's recovery looks for its snapshot by round id in the
// table's history to know whether to commit it again. Expiring that
// snapshot would make recovery commit the round a second time, so the
// age limit is stretched to keep the oldest snapshot holding such a file.
func (t *tablePass) expire(ctx context.Context, s *Summary) error {
	pending, tbl, err := t.pendingThenTable(ctx)
	if err != nil {
		return err
	}
	olderThan := t.cfg.ExpireAfter
	if oldest, ok, err := t.oldestPendingSnapshot(ctx, tbl, pending); err != nil {
		return err
	} else if ok {
		if need := time.Since(time.UnixMilli(oldest)) + time.Minute; need > olderThan {
			t.log.Info("keeping the snapshots of a round not yet checkpointed: the exporter's recovery recognises the round by them",
				"expire_after", olderThan, "stretched_to", need.Round(time.Second))
			olderThan = need
		}
	}
	res, err := t.cfg.Publisher.Expire(ctx, t.name, olderThan, t.cfg.KeepSnapshots, t.cfg.DryRun)
	if err != nil {
		return err
	}
	s.SnapshotsExpired += res.Expired
	t.committed = t.committed || (res.Expired > 0 && !t.cfg.DryRun)
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
