package commit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/checkpoint"
	"github.com/lakehouse-exporter/lakehouse-exporter/commit"
	"github.com/lakehouse-exporter/lakehouse-exporter/store"
)

// srcFile is a file a run writes: the records first..last of partition
// "p", a data file of table T or (dead) the dead letters of them.
type srcFile struct {
	first, last int64
	dead        bool
}

// rounds is the input, as a run cuts it: two commit rounds of partition
// "p", offsets 0 to 9, the second with a dead-letter file.
var rounds = [][]srcFile{
	{{first: 0, last: 2}, {first: 3, last: 4}},
	{{first: 5, last: 6}, {first: 7, last: 8}, {first: 9, last: 9, dead: true}},
}

const lastOffset = 9

// source stands for the source's acknowledged position.
type source struct{ acked int64 }

// recorder is a RecoveringPublisher that checks its call points: a round
// is published only once all its files are in storage and before its
// checkpoint; recovery is told the round the checkpoint names.
type recorder struct {
	t         *testing.T
	st        commit.Store
	published []string
	recovered []string
}

func (p *recorder) Publish(ctx context.Context, r commit.Round) error {
	for _, f := range r.Files {
		if _, err := p.st.Get(ctx, f.Key); err != nil {
			p.t.Errorf("round %s published before its file %s is in storage: %v", r.ID, f.Key, err)
		}
	}
	cp, err := checkpoint.Load(ctx, p.st, "p")
	if err != nil {
		p.t.Fatal(err)
	}
	if cp.Offset >= r.Offsets["p"] {
		p.t.Errorf("round %s published after its checkpoint (offset %d)", r.ID, cp.Offset)
	}
	p.published = append(p.published, r.ID)
	return nil
}

func (p *recorder) Recover(ctx context.Context, files []string) error {
	for _, f := range files {
		if _, err := p.st.Get(ctx, f); err != nil && !errors.Is(err, store.ErrNotExist) {
			p.t.Errorf("recovery released %s: %v", f, err)
		}
	}
	p.recovered = append(p.recovered, files...)
	return nil
}

// exportRun is one run of a process over the input: it takes "p", skips
// what is durable, and for each round writes the files' intents, uploads
// them and commits. It stops at the first error, as a killed process
// does, and returns it.
func exportRun(t *testing.T, st commit.Store, src *source, pub commit.Publisher) error {
	t.Helper()
	ctx := context.Background()
	c := commit.New(commit.Config{Store: st, Publisher: pub, Ack: func(ctx context.Context, offsets map[string]int64) error {
		if cs, ok := st.(*crashStore); ok {
			if err := cs.write(); err != nil {
				return err
			}
		}
		// Never acknowledged past what a checkpoint makes durable.
		cp, err := checkpoint.Load(ctx, st, "p")
		if err != nil {
			return err
		}
		if offsets["p"] > cp.Offset {
			t.Errorf("acknowledged offset %d past the checkpoint's %d", offsets["p"], cp.Offset)
		}
		src.acked = offsets["p"]
		return nil
	}})
	cp, err := c.Take(ctx, "p", fixedNow)
	if err != nil {
		return err
	}
	p := c.Adopt("p", cp)
	for _, round := range rounds {
		var data, dead []string
		first := int64(-1)
		for _, f := range round {
			if p.Durable(f.last) {
				if !p.Durable(f.first) {
					t.Fatalf("file %d-%d is half durable: a checkpoint at %d inside a file", f.first, f.last, p.Offset())
				}
				continue // replayed: skipped
			}
			p.Read(f.last)
			key := fileKey(c.Run(), f)
			if f.dead {
				if err := c.WriteIntent(ctx, "p", f.first, []string{key}); err != nil {
					return err
				}
				dead = append(dead, key)
				continue
			}
			if first < 0 {
				first = f.first
			}
			data = append(data, key)
		}
		if len(data) > 0 {
			if err := c.WriteIntent(ctx, "p", first, data); err != nil {
				return err
			}
		}
		for _, f := range round {
			if p.Durable(f.last) {
				continue
			}
			key := fileKey(c.Run(), f)
			if err := st.Put(ctx, key, []byte(fmt.Sprintf("%d-%d", f.first, f.last))); err != nil {
				return err
			}
			table := "T"
			if f.dead {
				table = ""
			}
			c.Uploaded(commit.File{Partition: "p", Table: table, Key: key, FirstOffset: f.first, LastOffset: f.last})
		}
		if _, err := c.Commit(ctx); err != nil {
			return err
		}
	}
	return nil
}

