package pipeline_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/gen"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/kafkatest"
	"github.com/lakehouse-exporter/lakehouse-exporter/pipeline"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
	"github.com/lakehouse-exporter/lakehouse-exporter/store"
	"github.com/lakehouse-exporter/lakehouse-exporter/writer"
)

// kafkaStream generates a stream and produces it to a new topic.
func kafkaStream(t *testing.T, b kafkatest.Broker, records, partitions int) (kafkatest.Topic, gen.Stats) {
	t.Helper()
	tp := b.Topic(t, partitions)
	var lines [][]byte
	st, err := gen.Write(io.Discard, gen.Options{Records: records, Tables: 4, Seed: 11, DDLEvery: records / 3, Track: true, Lines: &lines})
	if err != nil {
		t.Fatal(err)
	}
	kafkatest.Produce(t, tp.Addrs, tp.Name, lines, kafkatest.TableKey)
	return tp, st
}

// runKafka runs the pipeline on a Kafka source until it ends (once) or ctx
// is cancelled.
func runKafka(ctx context.Context, t *testing.T, tp kafkatest.Topic, group string, once bool, st pipeline.Store, mutate func(*pipeline.Config)) (pipeline.Summary, error) {
	return runKafkaLogged(ctx, t, tp, group, once, st, mutate, nil)
}

func runKafkaLogged(ctx context.Context, t *testing.T, tp kafkatest.Topic, group string, once bool, st pipeline.Store, mutate func(*pipeline.Config), log *slog.Logger) (pipeline.Summary, error) {
	return runKafkaWith(ctx, t, source.KafkaConfig{Brokers: tp.Addrs, Topics: []string{tp.Name}, Group: tp.Group(group), Once: once,
		MaxWait: 100 * time.Millisecond, Logger: log}, st, mutate)
}

// runKafkaWith is runKafka with the source configured by the caller.
func runKafkaWith(ctx context.Context, t *testing.T, kc source.KafkaConfig, st pipeline.Store, mutate func(*pipeline.Config)) (pipeline.Summary, error) {
	log := kc.Logger
	src, err := source.NewKafka(kc)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dec, _ := cdc.NewGoldenGate(cdc.GoldenGateNames{})
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	cfg := pipeline.Config{Source: src, Store: st, Decoder: dec, MaxRejects: 0, DecodeWorkers: 2,
		NewDecoder: func() pipeline.Decoder { d, _ := cdc.NewGoldenGate(cdc.GoldenGateNames{}); return d },
		Schema:     arrowschema.Options{BeforeImage: true}, Writer: writer.Config{Allocator: mem, MaxRows: 700}, Logger: log}
	if mutate != nil {
		mutate(&cfg)
	}
	sum, err := pipeline.Run(ctx, cfg)
	mem.AssertSize(t, 0)
	return sum, err
}

// checkExactlyOnce reads the lake with DuckDB: every DML record of the
// stream is there exactly once, in its table, with its op and key.
func checkExactlyOnce(t *testing.T, dir string, st gen.Stats) {
	t.Helper()
	db := openDuck(t)
	var got int
	for _, table := range st.TableNames {
		rows := query(t, db, `SELECT pos, op_type, ID, count(*) OVER (PARTITION BY pos) FROM `+lakeGlob(dir, table))
		for _, r := range rows {
			pos, op := r[0].(string), r[1].(string)
			want, ok := st.Expected[pos]
			if !ok {
				t.Fatalf("%s: unexpected pos %s", table, pos)
			}
			if r[3].(int64) != 1 {
				t.Fatalf("pos %s appears %d times", pos, r[3])
			}
			if want.Table != table || want.Op != op || fmt.Sprint(r[2]) != strconv.FormatInt(want.ID, 10) {
				t.Fatalf("pos %s: got %s %s ID %v, want %+v", pos, table, op, r[2], want)
			}
			got++
		}
	}
	if got != st.DML {
		missing := map[string]int{}
		first := map[string]string{}
		for pos, e := range st.Expected {
			rows := query(t, db, `SELECT count(*) FROM `+lakeGlob(dir, e.Table)+` WHERE pos = '`+pos+`'`)
			if rows[0][0].(int64) == 0 {
				missing[e.Table]++
				if first[e.Table] == "" || len(pos) < len(first[e.Table]) || (len(pos) == len(first[e.Table]) && pos < first[e.Table]) {
					first[e.Table] = pos
				}
			}
		}
		t.Fatalf("lake holds %d DML rows, the stream has %d; missing per table %v, first missing %v", got, st.DML, missing, first)
	}
}

