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

// failingAfter is a source that fails after n messages, and then lets
// the uploads held by its heldStore go on.
type failingAfter struct {
	source.Source
	n       int
	release func()
}

func (f *failingAfter) Next(ctx context.Context) (*source.Message, error) {
	if f.n == 0 {
		f.release()
		return nil, errors.New("input device gone")
	}
	f.n--
	return f.Source.Next(ctx)
}

// heldStore holds every data file's upload until released.
type heldStore struct {
	*store.Local
	released <-chan struct{}
}

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

// TestSummaryOfAFailedRunCountsFilesWithTheirRows: the uploads still
// queued when a run fails finish before Run returns, and its summary
// counts their files and bytes with their rows: taken before them, it
// showed rows written next to "files: 0".
func TestSummaryOfAFailedRunCountsFilesWithTheirRows(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	generate(t, in, gen.Options{Records: 1000, Tables: 2, Seed: 35})
	released := make(chan struct{})
	sum, err := export(t, out, func(c *pipeline.Config) {
		c.Source = &failingAfter{Source: c.Source, n: 600, release: sync.OnceFunc(func() { close(released) })}
		c.Store = &heldStore{Local: c.Store.(*store.Local), released: released}
		c.Writer.MaxRows = 100
	}, in)
	if err == nil || !strings.Contains(err.Error(), "input device gone") {
		t.Fatalf("run error %v, want the source's", err)
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