func fileKey(run string, f srcFile) string {
	if f.dead {
		return fmt.Sprintf("_dlq/part-p-%020d-%s.jsonl", f.first, run)
	}
	return fmt.Sprintf("T/part-p-%020d-%s.parquet", f.first, run)
}

// checkExactlyOnce asserts the state a finished run leaves: every record
// in exactly one file, the checkpoint at the end, no intent left.
func checkExactlyOnce(t *testing.T, st commit.Store, src *source) {
	t.Helper()
	ctx := context.Background()
	keys, err := st.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	covered := map[int64]int{}
	for _, k := range keys {
		if strings.HasPrefix(k, "_checkpoints/") {
			if strings.HasPrefix(k, "_checkpoints/intents/") {
				t.Errorf("intent %s left after a finished run", k)
			}
			continue
		}
		data, err := st.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		var first, last int64
		if _, err := fmt.Sscanf(string(data), "%d-%d", &first, &last); err != nil {
			t.Fatalf("file %s: %q: %v", k, data, err)
		}
		for o := first; o <= last; o++ {
			covered[o]++
		}
	}
	for o := int64(0); o <= lastOffset; o++ {
		if covered[o] != 1 {
			t.Errorf("offset %d is in %d files, want 1 (objects: %v)", o, covered[o], keys)
		}
	}
	cp, err := checkpoint.Load(ctx, st, "p")
	if err != nil {
		t.Fatal(err)
	}
	// A crash between the checkpoint and the acknowledgement leaves the
	// source behind until a later round: the next run resumes from the
	// checkpoint, never from the source's position, so that is safe;
	// ahead of the checkpoint it never is (exportRun's Ack checks).
	if cp.Offset != lastOffset || src.acked > cp.Offset {
		t.Errorf("checkpoint at %d, acknowledged %d; want the checkpoint at %d and the acknowledgement at most there", cp.Offset, src.acked, lastOffset)
	}
}

// TestEveryCrashPointIsRecoveredExactlyOnce kills a run before each of
// its writes in turn (claim, intents, uploads, the checkpoint, settling,
// the acknowledgement), then kills the recovering run before each of its
// own writes too, and lets a third run finish: every record must be in
// storage exactly once, what a checkpoint covers kept (adopted), what it
// does not deleted or forgotten, replay skipping what is durable.
func TestEveryCrashPointIsRecoveredExactlyOnce(t *testing.T) {
	// The local store runs the recovering run to its end: the pairs of
	// crash points are the in-memory store's, whose writes are cheap.
	nested := map[string]bool{"memory": true}
	stores := map[string]func(t *testing.T) commit.Store{
		"memory": func(*testing.T) commit.Store { return newMemStore() },
		"local": func(t *testing.T) commit.Store {
			st, err := store.NewLocal(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return st
		},
	}
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) {
			// A run without a crash counts the writes to crash before.
			clean := &crashStore{Store: newStore(t), after: -1}
			if err := exportRun(t, clean, &source{acked: -1}, nil); err != nil {
				t.Fatal(err)
			}
			total := clean.writes
			if total < 15 {
				t.Fatalf("a whole run made %d writes; the input should need more", total)
			}
			for first := 0; first < total; first++ {
				for second := 0; second <= total; second++ {
					if !nested[name] && second < total {
						continue
					}
					base := newStore(t)
					src := &source{acked: -1}
					pub := &recorder{t: t, st: base}
					err := exportRun(t, &crashStore{Store: base, after: first}, src, pub)
					if !errors.Is(err, errCrashed) {
						t.Fatalf("crash before write %d: the run ended with %v", first, err)
					}
					if second < total {
						// The recovering run dies too; it may finish first.
						if err := exportRun(t, &crashStore{Store: base, after: second}, src, pub); err != nil && !errors.Is(err, errCrashed) {
							t.Fatalf("crash before write %d, then %d: %v", first, second, err)
						}
					}
					if err := exportRun(t, base, src, pub); err != nil {
						t.Fatalf("crash before write %d, then %d: the last run: %v", first, second, err)
					}
					checkExactlyOnce(t, base, src)
					if t.Failed() {
						t.Fatalf("crash before write %d, then before write %d of the recovery", first, second)
					}
				}
			}
		})
	}
}

