package maintain

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/lakehouse-exporter/lakehouse-exporter/checkpoint"
)

// pendingFiles is the set of keys the pending intents of every source
// partition name: files uploaded, or about to be, whose round is not
// checkpointed yet. Recovery may still withdraw and delete them, so
// compaction leaves them alone, and they are never orphans. An intent
// that its partition's checkpoint covers is not pending: its round is
// durable, and only its removal failed or has not happened yet (left
// counted, a partition whose exporter never runs again would keep every
// later snapshot of its tables from expiring).
//
// The set is listed once per table pass, after compaction loaded the
// table its commit (compaction and expiry) is built on, and before
// orphan removal takes the table (loaded again, or as a commit of this
// pass left it: tableAfterListing): each step needs the listing on that
// side of its table state (see the package comment). A commit retried on
// a reloaded table lists the intents again (expiryAge), and so does
// orphan removal when the listing is older than half the orphan age
// (removeOrphans).
func (t *tablePass) pendingFiles(ctx context.Context) (map[string]bool, error) {
	if t.pending != nil {
		return t.pending, nil
	}
	listed := time.Now()
	p, err := listPending(ctx, t.cfg.Store)
	if err != nil {
		return nil, err
	}
	t.pending, t.listed = p, listed
	return p, nil
}

func listPending(ctx context.Context, st Store) (map[string]bool, error) {
	intents, err := checkpoint.ListAllIntents(ctx, st)
	if err != nil {
		return nil, err
	}
	checkpoints := map[string]*checkpoint.Handle{}
	out := map[string]bool{}
	for _, in := range intents {
		cp, ok := checkpoints[in.Partition]
		if !ok {
			// Read after the intent was listed: a checkpoint only moves
			// on, so one that covers the intent covers it for good.
			if cp, err = checkpoint.Load(ctx, st, in.Partition); errors.Is(err, checkpoint.ErrCorrupt) {
				cp = &checkpoint.Handle{} // covers nothing: its intents stay pending until it is rebuilt
			} else if err != nil {
				return nil, err
			}
			checkpoints[in.Partition] = cp
		}
		if cp.Found && cp.Checkpoint.Covers(in) {
			continue
		}
		for _, f := range in.Files {
			out[f] = true
		}
	}
	return out, nil
}

func isNoSuchTable(err error) bool { return errors.Is(err, catalog.ErrNoSuchTable) }

func newRunID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
