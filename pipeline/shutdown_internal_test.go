package pipeline

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
	"github.com/lakehouse-exporter/lakehouse-exporter/checkpoint"
	"github.com/lakehouse-exporter/lakehouse-exporter/commit"
	"github.com/lakehouse-exporter/lakehouse-exporter/store"
)

// blockingStore's Put of a data or dead-letter file blocks until its
// context ends, and says so on ended.
type blockingStore struct {
	*store.Local
	started, ended chan struct{}
}

func (b *blockingStore) Put(ctx context.Context, key string, data []byte) error {
	if strings.HasPrefix(key, "_checkpoints/") {
		return b.Local.Put(ctx, key, data)
	}
	close(b.started)
	<-ctx.Done()
	close(b.ended)
	return ctx.Err()
}

// TestShutdownDeadlineEndsUploads: when the context of a commit's wait
// ends (the shutdown deadline), the upload in flight is cancelled, wait
// returns, and the round is not checkpointed.
func TestShutdownDeadlineEndsUploads(t *testing.T) {
	local, err := store.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st := &blockingStore{Local: local, started: make(chan struct{}), ended: make(chan struct{})}
	ctx := context.Background()
	commits := commit.New(commit.Config{Store: st})
	cp, err := commits.Take(ctx, "p", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	commits.Adopt("p", cp).Read(3)
	sum := Summary{RowsByTable: map[string]int64{}, RejectedBy: map[cdc.Reason]int64{}}
	up := newUploader(ctx, st, commits, 2, 1<<20, slog.New(slog.DiscardHandler), &sum, NopObserver{})
	defer up.close()
	if err := up.sendDeadLetters(ctx, dlqFile{partition: "p", firstOffset: 0, lastOffset: 3, key: "_dlq/x.jsonl", data: []byte("{}\n")}); err != nil {
		t.Fatal(err)
	}
	<-st.started // the upload is in flight
	deadline, cancel := context.WithCancelCause(ctx)
	cancel(errors.New("shutdown deadline"))
	if err := up.wait(deadline); err == nil {
		t.Fatal("wait returned no error with the upload cut short")
	}
	select {
	case <-st.ended:
	default:
		t.Fatal("wait returned while the upload still ran")
	}
	if _, err := commits.Commit(ctx); !errors.Is(err, commit.ErrIncomplete) {
		t.Errorf("commit after the cut-short upload: %v, want ErrIncomplete", err)
	}
	got, err := checkpoint.Load(ctx, st, "p")
	if err != nil {
		t.Fatal(err)
	}
	if got.Offset != -1 {
		t.Errorf("checkpoint at %d covers the upload that never finished", got.Offset)
	}
}