var fixedNow = time.Date(2026, 7, 13, 4, 0, 0, 0, time.UTC)

// TestPublisherSeesEachCompleteRoundOnce: each round that advances the
// partition is published once, after its uploads and before its
// checkpoint (recorder checks both), and after clean runs recovery has
// nothing to release.
func TestPublisherSeesEachCompleteRoundOnce(t *testing.T) {
	st := newMemStore()
	pub := &recorder{t: t, st: st}
	src := &source{acked: -1}
	if err := exportRun(t, st, src, pub); err != nil {
		t.Fatal(err)
	}
	if len(pub.published) != len(rounds) || pub.published[0] == pub.published[1] {
		t.Fatalf("published rounds %v, want %d distinct", pub.published, len(rounds))
	}
	if err := exportRun(t, st, src, pub); err != nil {
		t.Fatal(err)
	}
	if len(pub.published) != len(rounds) {
		t.Errorf("a rerun with nothing new published %v", pub.published[len(rounds):])
	}
	if len(pub.recovered) != 0 {
		t.Errorf("recovery released %q after clean runs, want nothing", pub.recovered)
	}
	checkExactlyOnce(t, st, src)
}

// failingPublisher refuses every round.
type failingPublisher struct{}

func (failingPublisher) Publish(context.Context, commit.Round) error {
	return errors.New("catalog down")
}

// TestFailedPublishIsNotCheckpointed: a round the publisher refuses is
// neither checkpointed nor acknowledged, and the next run writes it.
func TestFailedPublishIsNotCheckpointed(t *testing.T) {
	st := newMemStore()
	src := &source{acked: -1}
	err := exportRun(t, st, src, failingPublisher{})
	if err == nil || !strings.Contains(err.Error(), "catalog down") {
		t.Fatalf("run with a failing publisher: %v", err)
	}
	cp, lerr := checkpoint.Load(context.Background(), st, "p")
	if lerr != nil {
		t.Fatal(lerr)
	}
	if cp.Offset != -1 || src.acked != -1 {
		t.Errorf("after a refused round: checkpoint at %d, acknowledged %d; want neither", cp.Offset, src.acked)
	}
	if err := exportRun(t, st, src, commit.NopPublisher{}); err != nil {
		t.Fatal(err)
	}
	checkExactlyOnce(t, st, src)
}

