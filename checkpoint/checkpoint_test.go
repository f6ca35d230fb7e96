package checkpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/store"
)

func TestSaveLoadRoundTrip(t *testing.T) {
	st, _ := store.NewLocal(t.TempDir())
	ctx := context.Background()
	h, err := Load(ctx, st, "topic-0")
	if err != nil || h.Found || h.Offset != -1 {
		t.Fatalf("empty sink: %+v %v", h, err)
	}
	h.Offset = 41
	h.Catalog = []byte(`{"tables":[]}`)
	if err := h.Save(ctx, st, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	h.Offset = 99
	if err := h.Save(ctx, st, time.Unix(1, 0)); err != nil {
		t.Fatalf("second save by the owner: %v", err)
	}
	got, err := Load(ctx, st, "topic-0")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Found || got.Offset != 99 || string(got.Catalog) != `{"tables":[]}` || got.Partition != "topic-0" {
		t.Errorf("loaded %+v", got.Checkpoint)
	}
}

// TestWrittenVersionsAreOptional: the written versions a file's checkpoint
// keeps are saved and loaded with it, left out when there are none (the
// object is then what earlier versions wrote), and a checkpoint without
// them, as earlier versions wrote it, loads with none.
func TestWrittenVersionsAreOptional(t *testing.T) {
	st, _ := store.NewLocal(t.TempDir())
	ctx := context.Background()
	h, _ := Load(ctx, st, "in.jsonl")
	h.Offset = 7
	if err := h.Save(ctx, st, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	data, _ := st.Get(ctx, Key("in.jsonl"))
	if strings.Contains(string(data), "written_versions") {
		t.Errorf("checkpoint without written versions: %s", data)
	}
	marks := []VersionMark{{Table: "S.H", Version: 2, OpenedAtPos: "d1"}, {Table: "S.K", Version: 5}}
	h.WrittenVersions = marks
	if err := h.Save(ctx, st, time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	got, err := Load(ctx, st, "in.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.WrittenVersions) != 2 || got.WrittenVersions[0] != marks[0] || got.WrittenVersions[1] != marks[1] {
		t.Errorf("loaded written versions %+v, want %+v", got.WrittenVersions, marks)
	}
	old, err := Decode([]byte(`{"version":2,"partition":"in.jsonl","offset":7,"written_at":"2026-07-13T00:00:00Z","owner":"ab12cd34"}`))
	if err != nil || old.WrittenVersions != nil {
		t.Errorf("checkpoint of an earlier version: %+v %v", old, err)
	}
	for _, bad := range []string{`[{"version":2}]`, `[{"table":"S.H","version":0}]`} {
		if _, err := Decode([]byte(`{"version":2,"partition":"p","offset":1,"written_versions":` + bad + `}`)); err == nil {
			t.Errorf("written versions %s accepted", bad)
		}
	}
}

// TestStaleInstanceIsFenced: once another instance has written the
// checkpoint, an instance holding the older copy can no longer write it.
func TestStaleInstanceIsFenced(t *testing.T) {
	st, _ := store.NewLocal(t.TempDir())
	ctx := context.Background()
	first, _ := Load(ctx, st, "p")
	first.Offset = 10
	if err := first.Save(ctx, st, time.Now()); err != nil {
		t.Fatal(err)
	}
	stale, _ := Load(ctx, st, "p")
	owner, _ := Load(ctx, st, "p")
	owner.Offset = 20
	if err := owner.Save(ctx, st, time.Now()); err != nil {
		t.Fatal(err)
	}
	stale.Offset = 15
	if err := stale.Save(ctx, st, time.Now()); !errors.Is(err, ErrFenced) {
		t.Fatalf("stale save: %v, want ErrFenced", err)
	}
	// two instances that both found no checkpoint: only one may create it
	a, _ := Load(ctx, st, "q")
	b, _ := Load(ctx, st, "q")
	if err := a.Save(ctx, st, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := b.Save(ctx, st, time.Now()); !errors.Is(err, ErrFenced) {
		t.Fatalf("second creator: %v, want ErrFenced", err)
	}
	got, _ := Load(ctx, st, "p")
	if got.Offset != 20 {
		t.Errorf("offset %d after the fenced write, want 20", got.Offset)
	}
}

// TestRecoverDeletesFilesPastTheCheckpoint: files whose intents start
// after the checkpoint are deleted (their records are read again), files
// at or before it are kept, and all intents are cleared.
func TestRecoverDeletesFilesPastTheCheckpoint(t *testing.T) {
	st, _ := store.NewLocal(t.TempDir())
	ctx := context.Background()
	files := map[string]int64{"T/schema_version=1/dt=x/part-p-00000000000000000005.parquet": 5,
		"T/schema_version=1/dt=x/part-p-00000000000000000011.parquet": 11,
		"U/schema_version=2/dt=x/part-p-00000000000000000012.parquet": 12}
	for k, first := range files {
		if _, err := WriteIntent(ctx, st, "p", first, []string{k}, ""); err != nil {
			t.Fatal(err)
		}
		st.Put(ctx, k, []byte("data"))
	}
	// an intent whose upload never happened
	WriteIntent(ctx, st, "p", 13, []string{"T/schema_version=1/dt=x/part-p-00000000000000000013.parquet"}, "")
	n, err := Recover(ctx, st, Checkpoint{Partition: "p", Offset: 10})
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("deleted %d files, want 3 (two uploaded, one never uploaded)", n)
	}
	keys, _ := st.List(ctx, "")
	if strings.Join(keys, ",") != "T/schema_version=1/dt=x/part-p-00000000000000000005.parquet" {
		t.Errorf("left: %v", keys)
	}
}

func TestCorruptCheckpointSaysWhatToDo(t *testing.T) {
	st, _ := store.NewLocal(t.TempDir())
	st.Put(context.Background(), Key("p"), []byte("{not json"))
	_, err := Load(context.Background(), st, "p")
	if err == nil || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "exporter checkpoint rebuild --partition p") {
		t.Errorf("corrupt checkpoint: %v", err)
	}
}

// FuzzCheckpointDecode: Decode never panics, and whatever it accepts
// encodes and decodes back to the same checkpoint.
func FuzzCheckpointDecode(f *testing.F) {
	f.Add(Encode(Checkpoint{Partition: "t-0", Offset: 5, Catalog: []byte(`{"tables":[]}`), WrittenAt: time.Unix(5, 0).UTC()}))
	f.Add([]byte(`{"version":2,"partition":"x","offset":-1}`))
	f.Add(Encode(Checkpoint{Partition: "f", Offset: 9, WrittenVersions: []VersionMark{{Table: "S.H", Version: 2, OpenedAtPos: "d1"}}}))
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Decode(data)
		if err != nil {
			return
		}
		again, err := Decode(Encode(c))
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if again.Partition != c.Partition || again.Offset != c.Offset || !again.WrittenAt.Equal(c.WrittenAt) || !bytes.Equal(compact(again.Catalog), compact(c.Catalog)) ||
			!slices.Equal(again.WrittenVersions, c.WrittenVersions) {
			t.Fatalf("round trip changed %+v into %+v", c, again)
		}
	})
}

