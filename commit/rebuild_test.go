package commit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/lakehouse-exporter/lakehouse-exporter/checkpoint"
	"github.com/lakehouse-exporter/lakehouse-exporter/commit"
)

// lakeFiles lists the files exportRun wrote, with the offsets their
// content names, as the lake's metadata tells them.
func lakeFiles(st commit.Store) func(context.Context) ([]commit.FileRange, error) {
	return func(ctx context.Context) ([]commit.FileRange, error) {
		keys, err := st.List(ctx, "")
		if err != nil {
			return nil, err
		}
		var out []commit.FileRange
		for _, k := range keys {
			if strings.HasPrefix(k, "_checkpoints/") {
				continue
			}
			data, err := st.Get(ctx, k)
			if err != nil {
				return nil, err
			}
			f := commit.FileRange{Key: k}
			if _, err := fmt.Sscanf(string(data), "%d-%d", &f.FirstOffset, &f.LastOffset); err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out = append(out, f)
		}
		return out, nil
	}
}

// TestRebuiltCheckpointAfterEveryCrashPointKeepsExactlyOnce kills a run
// before each of its writes in turn, replaces the checkpoint by garbage,
// rebuilds it from the files, and lets a run finish: every record must be
// in storage exactly once. A rebuild that adopted every file its intents
// name would skip records still buffered when the run died; one that
// kept none would write the committed ones again.
func TestRebuiltCheckpointAfterEveryCrashPointKeepsExactlyOnce(t *testing.T) {
	clean := &crashStore{Store: newMemStore(), after: -1}
	if err := exportRun(t, clean, &source{acked: -1}, nil); err != nil {
		t.Fatal(err)
	}
	for crash := 0; crash <= clean.writes; crash++ {
		st := newMemStore()
		src := &source{acked: -1}
		if err := exportRun(t, &crashStore{Store: st, after: crash}, src, nil); err != nil && !errors.Is(err, errCrashed) {
			t.Fatalf("crash before write %d: %v", crash, err)
		}
		before, _, _ := checkpoint.LoadStored(context.Background(), st, "p")
		st.put(checkpoint.Key("p"), []byte("\x00garbage"))
		res, err := commit.Rebuild(context.Background(), commit.RebuildConfig{Store: st, Partition: "p", Force: true, Files: lakeFiles(st)})
		if err != nil {
			t.Fatalf("crash before write %d: rebuild: %v", crash, err)
		}
		if res.Corrupt == nil {
			t.Errorf("crash before write %d: the garbage checkpoint was not reported corrupt", crash)
		}
		if res.After.Offset > before.Offset {
			t.Errorf("crash before write %d: rebuilt offset %d past the lost checkpoint's %d", crash, res.After.Offset, before.Offset)
		}
		if err := exportRun(t, st, src, nil); err != nil {
			t.Fatalf("crash before write %d: the run after the rebuild: %v", crash, err)
		}
		checkExactlyOnce(t, st, src)
		if t.Failed() {
			t.Fatalf("crash before write %d", crash)
		}
	}
}