// TestKafkaOnceDrainsAndCommits: --once reads every partition up to the
// high watermark seen at start, writes it all and exits; a second --once
// with no new data reads and writes nothing.
func TestKafkaOnceDrainsAndCommits(t *testing.T) {
	kafkatest.Each(t, testKafkaOnceDrainsAndCommits)
}

func testKafkaOnceDrainsAndCommits(t *testing.T, b kafkatest.Broker) {
	tp, st := kafkaStream(t, b, 6000, 3)
	dir := t.TempDir()
	local, _ := store.NewLocal(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lags := &lagObserver{last: map[string]int64{}}
	sum, err := runKafka(ctx, t, tp, "g-once", true, local, func(c *pipeline.Config) { c.Observer = lags })
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rejected != 0 {
		t.Fatalf("rejected %d", sum.Rejected)
	}
	// drained to the watermark: every partition ends with no lag
	if len(lags.last) != 3 || lags.last[tp.Partition(0)] != 0 || lags.last[tp.Partition(1)] != 0 || lags.last[tp.Partition(2)] != 0 {
		t.Errorf("last lag per partition: %v", lags.last)
	}
	checkExactlyOnce(t, dir, st)
	files := len(dataFiles(t, dir))
	again, err := runKafka(ctx, t, tp, "g-once", true, local, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again.Records != 0 || again.Files != 0 || len(dataFiles(t, dir)) != files {
		t.Errorf("second --once read %d records and wrote %d files", again.Records, again.Files)
	}
}

// TestKafkaResumesFromTheSinkCheckpoint: a new consumer group (no Kafka
// offsets at all) still continues where the sink's checkpoint says,
// since the checkpoint, not the Kafka commit, is the truth.
func TestKafkaResumesFromTheSinkCheckpoint(t *testing.T) {
	kafkatest.Each(t, testKafkaResumesFromTheSinkCheckpoint)
}

func testKafkaResumesFromTheSinkCheckpoint(t *testing.T, b kafkatest.Broker) {
	tp, st := kafkaStream(t, b, 3000, 2)
	dir := t.TempDir()
	local, _ := store.NewLocal(dir)
	ctx := context.Background()
	if _, err := runKafka(ctx, t, tp, "g-a", true, local, nil); err != nil {
		t.Fatal(err)
	}
	sum, err := runKafka(ctx, t, tp, "g-b", true, local, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Files != 0 {
		t.Errorf("a new group rewrote %d files", sum.Files)
	}
	checkExactlyOnce(t, dir, st)
}

// TestConsumerGroupSplitsAndFailsOver: two instances in one group share
// the partitions; when one stops, the other takes its partitions over and
// the combined output holds every record exactly once.
func TestConsumerGroupSplitsAndFailsOver(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for consumer-group rebalances")
	}
	kafkatest.Each(t, testConsumerGroupSplitsAndFailsOver)
}

func testConsumerGroupSplitsAndFailsOver(t *testing.T, b kafkatest.Broker) {
	tp := b.Topic(t, 4)
	var all [][]byte
	st, _ := gen.Write(io.Discard, gen.Options{Records: 16000, Tables: 6, Seed: 5, Track: true, Lines: &all})
	half := len(all) / 2

	dir := t.TempDir()
	local, _ := store.NewLocal(dir)
	fast := func(c *pipeline.Config) { c.Writer.MaxAge = 300 * time.Millisecond }
	ctxA, stopA := context.WithCancel(context.Background())
	ctxB, stopB := context.WithCancel(context.Background())
	defer stopA()
	defer stopB()
	var wg sync.WaitGroup
	var sumA, sumB pipeline.Summary
	var errA, errB error
	logA, logB := &assignments{}, &assignments{}
	wg.Add(2)
	go func() {
		defer wg.Done()
		sumA, errA = runKafkaLogged(ctxA, t, tp, "g-pair", false, local, fast, debugLog(logA, "A"))
	}()
	go func() {
		defer wg.Done()
		sumB, errB = runKafkaLogged(ctxB, t, tp, "g-pair", false, local, fast, debugLog(logB, "B"))
	}()
	waitFor(t, 60*time.Second, "both instances to own partitions", func() bool {
		return len(logA.get()) > 0 && len(logB.get()) > 0 && len(logA.get())+len(logB.get()) == 4
	})
	kafkatest.Produce(t, tp.Addrs, tp.Name, all[:half], kafkatest.TableKey)
	time.Sleep(2 * time.Second)
	stopA() // A leaves; B gets A's partitions and what is produced next
	kafkatest.Produce(t, tp.Addrs, tp.Name, all[half:], kafkatest.TableKey)
	waitFor(t, 60*time.Second, "every row", func() bool { return countRows(t, dir) >= st.DML })
	stopB()
	wg.Wait()
	if errA != nil || errB != nil {
		t.Errorf("instance errors: %v / %v", errA, errB)
	}
	if sumA.Records == 0 || sumB.Records == 0 {
		t.Errorf("the partitions were not split: A read %d, B read %d", sumA.Records, sumB.Records)
	}
	if got := logB.get(); len(got) != 4 {
		t.Errorf("after A left, B owns %v, want all 4 partitions", got)
	}
	checkExactlyOnce(t, dir, st)
}

func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Errorf("timed out waiting for %s", what)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func countRows(t *testing.T, dir string) int {
	if len(dataFiles(t, dir)) == 0 {
		return 0
	}
	db := openDuck(t)
	rows := query(t, db, `SELECT count(*) FROM `+lakeGlob(dir, ""))
	return int(rows[0][0].(int64))
}

// debugLog logs to stderr as well when EXPORTER_TEST_DEBUG is set.
func debugLog(a *assignments, name string) *slog.Logger {
	if os.Getenv("EXPORTER_TEST_DEBUG") == "" {
		return slog.New(a)
	}
	return slog.New(tee{a, slog.NewTextHandler(os.Stderr, nil).WithAttrs([]slog.Attr{slog.String("instance", name)})})
}

// lagObserver keeps the last lag reported per partition.
type lagObserver struct {
	pipeline.NopObserver
	mu   sync.Mutex
	last map[string]int64
}

func (l *lagObserver) SourceLag(p string, lag int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last[p] = lag
}

// TestKafkaClaimWithoutProgressKeepsTheGroupStart: a partition's first
// claim writes a checkpoint of no progress; a run that finds only that
// checkpoint (here: the first run into this sink, after a claim) starts
// where the group's own offsets say, as with no checkpoint at all, not
// from the partition's beginning.
func TestKafkaClaimWithoutProgressKeepsTheGroupStart(t *testing.T) {
	kafkatest.Each(t, testKafkaClaimWithoutProgressKeepsTheGroupStart)
}

func testKafkaClaimWithoutProgressKeepsTheGroupStart(t *testing.T, b kafkatest.Broker) {
	tp, _ := kafkaStream(t, b, 2000, 2)
	ctx := context.Background()
	first, _ := store.NewLocal(t.TempDir())
	if _, err := runKafka(ctx, t, tp, "g-c", true, first, nil); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	other, _ := store.NewLocal(dir)
	for run := range 2 {
		sum, err := runKafka(ctx, t, tp, "g-c", true, other, nil)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Records != 0 || len(dataFiles(t, dir)) != 0 {
			t.Errorf("run %d into a new sink with the group at its end read %d records", run+1, sum.Records)
		}
	}
}

// slowCheckpoints delays every request on checkpoints and intents and
// records how many were in flight at once.
type slowCheckpoints struct {
	pipeline.Store
	inFlight, most atomic.Int64
}

func (s *slowCheckpoints) slow(key string) func() {
	if !strings.HasPrefix(key, "_checkpoints/") {
		return func() {}
	}
	n := s.inFlight.Add(1)
	for m := s.most.Load(); n > m && !s.most.CompareAndSwap(m, n); m = s.most.Load() {
	}
	time.Sleep(20 * time.Millisecond)
	return func() { s.inFlight.Add(-1) }
}

func (s *slowCheckpoints) Get(ctx context.Context, key string) ([]byte, error) {
	defer s.slow(key)()
	return s.Store.Get(ctx, key)
}

func (s *slowCheckpoints) GetWithETag(ctx context.Context, key string) ([]byte, string, error) {
	defer s.slow(key)()
	return s.Store.GetWithETag(ctx, key)
}

func (s *slowCheckpoints) PutIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	defer s.slow(key)()
	return s.Store.PutIfAbsent(ctx, key, data)
}

func (s *slowCheckpoints) List(ctx context.Context, prefix string) ([]string, error) {
	defer s.slow(prefix)()
	return s.Store.List(ctx, prefix)
}

// TestKafkaAssignmentTakesPartitionsInParallel: the claims and recoveries
// of an assignment's partitions run at once, not one after another.
func TestKafkaAssignmentTakesPartitionsInParallel(t *testing.T) {
	kafkatest.Each(t, testKafkaAssignmentTakesPartitionsInParallel)
}

func testKafkaAssignmentTakesPartitionsInParallel(t *testing.T, b kafkatest.Broker) {
	tp, st := kafkaStream(t, b, 1200, 6)
	dir := t.TempDir()
	local, _ := store.NewLocal(dir)
	slow := &slowCheckpoints{Store: local}
	if _, err := runKafka(context.Background(), t, tp, "g-par", true, slow, nil); err != nil {
		t.Fatal(err)
	}
	if slow.most.Load() < 2 {
		t.Errorf("at most %d checkpoint requests in flight at once over 6 partitions", slow.most.Load())
	}
	checkExactlyOnce(t, dir, st)
}

// TestKafkaManyTablesPackedExactlyOnce: 40 tables over 6 partitions keep
// more than 32 buffers open, so rows are packed (writer/stage.go) and
// unpacked on the encoding goroutines, across DDL rotations, row-limit
// files and a small budget's flushes: every record lands exactly once.
func TestKafkaManyTablesPackedExactlyOnce(t *testing.T) {
	kafkatest.Each(t, testKafkaManyTablesPackedExactlyOnce)
}

func testKafkaManyTablesPackedExactlyOnce(t *testing.T, b kafkatest.Broker) {
	tp := b.Topic(t, 6)
	var lines [][]byte
	st, err := gen.Write(io.Discard, gen.Options{Records: 12000, Tables: 40, Seed: 12, DDLEvery: 4000, Track: true, Lines: &lines})
	if err != nil {
		t.Fatal(err)
	}
	kafkatest.Produce(t, tp.Addrs, tp.Name, lines, kafkatest.TableKey)
	dir := t.TempDir()
	local, _ := store.NewLocal(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sum, err := runKafka(ctx, t, tp, "g-packed", true, local, func(c *pipeline.Config) {
		c.MaxBufferBytes = 8 << 20
		c.Writer.MaxRows = 250
	})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rejected != 0 || sum.Tables < 33 {
		t.Fatalf("rejected %d, %d tables", sum.Rejected, sum.Tables)
	}
	checkExactlyOnce(t, dir, st)
}