// compact renders JSON canonically (decoded and encoded again), so that
// two spellings of one value compare equal.
func compact(b []byte) []byte {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return b
	}
	out, _ := json.Marshal(v)
	return out
}

// TestRecoverDeletesEveryFileOfABatchIntent: one intent for files flushed
// together; past the checkpoint, all of them go, and files covered by the
// checkpoint stay.
func TestRecoverDeletesEveryFileOfABatchIntent(t *testing.T) {
	st, _ := store.NewLocal(t.TempDir())
	ctx := context.Background()
	kept := "T/schema_version=1/dt=x/part-p-00000000000000000003.parquet"
	batch := []string{"T/schema_version=1/dt=x/part-p-00000000000000000021.parquet",
		"U/schema_version=1/dt=x/part-p-00000000000000000022.parquet",
		"V/schema_version=1/dt=x/part-p-00000000000000000025.parquet"}
	if _, err := WriteIntent(ctx, st, "p", 3, []string{kept}, ""); err != nil {
		t.Fatal(err)
	}
	st.Put(ctx, kept, []byte("data"))
	if _, err := WriteIntent(ctx, st, "p", 21, batch, ""); err != nil {
		t.Fatal(err)
	}
	for _, k := range batch[:2] { // the third upload never happened
		st.Put(ctx, k, []byte("data"))
	}
	// The release is told what is deleted, before it is; when it fails,
	// nothing is.
	rec, err := StartRecovery(ctx, st, Checkpoint{Partition: "p", Offset: 20})
	if err != nil {
		t.Fatal(err)
	}
	refuse := func(context.Context, []string) error { return errors.New("catalog down") }
	if n, err := rec.DeleteUncovered(ctx, refuse); err == nil || n != 0 {
		t.Fatalf("with a failing release: deleted %d, %v; want nothing and the error", n, err)
	}
	if _, err := st.Get(ctx, batch[0]); err != nil {
		t.Fatalf("a failing release let %s be deleted: %v", batch[0], err)
	}
	var released []string
	n, err := rec.DeleteUncovered(ctx, func(_ context.Context, files []string) error {
		released = files
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(released, ",") != strings.Join(batch, ",") {
		t.Errorf("released %v, want the batch %v", released, batch)
	}
	if n != 3 {
		t.Errorf("deleted %d files, want the batch's 3", n)
	}
	keys, _ := st.List(ctx, "")
	if strings.Join(keys, ",") != kept {
		t.Errorf("left: %v", keys)
	}
	if _, err := WriteIntent(ctx, st, "p", 30, nil, ""); err == nil {
		t.Error("an intent for no files was written")
	}
}

// TestClaimFencesThePreviousOwnerAndRecoverJudgesByIt: a new run claims
// the partition before it recovers, so the run that owned it fails its
// next checkpoint. Recovery keeps what the checkpoint's own run committed
// (its intents at or below the offset, not settled before it stopped) and
// deletes everything else: that run's files past the offset, and files of
// any other run, whatever their offsets, which no checkpoint covers.
func TestClaimFencesThePreviousOwnerAndRecoverJudgesByIt(t *testing.T) {
	st, _ := store.NewLocal(t.TempDir())
	ctx := context.Background()
	old := claimedBy(t, st, "p", "runA", 20)
	committed, past, stale := dataFile(st, "a-committed"), dataFile(st, "a-past"), dataFile(st, "z-stale")
	WriteIntent(ctx, st, "p", 11, []string{committed}, "runA")
	WriteIntent(ctx, st, "p", 21, []string{past}, "runA")
	WriteIntent(ctx, st, "p", 5, []string{stale}, "runZ") // a fenced run's upload, below the offset

	h, err := Load(ctx, st, "p")
	if err != nil {
		t.Fatal(err)
	}
	loaded := h.Checkpoint
	if err := h.Claim(ctx, st, "runB", time.Unix(2, 0)); err != nil {
		t.Fatal(err)
	}
	old.Offset = 30
	if err := old.Save(ctx, st, time.Unix(3, 0)); !errors.Is(err, ErrFenced) {
		t.Errorf("the previous owner saved after the claim: %v", err)
	}
	n, err := Recover(ctx, st, loaded)
	if err != nil || n != 2 {
		t.Fatalf("recover: %d files deleted, %v; want 2", n, err)
	}
	for k, want := range map[string]bool{committed: true, past: false, stale: false} {
		if _, err := st.Get(ctx, k); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", k, err == nil, want)
		}
	}
	if left, _ := st.List(ctx, intentPrefix("p")); len(left) != 0 {
		t.Errorf("intents left: %v", left)
	}
	if again, _ := Load(ctx, st, "p"); again.Owner != "runB" || again.Offset != 20 {
		t.Errorf("after the claim: owner %q offset %d", again.Owner, again.Offset)
	}
	// Two runs starting on a partition with no checkpoint: one claims it.
	a, _ := Load(ctx, st, "q")
	b, _ := Load(ctx, st, "q")
	if err := a.Claim(ctx, st, "runA", time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	if err := b.Claim(ctx, st, "runB", time.Unix(0, 0)); !errors.Is(err, ErrFenced) {
		t.Errorf("a second claim of a new partition: %v, want ErrFenced", err)
	}
}

// TestClaimAfterSettlingKeepsCommittedFiles: the intents a checkpoint
// covers are settled before the claim, so a run that claims and then
// stops before its deletions (a failed request, a signal) leaves nothing
// committed for the next run to judge by the wrong owner.
func TestClaimAfterSettlingKeepsCommittedFiles(t *testing.T) {
	st, _ := store.NewLocal(t.TempDir())
	ctx := context.Background()
	committed := dataFile(st, "a")
	WriteIntent(ctx, st, "p", 11, []string{committed}, "runA")
	claimedBy(t, st, "p", "runA", 20) // then stopped before settling
	b, _ := Load(ctx, st, "p")
	if _, err := StartRecovery(ctx, st, b.Checkpoint); err != nil {
		t.Fatal(err)
	}
	if err := b.Claim(ctx, st, "runB", time.Unix(2, 0)); err != nil {
		t.Fatal(err)
	}
	// runB stops here, before DeleteUncovered
	c, _ := Load(ctx, st, "p")
	if _, err := Recover(ctx, st, c.Checkpoint); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Get(ctx, committed); err != nil {
		t.Errorf("a committed file was deleted: %v", err)
	}
}

// TestIntentWrittenBeforeTheClaimIsDeleted: the previous owner may still
// write an intent and its file between the new run's first listing and
// its claim; DeleteUncovered lists again and deletes that file too.
func TestIntentWrittenBeforeTheClaimIsDeleted(t *testing.T) {
	st, _ := store.NewLocal(t.TempDir())
	ctx := context.Background()
	claimedBy(t, st, "p", "runA", -1)
	b, _ := Load(ctx, st, "p")
	rec, err := StartRecovery(ctx, st, b.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	late := dataFile(st, "late")
	WriteIntent(ctx, st, "p", 0, []string{late}, "runA")
	if err := b.Claim(ctx, st, "runB", time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	var released []string
	if n, err := rec.DeleteUncovered(ctx, func(_ context.Context, files []string) error {
		released = files
		return nil
	}); err != nil || n != 1 {
		t.Fatalf("deleted %d, %v; want the late file", n, err)
	}
	if len(released) != 1 || released[0] != late {
		t.Errorf("released %v before the deletion, want the late file %s (one listing for both)", released, late)
	}
	if _, err := st.Get(ctx, late); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("the late file is still there: %v", err)
	}
}

// claimedBy loads partition's checkpoint and claims it for run, then
// saves offset when it is not -1.
func claimedBy(t *testing.T, st Store, partition, run string, offset int64) *Handle {
	t.Helper()
	ctx := context.Background()
	h, err := Load(ctx, st, partition)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Claim(ctx, st, run, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	if offset != -1 {
		h.Offset = offset
		if err := h.Save(ctx, st, time.Unix(1, 0)); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// dataFile puts a data file of one byte and returns its key.
func dataFile(st Store, name string) string {
	k := "T/schema_version=1/dt=x/" + name + ".parquet"
	st.Put(context.Background(), k, []byte("x"))
	return k
}

// TestListAllIntents: one listing finds every partition's pending
// intents, each with its files, and leaves out what is not an intent.
func TestListAllIntents(t *testing.T) {
	ctx := context.Background()
	st, _ := store.NewLocal(t.TempDir())
	want := map[string]string{} // file → partition
	for _, w := range []struct {
		partition string
		first     int64
		files     []string
	}{
		{"orders-0", 5, []string{"T/a.parquet"}},
		{"orders-0", 9, []string{"T/b.parquet", "T/c.parquet"}},
		{"orders-1", 2, []string{"U/d.parquet"}},
	} {
		if _, err := WriteIntent(ctx, st, w.partition, w.first, w.files, ""); err != nil {
			t.Fatal(err)
		}
		for _, f := range w.files {
			want[f] = w.partition
		}
	}
	if err := st.Put(ctx, "_checkpoints/intents/orders-1/notes.txt", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, "_checkpoints/intents/stray.json", []byte("x")); err != nil {
		t.Fatal(err)
	}
	all, err := ListAllIntents(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, in := range all {
		for _, f := range in.Files {
			got[f] = in.Key
		}
	}
	if len(all) != 3 || len(got) != len(want) {
		t.Fatalf("%d intents naming %v, want 3 naming %v", len(all), got, want)
	}
	for f, p := range want {
		if !strings.Contains(got[f], "/"+p+"/") {
			t.Errorf("%s: named by %q, want an intent of %s", f, got[f], p)
		}
	}
}

// racingStore runs then once, right after the next read or conditional
// write of a checkpoint: another instance acting in the window between
// that request and whatever the caller does next.
type racingStore struct {
	*store.Local
	then func()
}

func (s *racingStore) race(key string) {
	if f := s.then; f != nil && strings.HasPrefix(key, prefix+"partitions/") {
		s.then = nil
		f()
	}
}

func (s *racingStore) Get(ctx context.Context, key string) ([]byte, error) {
	defer s.race(key)
	return s.Local.Get(ctx, key)
}

func (s *racingStore) GetWithETag(ctx context.Context, key string) ([]byte, string, error) {
	defer s.race(key)
	return s.Local.GetWithETag(ctx, key)
}

func (s *racingStore) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	defer s.race(key)
	return s.Local.PutIfMatch(ctx, key, data, etag)
}

// TestClaimOnACheckpointWrittenAfterItsReadIsFenced: the owner commits
// right after a new instance read the checkpoint; the new instance's
// claim must be refused, not replace the newer checkpoint with the one
// it read (the records between them would be exported twice).
func TestClaimOnACheckpointWrittenAfterItsReadIsFenced(t *testing.T) {
	ctx := context.Background()
	local, _ := store.NewLocal(t.TempDir())
	st := &racingStore{Local: local}
	a := claimedBy(t, st, "p", "runA", 99)
	st.then = func() {
		a.Offset = 199
		if err := a.Save(ctx, local, time.Unix(2, 0)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := Load(ctx, st, "p")
	if err != nil {
		t.Fatal(err)
	}
	if b.Offset != 99 {
		t.Fatalf("B read offset %d, want 99 (the race ran too early)", b.Offset)
	}
	if err := b.Claim(ctx, st, "runB", time.Unix(3, 0)); !errors.Is(err, ErrFenced) {
		t.Errorf("B's claim on the checkpoint it read before A's commit: %v, want ErrFenced", err)
	}
	if now, _ := Load(ctx, local, "p"); now.Offset != 199 || now.Owner != "runA" {
		t.Errorf("stored checkpoint: offset %d owner %s, want 199 by runA", now.Offset, now.Owner)
	}
}

// TestOwnerFencedByAClaimRightAfterItsSave: a new instance claims the
// partition just after the owner's save; the owner's next save must be
// fenced (it would otherwise commit files the new owner's recovery
// deleted).
func TestOwnerFencedByAClaimRightAfterItsSave(t *testing.T) {
	ctx := context.Background()
	local, _ := store.NewLocal(t.TempDir())
	st := &racingStore{Local: local}
	a := claimedBy(t, st, "p", "runA", 50)
	st.then = func() { claimedBy(t, local, "p", "runB", -1) }
	a.Offset = 99
	if err := a.Save(ctx, st, time.Unix(2, 0)); err != nil {
		t.Fatal(err)
	}
	a.Offset = 199
	if err := a.Save(ctx, st, time.Unix(3, 0)); !errors.Is(err, ErrFenced) {
		t.Errorf("A's save after B's claim: %v, want ErrFenced", err)
	}
	if err := a.Owned(ctx, st); !errors.Is(err, ErrFenced) {
		t.Errorf("A's ownership check after B's claim: %v, want ErrFenced", err)
	}
}