// TestUnuploadedFileIsNotCheckpointed: a file whose intent was written
// but whose upload was never marked keeps the round from its checkpoint
// (what the pipeline relies on when a shutdown deadline ends uploads).
func TestUnuploadedFileIsNotCheckpointed(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	acked := false
	c := commit.New(commit.Config{Store: st, Ack: func(context.Context, map[string]int64) error { acked = true; return nil }})
	cp, err := c.Take(ctx, "p", fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	p := c.Adopt("p", cp)
	p.Read(4)
	if err := c.WriteIntent(ctx, "p", 0, []string{"T/a.parquet", "T/b.parquet"}); err != nil {
		t.Fatal(err)
	}
	st.Put(ctx, "T/a.parquet", []byte("0-2"))
	c.Uploaded(commit.File{Partition: "p", Table: "T", Key: "T/a.parquet", FirstOffset: 0, LastOffset: 2})
	if n, err := c.Commit(ctx); !errors.Is(err, commit.ErrIncomplete) || n != 0 {
		t.Fatalf("commit with T/b.parquet not uploaded: %d partitions, %v; want none, ErrIncomplete", n, err)
	}
	got, err := checkpoint.Load(ctx, st, "p")
	if err != nil {
		t.Fatal(err)
	}
	if got.Offset != -1 || acked || p.Durable(0) {
		t.Errorf("after an incomplete round: checkpoint at %d, acknowledged %v, durable(0) %v; want nothing", got.Offset, acked, p.Durable(0))
	}
}

// TestFencedRunWithdrawsItsRound: a run whose partition another instance
// claims mid-round fails its commit with ErrFenced, deletes the files it
// uploaded since, does not acknowledge, and leaves the new owner's
// checkpoint alone. A claim before the round is published keeps the
// round from the publisher altogether; a claim while it is published
// (after the check) is caught at the checkpoint, and the publisher takes
// the files back before they are deleted.
func TestFencedRunWithdrawsItsRound(t *testing.T) {
	for _, during := range []bool{false, true} {
		t.Run(fmt.Sprintf("claimed-while-publishing=%v", during), func(t *testing.T) {
			testFencedRunWithdrawsItsRound(t, during)
		})
	}
}

func testFencedRunWithdrawsItsRound(t *testing.T, duringPublish bool) {
	ctx := context.Background()
	st := newMemStore()
	acked := map[string]int64{}
	ack := func(name string) func(context.Context, map[string]int64) error {
		return func(_ context.Context, o map[string]int64) error { acked[name] = o["p"]; return nil }
	}
	pub := &withdrawRecorder{t: t, st: st}
	a := commit.New(commit.Config{Store: st, Run: "runA", Ack: ack("a"), Publisher: pub})
	cp, err := a.Take(ctx, "p", fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	pa := a.Adopt("p", cp)
	pa.Read(4)
	if err := a.WriteIntent(ctx, "p", 0, []string{"T/a.parquet"}); err != nil {
		t.Fatal(err)
	}

	b := commit.New(commit.Config{Store: st, Run: "runB", Ack: ack("b")})
	claim := func() {
		cpb, err := b.Take(ctx, "p", fixedNow)
		if err != nil {
			t.Fatal(err)
		}
		b.Adopt("p", cpb)
	}
	if duringPublish {
		pub.during = claim
	} else {
		claim()
	}

	// A's upload lands after B's recovery, which could not see it.
	st.Put(ctx, "T/a.parquet", []byte("0-4"))
	a.Uploaded(commit.File{Partition: "p", Table: "T", Key: "T/a.parquet", FirstOffset: 0, LastOffset: 4})
	if _, err := a.Commit(ctx); !errors.Is(err, checkpoint.ErrFenced) {
		t.Fatalf("fenced commit: %v, want ErrFenced", err)
	}
	if _, err := st.Get(ctx, "T/a.parquet"); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("the fenced run's file is still there (%v)", err)
	}
	wantPublished, wantWithdrawn := "", ""
	if duringPublish {
		wantPublished, wantWithdrawn = "T/a.parquet", "T/a.parquet"
	}
	if got := strings.Join(pub.published, ","); got != wantPublished {
		t.Errorf("the publisher was given %q, want %q", got, wantPublished)
	}
	if got := strings.Join(pub.withdrawn, ","); got != wantWithdrawn {
		t.Errorf("the publisher took back %q, want %q", got, wantWithdrawn)
	}
	if keys, _ := st.List(ctx, "_checkpoints/intents/"); len(keys) != 0 {
		t.Errorf("intents left after the withdrawal: %v", keys)
	}
	if _, ok := acked["a"]; ok {
		t.Errorf("the fenced run acknowledged %d", acked["a"])
	}
	got, err := checkpoint.Load(ctx, st, "p")
	if err != nil {
		t.Fatal(err)
	}
	if got.Owner != "runB" || got.Offset != -1 {
		t.Errorf("checkpoint after the fenced commit: owner %q offset %d, want runB's claim", got.Owner, got.Offset)
	}
}

// withdrawRecorder records the files it is given and those it is asked
// to take back, checking that they are still in storage then; during,
// when set, runs inside Publish (another instance's claim).
type withdrawRecorder struct {
	t         *testing.T
	st        commit.Store
	during    func()
	published []string
	withdrawn []string
}

func (p *withdrawRecorder) Publish(_ context.Context, r commit.Round) error {
	for _, f := range r.Files {
		p.published = append(p.published, f.Key)
	}
	if p.during != nil {
		p.during()
	}
	return nil
}

func (p *withdrawRecorder) Withdraw(ctx context.Context, files []commit.File) error {
	for _, f := range files {
		// A claim during the publish has deleted the file already: the
		// new owner's recovery saw its intent.
		if _, err := p.st.Get(ctx, f.Key); err != nil && p.during == nil {
			p.t.Errorf("%s withdrawn from the publisher after it was deleted: %v", f.Key, err)
		}
		p.withdrawn = append(p.withdrawn, f.Key)
	}
	return nil
}