// TestRebuildOfAFinishedRunGivesItsOffset: after a clean run the rebuilt
// checkpoint has the original's offset, and the schema state the Schema
// function gives.
func TestRebuildOfAFinishedRunGivesItsOffset(t *testing.T) {
	st := newMemStore()
	if err := exportRun(t, st, &source{acked: -1}, nil); err != nil {
		t.Fatal(err)
	}
	st.put(checkpoint.Key("p"), []byte("{"))
	marks := []checkpoint.VersionMark{{Table: "T", Version: 2, OpenedAtPos: "x"}}
	var keptSeen int
	res, err := commit.Rebuild(context.Background(), commit.RebuildConfig{Store: st, Partition: "p", Files: lakeFiles(st),
		Schema: func(_ context.Context, kept []commit.FileRange) (json.RawMessage, []checkpoint.VersionMark, error) {
			keptSeen = len(kept)
			return json.RawMessage(`{"tables":[]}`), marks, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := checkpoint.Load(context.Background(), st, "p")
	if err != nil {
		t.Fatal(err)
	}
	if got.Offset != lastOffset || res.After.Offset != lastOffset {
		t.Errorf("rebuilt offset %d (reported %d), want %d", got.Offset, res.After.Offset, lastOffset)
	}
	if keptSeen != 5 || res.Files != 5 {
		t.Errorf("Schema saw %d files, result says %d; want the 5 files", keptSeen, res.Files)
	}
	if string(got.Catalog) != `{"tables":[]}` || len(got.WrittenVersions) != 1 || got.WrittenVersions[0] != marks[0] {
		t.Errorf("rebuilt checkpoint carries %s and %v", got.Catalog, got.WrittenVersions)
	}
}

// TestRebuildRefusesWhatMayBeLive: a readable checkpoint and pending
// intents are refused without Force, and a checkpoint written while the
// rebuild runs fences it.
func TestRebuildRefusesWhatMayBeLive(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	if err := exportRun(t, st, &source{acked: -1}, nil); err != nil {
		t.Fatal(err)
	}
	_, err := commit.Rebuild(ctx, commit.RebuildConfig{Store: st, Partition: "p", Files: lakeFiles(st)})
	if err == nil || !strings.Contains(err.Error(), "is readable") || !strings.Contains(err.Error(), "--force") {
		t.Errorf("readable checkpoint: %v", err)
	}
	st.put(checkpoint.Key("p"), []byte("garbage"))
	if _, err := checkpoint.WriteIntent(ctx, st, "p", 10, []string{"T/part-p-10.parquet"}, "other"); err != nil {
		t.Fatal(err)
	}
	_, err = commit.Rebuild(ctx, commit.RebuildConfig{Store: st, Partition: "p", Files: lakeFiles(st)})
	if err == nil || !strings.Contains(err.Error(), "pending intents") || !strings.Contains(err.Error(), "other") {
		t.Errorf("pending intent: %v", err)
	}
	files := lakeFiles(st)
	_, err = commit.Rebuild(ctx, commit.RebuildConfig{Store: st, Partition: "p", Force: true,
		Files: func(ctx context.Context) ([]commit.FileRange, error) {
			st.put(checkpoint.Key("p"), []byte("written meanwhile"))
			return files(ctx)
		}})
	if !errors.Is(err, checkpoint.ErrFenced) {
		t.Errorf("checkpoint written during the rebuild: %v, want ErrFenced", err)
	}
}

// TestRebuildDeletesAFencedRunsCopy: a file of a pending intent whose rows
// a kept file of its table already holds (a second run over the
// partition, killed after its refused checkpoint and before it deleted
// its files) is deleted, not adopted: adopted, its rows were in the lake
// twice.
func TestRebuildDeletesAFencedRunsCopy(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	put := func(key string, first, last int64) {
		st.put(key, []byte(fmt.Sprintf("%d-%d", first, last)))
	}
	put("T/v1/part-p-00000000000000000000-runa.parquet", 0, 3) // committed
	put("T/v1/part-p-00000000000000000000-runb.parquet", 0, 3) // the fenced run's copy
	put("U/v1/part-p-00000000000000000002-runa.parquet", 2, 2) // committed, another table
	if _, err := checkpoint.WriteIntent(ctx, st, "p", 0, []string{"T/v1/part-p-00000000000000000000-runb.parquet"}, "runb"); err != nil {
		t.Fatal(err)
	}
	st.put(checkpoint.Key("p"), []byte("{"))
	table := func(k string) string { return k[:1] }
	files := func(ctx context.Context) ([]commit.FileRange, error) {
		fs, err := lakeFiles(st)(ctx)
		for i := range fs {
			fs[i].Table = table(fs[i].Key)
		}
		return fs, err
	}
	res, err := commit.Rebuild(ctx, commit.RebuildConfig{Store: st, Partition: "p", Force: true, Files: files})
	if err != nil {
		t.Fatal(err)
	}
	if res.After.Offset != 3 || res.Adopted != 0 || res.Deleted != 1 {
		t.Errorf("offset %d, %d adopted, %d deleted; want 3 and the copy deleted", res.After.Offset, res.Adopted, res.Deleted)
	}
	if _, err := st.Get(ctx, "T/v1/part-p-00000000000000000000-runb.parquet"); err == nil {
		t.Error("the fenced run's copy is still in the lake")
	}
}

// TestRebuildRefusesAPartitionTheLakeLacks: a name the lake holds no
// checkpoint, intent or file of (a typo, most likely) gets no checkpoint
// written for it, and the error lists the partitions the lake has.
func TestRebuildRefusesAPartitionTheLakeLacks(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	if err := exportRun(t, st, &source{acked: -1}, nil); err != nil {
		t.Fatal(err)
	}
	noFiles := func(context.Context) ([]commit.FileRange, error) { return nil, nil }
	for _, force := range []bool{false, true} {
		_, err := commit.Rebuild(ctx, commit.RebuildConfig{Store: st, Partition: "nope-0", Force: force, Files: noFiles})
		if !errors.Is(err, commit.ErrUnknownPartition) || !strings.Contains(err.Error(), "nope-0") || !strings.Contains(err.Error(), "checkpoints of are p") {
			t.Errorf("force %v: %v, want ErrUnknownPartition naming p", force, err)
		}
		if _, err := st.Get(ctx, checkpoint.Key("nope-0")); err == nil {
			t.Fatalf("force %v: a checkpoint was written for nope-0", force)
		}
	}
}
