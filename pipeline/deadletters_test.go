package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/checkpoint"
	"github.com/lakehouse-exporter/lakehouse-exporter/pipeline"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
	"github.com/lakehouse-exporter/lakehouse-exporter/store"
)

// beforePut runs hook once, before the first write of a key under prefix
// goes to the store.
type beforePut struct {
	pipeline.Store
	prefix string
	once   sync.Once
	hook   func()
}

func (s *beforePut) Put(ctx context.Context, key string, data []byte) error {
	if strings.HasPrefix(key, s.prefix) {
		s.once.Do(s.hook)
	}
	return s.Store.Put(ctx, key, data)
}

// checkpointFails refuses every checkpoint write after the claim, as a
// crash between the uploads and the checkpoint leaves storage: the run's
// files and dead letters are there, its checkpoint is not.
type checkpointFails struct{ pipeline.Store }

func (s checkpointFails) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	if strings.HasPrefix(key, "_checkpoints/partitions/") {
		return "", errors.New("injected: the run dies before its checkpoint")
	}
	return s.Store.PutIfMatch(ctx, key, data, etag)
}

func dlqOffsets(t *testing.T, dir string) string {
	t.Helper()
	var out []int64
	for _, l := range readDLQ(t, dir) {
		out = append(out, l.Offset)
	}
	return fmt.Sprint(out)
}

// checkSettled checks that the lake in dir holds the dead letters of
// input at the lines dlq (each once, in files dlqFiles named by the
// input's partition, their first offset and their run) and the rows of
// S.T with the IDs ids, and that no intent is left unsettled.
func checkSettled(t *testing.T, dir, input, dlq string, dlqFiles int, ids string) {
	t.Helper()
	dlqName := regexp.MustCompile(`^_dlq/dt=\d{4}-\d\d-\d\d/` + regexp.QuoteMeta(source.PartitionName(input)) + `-\d{20}-[0-9a-f]{8}\.jsonl$`)
	if got := dlqOffsets(t, dir); got != dlq {
		t.Errorf("dead letters at lines %s, want %s, each once", got, dlq)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "_dlq", "dt=*", "*.jsonl"))
	if len(files) != dlqFiles {
		t.Errorf("dead-letter files %v, want %d", files, dlqFiles)
	}
	for _, f := range files {
		if rel, _ := filepath.Rel(dir, f); !dlqName.MatchString(filepath.ToSlash(rel)) {
			t.Errorf("dead-letter file %s is not named by partition, first offset and run", rel)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "_checkpoints", "intents", "*", "*")); len(left) != 0 {
		t.Errorf("intents left: %v", left)
	}
	rows := query(t, openDuck(t), `SELECT string_agg(ID::BIGINT::VARCHAR, ',' ORDER BY ID) FROM `+lakeGlob(dir, "S.T"))
	if got := rowStrings(rows)[0]; got != ids {
		t.Errorf("IDs: %s, want %s", got, ids)
	}
}

// rejectsInput writes an input with rejects at lines 3 and 4 among good
// records 1 and 3, and opens an empty lake.
func rejectsInput(t *testing.T) (input, dir string, lake *store.Local) {
	t.Helper()
	input = writeFile(t, t.TempDir(), "in.jsonl", strings.Join([]string{
		ordersMeta, dml("1", ""), "not json", dml("2", `,"N":"two"`), dml("3", ""),
	}, "\n")+"\n")
	dir = t.TempDir()
	lake, err := store.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	return input, dir, lake
}

// TestFencedRunWithdrawsItsDeadLetters: a second run claims the input
// while the first writes its dead letters, and, the file having grown
// meanwhile, rejects more records from the same first line on. The first
// run's dead-letter file, written after the second run's, neither
// replaces that one (which would lose line 6) nor stays beside it: fenced
// at its checkpoint, the first run deletes it with its data files. Every
// rejected record is in _dlq/ once, every row in the lake once.
func TestFencedRunWithdrawsItsDeadLetters(t *testing.T) {
	p, dir, local := rejectsInput(t)
	var second error
	hooked := &beforePut{Store: local, prefix: "_dlq/", hook: func() {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			second = err
			return
		}
		f.WriteString(`{"qual_table":` + "\n" + dml("4", "") + "\n")
		f.Close()
		_, second = export(t, dir, nil, p)
	}}
	_, err := export(t, dir, func(c *pipeline.Config) { c.Store = hooked }, p)
	if second != nil {
		t.Fatalf("second run: %v", second)
	}
	if !errors.Is(err, checkpoint.ErrFenced) {
		t.Fatalf("first run: %v, want it fenced", err)
	}
	checkSettled(t, dir, p, "[3 4 6]", 1, "1,3,4")
}

// TestDeadLettersOfACrashedRoundAreWrittenOnce: a run that dies after
// writing its dead letters but before its checkpoint leaves a dead-letter
// file that the next run's recovery deletes, so that the records it
// rejects again are in _dlq/ once, also when it names its file otherwise
// (here it runs the next day, so its file is in another dt= folder).
func TestDeadLettersOfACrashedRoundAreWrittenOnce(t *testing.T) {
	p, dir, local := rejectsInput(t)
	if _, err := export(t, dir, func(c *pipeline.Config) { c.Store = checkpointFails{local} }, p); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("first run: %v, want the injected checkpoint failure", err)
	}
	if got := dlqOffsets(t, dir); got != "[3 4]" {
		t.Fatalf("the crashed run left dead letters at lines %s, want [3 4]", got)
	}
	tomorrow := func() time.Time { return time.Now().Add(24 * time.Hour) }
	sum, err := export(t, dir, func(c *pipeline.Config) { c.Now = tomorrow }, p)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rejected != 2 {
		t.Errorf("rerun rejected %d records, want 2", sum.Rejected)
	}
	checkSettled(t, dir, p, "[3 4]", 1, "1,3")
}

// TestManyRejectsAreWrittenBeforeTheCommit: a stream of bad records must
// not hold their text in memory until the next commit. Past a sixteenth
// of the budget the dead letters are written ahead, under intents the
// checkpoint settles: several files, each rejected line in them once,
// the good rows all there, no intent left.
func TestManyRejectsAreWrittenBeforeTheCommit(t *testing.T) {
	const bad = 3000
	lines := []string{ordersMeta, dml("1", "")}
	var want []int64
	for i := range bad {
		lines = append(lines, fmt.Sprintf("not json %d %s", i, strings.Repeat("x", 80)))
		want = append(want, int64(len(lines)))
	}
	lines = append(lines, dml("2", ""))
	input := writeFile(t, t.TempDir(), "in.jsonl", strings.Join(lines, "\n")+"\n")
	dir := t.TempDir()
	const budget = 1 << 20 // dead letters written every 64 KiB
	if _, err := export(t, dir, func(c *pipeline.Config) { c.MaxBufferBytes = budget }, input); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "_dlq", "dt=*", "*.jsonl"))
	if len(files) < 4 {
		t.Errorf("%d dead-letter files for %d rejects of about 250 bytes: they were held until the commit", len(files), bad)
	}
	var got []int64
	for _, l := range readDLQ(t, dir) {
		got = append(got, l.Offset)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("%d dead letters, want the %d rejected lines once each", len(got), len(want))
	}
	checkSettled(t, dir, input, fmt.Sprint(want), len(files), "1,2")
}
