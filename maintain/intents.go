package maintain

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"

	"github.com/apache/iceberg-go/catalog"
	"github.com/lakehouse-exporter/lakehouse-exporter/checkpoint"
)

// pendingFiles is the set of keys the pending intents of every source
// partition name: files uploaded, or about to be, whose round is not
// checkpointed yet. Recovery may still withdraw and delete them, so
// compaction leaves them alone, and they are never orphans.
//
// The set is listed once per table pass, after compaction loaded the
// table its commit (compaction and expiry) is built on, and before
// orphan removal takes the table (loaded again, or as a commit of this
// pass left it: tableAfterListing): each step needs the listing on that
// side of its table state (see the package comment). A commit retried on
// a reloaded table lists the intents again (expiryAge).
func (t *tablePass) pendingFiles(ctx context.Context) (map[string]bool, error) {
	if t.pending != nil {
		return t.pending, nil
	}
	p, err := listPending(ctx, t.cfg.Store)
	if err != nil {
		return nil, err
	}
	t.pending = p
	return p, nil
}

func listPending(ctx context.Context, st Store) (map[string]bool, error) {
	intents, err := checkpoint.ListAllIntents(ctx, st)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, in := range intents {
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
