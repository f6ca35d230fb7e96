package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/miniotest"
)

// TestMaintainOnS3: the sample exported a row per file to MinIO with the
// SQL catalog (its metadata in the bucket too, read and written through
// iceberg-go's S3 file IO), then a pass that compacts, expires every
// snapshot but the newest (deleting the replaced files from the bucket)
// and plans orphans on the bucket: the tables keep their rows and only
// the compacted files stay.
func TestMaintainOnS3(t *testing.T) {
	c := miniotest.Shared(t)
	s3, cfg := miniotest.NewBucket(t, c, "", nil)
	env := map[string]string{"EXPORTER_S3_ACCESS_KEY_ID": c.AccessKey, "EXPORTER_S3_SECRET_ACCESS_KEY": c.SecretKey}
	dir := t.TempDir()
	common := []string{"--sink", "s3://" + cfg.Bucket + "/lake", "--s3-endpoint", c.Endpoint,
		"--catalog", "sql", "--catalog-uri", "sqlite://" + filepath.Join(dir, "c.db"),
		"--catalog-property", "s3.endpoint=" + c.Endpoint + ";s3.region=us-east-1;s3.access-key-id=" + c.AccessKey + ";s3.secret-access-key=" + c.SecretKey}
	code, _, stderr := runExporter(t, env, append([]string{"run", "--source", "file:../../testdata/goldengate/sample.jsonl", "--file-max-rows", "1"}, common...)...)
	if code != exitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	dataFiles := func() (parts, compacted int) {
		keys, err := s3.List(t.Context(), "lake/")
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			switch {
			case strings.HasPrefix(k, "lake/_"):
			case strings.Contains(k, "/part-"):
				parts++
			case strings.Contains(k, "/compact-"):
				compacted++
			}
		}
		return parts, compacted
	}
	before, _ := dataFiles()
	if before < 8 {
		t.Fatalf("%d data files: the test needs many small ones", before)
	}
	// A compacted file whose pass died before its commit: an orphan.
	keys, _ := s3.List(t.Context(), "lake/SALES.ORDERS/schema_version=1/")
	orphan := keys[0][:strings.LastIndexByte(keys[0], '/')] + "/compact-dead-000-000.parquet"
	if err := s3.Put(t.Context(), orphan, []byte("PAR1 leftover")); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runExporter(t, env, append([]string{"maintain", "--expire-after", "1ns", "--keep-snapshots", "1", "--orphan-age", "1ns"}, common...)...)
	if code != exitOK || !strings.Contains(out, "files rewritten") {
		t.Fatalf("maintain: exit %d\n%s%s", code, out, stderr)
	}
	parts, compacted := dataFiles()
	if compacted == 0 || parts+compacted >= before {
		t.Fatalf("%d exporter files and %d compacted ones in the bucket, %d files before: %s", parts, compacted, before, out)
	}
	if _, err := s3.Get(t.Context(), orphan); err == nil {
		t.Errorf("the orphan %s is still in the bucket: %s", orphan, out)
	}
	code, out, stderr = runExporter(t, env, append([]string{"scan", "SALES.ORDERS", "--columns", "pos"}, common...)...)
	if code != exitOK || strings.Count(out, "=100") != 6 {
		t.Fatalf("scan after maintenance: exit %d\n%s%s", code, out, stderr)
	}
	t.Logf("%d files before the pass; after it %d exporter files (each alone in its folder), %d compacted", before, parts, compacted)
}
