package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/gen"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/miniotest"
	"github.com/lakehouse-exporter/lakehouse-exporter/pipeline"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
	"github.com/lakehouse-exporter/lakehouse-exporter/store"
)

// TestSampleStreamToMinIO exports the sample to a real MinIO server, then
// downloads every object and reads it with DuckDB like the local lake.
func TestSampleStreamToMinIO(t *testing.T) {
	s3, _ := miniotest.NewBucket(t, miniotest.Shared(t), "lake/v1", nil)
	sum, err := export(t, "", func(c *pipeline.Config) { c.Store = s3 }, samplePath)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Files == 0 || sum.Rejected != 0 {
		t.Fatalf("summary: %+v", sum)
	}
	dir := t.TempDir()
	miniotest.Download(t, s3, dir)
	checkSampleLake(t, dir)
	if _, err := os.Stat(filepath.Join(dir, "_checkpoints", "partitions", source.PartitionName(samplePath)+".json")); err != nil {
		t.Errorf("no checkpoint in the bucket: %v", err)
	}
}

// countingStore calls onPut after each successful put with its key and
// the number of puts so far: tests use it to stop a server, slow the store
// down or count what was written.
type countingStore struct {
	pipeline.Store
	puts  atomic.Int64
	onPut func(key string, n int64)
}

func (c *countingStore) Put(ctx context.Context, key string, data []byte) error {
	if err := c.Store.Put(ctx, key, data); err != nil {
		return err
	}
	c.onPut(key, c.puts.Add(1))
	return nil
}

// TestStoreOutageInTheMiddleOfAnExport stops the MinIO process during an
// export, keeps it down for several seconds and starts it again on the
// same data folder: the run finishes and the lake holds every DML record
// exactly once.
func TestStoreOutageInTheMiddleOfAnExport(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and stops a MinIO server")
	}
	srv := miniotest.Own(t)
	s3, _ := miniotest.NewBucket(t, srv.Creds, "", func(c *store.S3Config) {
		c.RetryFor = 2 * time.Minute
		c.MaxBackoff = time.Second
		c.RequestTimeout = 5 * time.Second
	})
	in := filepath.Join(t.TempDir(), "gen.jsonl")
	st := generate(t, in, gen.Options{Records: 10000, Tables: 3, Seed: 3})
	outageDone := make(chan struct{})
	var once atomic.Bool
	cs := &countingStore{Store: s3, onPut: func(_ string, n int64) {
		if n == 3 && once.CompareAndSwap(false, true) {
			srv.Stop()
			go func() {
				defer close(outageDone)
				time.Sleep(4 * time.Second)
				srv.Start()
			}()
		}
	}}
	sum, err := export(t, "", func(c *pipeline.Config) { c.Store = cs; c.Writer.MaxRows = 400 }, in)
	if err != nil {
		t.Fatal(err)
	}
	<-outageDone
	if !once.Load() {
		t.Fatal("the outage never happened")
	}
	dir := t.TempDir()
	miniotest.Download(t, s3, dir)
	rows := query(t, openDuck(t), `SELECT count(*), count(DISTINCT pos) FROM `+lakeGlob(dir, ""))
	want := strconv.Itoa(st.DML) + "|" + strconv.Itoa(st.DML)
	if got := rowStrings(rows)[0]; got != want {
		t.Errorf("rows|distinct pos after the outage = %s, want %s (summary %+v)", got, want, sum)
	}
}
