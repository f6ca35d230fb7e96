package tables

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// SummaryWithdrawn marks the snapshots Withdraw commits.
const SummaryWithdrawn = propPrefix + "withdrawn-files"

// Withdraw removes from the table of qualTable those of its current data
// files whose location is in locations, in one snapshot, and returns how
// many it removed. Recovery calls it for the files of a round that some
// tables committed and whose checkpoint was never written: those files
// are about to be deleted and their records exported again, so the tables
// must let go of them first. A table that does not exist, or holds none
// of them, is left as it is.
func (p *Publisher) Withdraw(ctx context.Context, qualTable string, locations []string) (int, error) {
	ident, err := p.Identifier(qualTable)
	if err != nil {
		return 0, err
	}
	want := make(map[string]bool, len(locations))
	for _, l := range locations {
		want[l] = true
	}
	tbl, err := p.load(ctx, ident)
	for attempt := 1; ; attempt++ {
		if errors.Is(err, catalog.ErrNoSuchTable) {
			return 0, nil
		}
		if err != nil {
			return 0, fmt.Errorf("load table %s: %w", strings.Join(ident, "."), err)
		}
		if tbl.CurrentSnapshot() == nil {
			return 0, nil
		}
		live, err := LiveFiles(ctx, tbl) // each file once, however many scan tasks it splits into
		if err != nil {
			return 0, err
		}
		var drop []iceberg.DataFile
		for _, f := range live {
			if want[f.File.FilePath()] {
				drop = append(drop, f.File)
			}
		}
		if len(drop) == 0 {
			return 0, nil
		}
		txn := tbl.NewTransaction()
		props := iceberg.Properties{SummaryWithdrawn: fmt.Sprint(len(drop))}
		start := time.Now()
		var committed *table.Table
		if err = txn.ReplaceDataFilesWithDataFiles(ctx, drop, nil, props); err == nil {
			if committed, err = txn.Commit(ctx); err == nil {
				p.loaded.put(ident, committed)
			}
		}
		if err == nil {
			p.committed(qualTable, committed.CurrentSnapshot(), time.Since(start))
			p.log.Info("iceberg files withdrawn: their round was never checkpointed, and its records are exported again",
				"table", strings.Join(ident, "."), "files", len(drop))
			return len(drop), nil
		}
		reloaded, lerr := p.load(ctx, ident)
		conflict := lerr == nil && raced(err, tbl, reloaded)
		if !conflict || attempt >= p.cfg.CommitAttempts {
			return 0, commitFailed(fmt.Sprintf("withdrawal of %d files", len(drop)), ident, attempt, p.cfg.CommitAttempts, err, lerr, conflict)
		}
		p.conflicted(qualTable)
		if err := waitRetry(ctx, attempt); err != nil {
			return 0, err
		}
		tbl = reloaded
	}
}
