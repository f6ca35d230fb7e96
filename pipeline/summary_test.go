package pipeline_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/gen"
	"github.com/lakehouse-exporter/lakehouse-exporter/pipeline"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
	"github.com/lakehouse-exporter/lakehouse-exporter/store"
)

// failingAfter is a source that, after n messages, fails: with err, or,
// if err is nil, by handing out a message of the partition elsewhere. It
// then lets the uploads held by a heldStore go on.
type failingAfter struct {
	source.Source
	n       int
	err     error
	release func()
}

const elsewhere = "elsewhere"

func (f *failingAfter) Next(ctx context.Context) (*source.Message, error) {
	if f.n > 0 {
		f.n--
		return f.Source.Next(ctx)
	}
	f.release()
	if f.err != nil {
		return nil, f.err
	}
	m, err := f.Source.Next(ctx)
	if err == nil {
		m.Partition = elsewhere
	}
	return m, err
}

// heldStore holds every data file's upload until released, and cannot
// read or write anything of the partition elsewhere.
type heldStore struct {
	*store.Local
	released <-chan struct{}
}

var errUnreachable = errors.New("store unreachable")

func (h *heldStore) Put(ctx context.Context, key string, data []byte) error {
	if !strings.HasPrefix(key, "_") {
		select {
		case <-h.released:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return h.Local.Put(ctx, key, data)
}

func (h *heldStore) Get(ctx context.Context, key string) ([]byte, error) {
	if strings.Contains(key, elsewhere) {
		return nil, errUnreachable
	}
	return h.Local.Get(ctx, key)
}

func (h *heldStore) GetWithETag(ctx context.Context, key string) ([]byte, string, error) {
	if strings.Contains(key, elsewhere) {
		return nil, "", errUnreachable
	}
	return h.Local.GetWithETag(ctx, key)
}

func (h *heldStore) PutIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	if strings.Contains(key, elsewhere) {
		return "", errUnreachable
	}
	return h.Local.PutIfAbsent(ctx, key, data)
}

// exportFailing exports in into out, files rolled every 100 rows, with
// a source that fails after n messages (with srcErr, or by a partition
// whose checkpoint cannot be read if srcErr is nil).
func exportFailing(t *testing.T, out, in string, n int, srcErr error) (pipeline.Summary, error) {
	t.Helper()
	released := make(chan struct{})
	return export(t, out, func(c *pipeline.Config) {
		c.Source = &failingAfter{Source: c.Source, n: n, err: srcErr, release: sync.OnceFunc(func() { close(released) })}
		c.Store = &heldStore{Local: c.Store.(*store.Local), released: released}
		c.Writer.MaxRows = 100
	}, in)
}

// TestSummaryOfAFailedRunCountsFilesWithTheirRows: the uploads still
// queued when a run fails finish before Run returns, and its summary
// counts their files and bytes with their rows: taken before them, it
// showed rows written next to "files: 0".
func TestSummaryOfAFailedRunCountsFilesWithTheirRows(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	generate(t, in, gen.Options{Records: 1000, Tables: 2, Seed: 35})
	sum, err := exportFailing(t, out, in, 600, nil)
	if !errors.Is(err, errUnreachable) {
		t.Fatalf("run error %v, want the store's", err)
	}
	files := dataFiles(t, out)
	var rows int64
	for _, n := range sum.RowsByTable {
		rows += n
	}
	if len(files) == 0 || sum.Files != len(files) {
		t.Errorf("summary counts %d files, the lake holds %d", sum.Files, len(files))
	}
	lake := query(t, openDuck(t), "SELECT count(*) FROM "+lakeGlob(out, ""))[0][0].(int64)
	if rows != lake {
		t.Errorf("summary counts %d rows written, the lake's files hold %d", rows, lake)
	}
	if sum.Ended {
		t.Error("summary says the source ended")
	}
}

// TestFailingInputIsCheckpointedWhereItFailed: what was read before the
// source failed is written and checkpointed, and the run says where it
// stopped; the next run goes on from there, each row once.
func TestFailingInputIsCheckpointedWhereItFailed(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	generate(t, in, gen.Options{Records: 1000, Tables: 2, Seed: 35})
	gone := errors.New("input device gone")
	sum, err := exportFailing(t, out, in, 600, gone)
	if !errors.Is(err, gone) {
		t.Fatalf("run error %v, want the source's", err)
	}
	if sum.Ended || len(sum.Positions) != 1 || sum.Positions[0].LastRead != 600 || sum.Positions[0].Checkpointed != 600 {
		t.Errorf("summary: ended %v, positions %+v; want not ended, line 600 read and checkpointed", sum.Ended, sum.Positions)
	}
	sum, err = export(t, out, nil, in)
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Ended || sum.Skipped == 0 {
		t.Errorf("rerun: ended %v, skipped %d", sum.Ended, sum.Skipped)
	}
	got := query(t, openDuck(t), "SELECT count(*), count(DISTINCT pos) FROM "+lakeGlob(out, ""))[0]
	if got[0].(int64) != 1000 || got[1].(int64) != 1000 {
		t.Errorf("lake holds %v rows (distinct positions), want 1000 each", got)
	}
}
