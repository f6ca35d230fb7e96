package pipeline_test

import (
	"context"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
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

// These tests run against kfake, or against the cluster that
// EXPORTER_TEST_KAFKA_BROKERS names.

// sourceLog keeps what a Kafka source logs: every message, and every
// assignment.
type sourceLog struct {
	mu       sync.Mutex
	messages []string
	assigned [][]string
}

func (l *sourceLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *sourceLog) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *sourceLog) WithGroup(string) slog.Handler            { return l }

func (l *sourceLog) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.messages = append(l.messages, r.Message)
	if r.Message == "kafka partitions assigned" {
		r.Attrs(func(at slog.Attr) bool {
			if ps, ok := at.Value.Any().([]string); ok && at.Key == "partitions" {
				ps = slices.Clone(ps)
				slices.Sort(ps)
				l.assigned = append(l.assigned, ps)
			}
			return true
		})
	}
	return nil
}

// logged reports whether a message starting with prefix was logged.
func (l *sourceLog) logged(prefix string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.ContainsFunc(l.messages, func(m string) bool { return strings.HasPrefix(m, prefix) })
}

// assignments returns every assignment so far, in order.
func (l *sourceLog) assignments() [][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.assigned)
}

// liveRun is a continuous pipeline run on a Kafka source.
type liveRun struct {
	dir    string
	log    *sourceLog
	cancel context.CancelFunc
	done   chan struct{}
	sum    pipeline.Summary
	err    error
}

// startLive runs the pipeline continuously on kc (its brokers, topics or
// pattern), into a new folder, until stop.
func startLive(t *testing.T, kc source.KafkaConfig) *liveRun {
	t.Helper()
	r := &liveRun{dir: t.TempDir(), log: &sourceLog{}, done: make(chan struct{})}
	kc.Group = kafkatest.Unique("g-live")
	kc.MetadataRefresh = 200 * time.Millisecond
	kc.MaxWait = 100 * time.Millisecond
	kc.Logger = slog.New(r.log)
	src, err := source.NewKafka(kc)
	if err != nil {
		t.Fatal(err)
	}
	local, _ := store.NewLocal(r.dir)
	dec, _ := cdc.NewGoldenGate(cdc.GoldenGateNames{})
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	cfg := pipeline.Config{Source: src, Store: local, Decoder: dec, MaxRejects: 0, DecodeWorkers: 2,
		NewDecoder: func() pipeline.Decoder { d, _ := cdc.NewGoldenGate(cdc.GoldenGateNames{}); return d },
		Schema:     arrowschema.Options{BeforeImage: true}, Writer: writer.Config{Allocator: mem, MaxRows: 700, MaxAge: 300 * time.Millisecond},
		Logger: kc.Logger}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() {
		defer close(r.done)
		defer src.Close()
		r.sum, r.err = pipeline.Run(ctx, cfg)
		mem.AssertSize(t, 0)
	}()
	t.Cleanup(func() { cancel(); <-r.done })
	return r
}

// stop ends the run and fails the test if it failed.
func (r *liveRun) stop(t *testing.T) pipeline.Summary {
	t.Helper()
	r.cancel()
	<-r.done
	if r.err != nil {
		t.Fatalf("run failed: %v", r.err)
	}
	return r.sum
}

// waitRows waits until the lake holds n rows.
func (r *liveRun) waitRows(t *testing.T, n int) {
	t.Helper()
	waitFor(t, 2*time.Minute, "rows in the lake", func() bool { return countRows(t, r.dir) >= n })
	if t.Failed() {
		t.FailNow()
	}
}

// tableStream generates a stream over tables and splits it by table:
// byTable[i] holds every line of table i, in order.
func tableStream(t *testing.T, records, tables int) (gen.Stats, [][][]byte) {
	t.Helper()
	var lines [][]byte
	st, err := gen.Write(io.Discard, gen.Options{Records: records, Tables: tables, Seed: 36, DDLEvery: records / 2, Track: true, Lines: &lines})
	if err != nil {
		t.Fatal(err)
	}
	byTable := make([][][]byte, tables)
	for _, l := range lines {
		i := slices.Index(st.TableNames, string(kafkatest.TableKey(l)))
		if i < 0 {
			t.Fatalf("line of no table: %s", l)
		}
		byTable[i] = append(byTable[i], l)
	}
	return st, byTable
}

// dmlOf counts the DML records of the first n tables.
func dmlOf(st gen.Stats, n int) int {
	sum := 0
	for _, table := range st.TableNames[:n] {
		for _, c := range st.ByTableOp[table] {
			sum += c
		}
	}
	return sum
}

// TestKafkaTopicCreatedAfterStart: a continuous run on a topic that does
// not exist yet reads it once it is created and filled, without a
// restart, every record exactly once.
func TestKafkaTopicCreatedAfterStart(t *testing.T) {
	addrs := kafkatest.Cluster(t)
	topic := kafkatest.Unique("late")
	st, byTable := tableStream(t, 3000, 3)
	run := startLive(t, source.KafkaConfig{Brokers: addrs, Topics: []string{topic}})
	waitFor(t, time.Minute, "the run to wait for its topic", func() bool { return run.log.logged("no kafka topic matches the subscription yet") })

	kafkatest.CreateTopic(t, addrs, topic, 3)
	var lines [][]byte
	for _, ls := range byTable {
		lines = append(lines, ls...)
	}
	kafkatest.Produce(t, addrs, topic, lines, kafkatest.TableKey)
	run.waitRows(t, st.DML)
	sum := run.stop(t)
	if sum.Records != int64(len(lines)) || sum.Rejected != 0 {
		t.Errorf("read %d records, rejected %d; produced %d", sum.Records, sum.Rejected, len(lines))
	}
	checkExactlyOnce(t, run.dir, st)
}

// TestKafkaPatternGainsTopics: a pattern subscription picks up a second
// and a third matching topic while it runs; topics that the anchored
// pattern does not match (a prefix before it, a suffix after it) are
// never read, though they hold copies of a matching topic's records.
func TestKafkaPatternGainsTopics(t *testing.T) {
	addrs := kafkatest.Cluster(t)
	prefix := kafkatest.Unique("cdc")
	st, byTable := tableStream(t, 4500, 3)
	topic := func(i int) string { return prefix + ".t" + string(rune('0'+i)) }
	kafkatest.CreateTopic(t, addrs, topic(0), 2)
	kafkatest.Produce(t, addrs, topic(0), byTable[0], kafkatest.TableKey)
	others := []string{"x" + topic(1), topic(1) + ".bak"}
	for _, o := range others {
		kafkatest.CreateTopic(t, addrs, o, 1)
		kafkatest.Produce(t, addrs, o, byTable[1], kafkatest.TableKey)
	}
	run := startLive(t, source.KafkaConfig{Brokers: addrs, TopicPattern: regexp.QuoteMeta(prefix) + `\.t[0-9]`})
	run.waitRows(t, dmlOf(st, 1))
	for i := 1; i < 3; i++ {
		kafkatest.CreateTopic(t, addrs, topic(i), 2)
		kafkatest.Produce(t, addrs, topic(i), byTable[i], kafkatest.TableKey)
		run.waitRows(t, dmlOf(st, i+1))
	}
	sum := run.stop(t)
	checkExactlyOnce(t, run.dir, st)
	produced := len(byTable[0]) + len(byTable[1]) + len(byTable[2])
	if sum.Records != int64(produced) {
		t.Errorf("read %d records, the matching topics hold %d", sum.Records, produced)
	}
	as := run.log.assignments()
	for _, a := range as {
		for _, p := range a {
			if !strings.HasPrefix(p, prefix+".t") || strings.HasSuffix(p[:strings.LastIndexByte(p, '-')], ".bak") {
				t.Errorf("assigned %s, which the pattern does not match", p)
			}
		}
	}
	want := []string{topic(0) + "-0", topic(0) + "-1", topic(1) + "-0", topic(1) + "-1", topic(2) + "-0", topic(2) + "-1"}
	if len(as) == 0 || !slices.Equal(as[len(as)-1], want) {
		t.Errorf("assignments %v, want the last to be %v", as, want)
	}
}

// TestKafkaPartitionsAddedWhileRunning: partitions added to a subscribed
// topic are read without a restart: the tables produced only to them
// land, exactly once.
func TestKafkaPartitionsAddedWhileRunning(t *testing.T) {
	addrs := kafkatest.Cluster(t)
	topic := kafkatest.Unique("grow")
	st, byTable := tableStream(t, 4000, 4)
	kafkatest.CreateTopic(t, addrs, topic, 1)
	kafkatest.ProduceTo(t, addrs, topic, 0, append(slices.Clone(byTable[0]), byTable[1]...))
	run := startLive(t, source.KafkaConfig{Brokers: addrs, Topics: []string{topic}})
	run.waitRows(t, dmlOf(st, 2))

	kafkatest.AddPartitions(t, addrs, topic, 3)
	kafkatest.ProduceTo(t, addrs, topic, 1, byTable[2])
	kafkatest.ProduceTo(t, addrs, topic, 2, byTable[3])
	run.waitRows(t, st.DML)
	run.stop(t)
	checkExactlyOnce(t, run.dir, st)
	as := run.log.assignments()
	if want := []string{topic + "-0", topic + "-1", topic + "-2"}; len(as) == 0 || !slices.Equal(as[len(as)-1], want) {
		t.Errorf("assignments %v, want the last to be %v", as, want)
	}
}

// TestKafkaDeletedTopicIsGivenUp: a subscribed topic that is deleted
// while the run reads it is given up with a warning; what was read from
// it stays, exactly once, and the other topic goes on: records produced
// to it afterwards land, and the run ends without an error.
func TestKafkaDeletedTopicIsGivenUp(t *testing.T) {
	addrs := kafkatest.Cluster(t)
	prefix := kafkatest.Unique("del")
	keep, gone := prefix+".keep", prefix+".gone"
	st, byTable := tableStream(t, 3000, 3)
	kafkatest.CreateTopic(t, addrs, keep, 2)
	kafkatest.CreateTopic(t, addrs, gone, 2)
	kafkatest.Produce(t, addrs, keep, byTable[0], kafkatest.TableKey)
	kafkatest.Produce(t, addrs, gone, byTable[1], kafkatest.TableKey)
	run := startLive(t, source.KafkaConfig{Brokers: addrs, TopicPattern: regexp.QuoteMeta(prefix) + `\..*`})
	run.waitRows(t, dmlOf(st, 2))

	kafkatest.DeleteTopic(t, addrs, gone)
	waitFor(t, time.Minute, "the deletion to be noticed", func() bool { return run.log.logged("kafka topics deleted") })
	kafkatest.Produce(t, addrs, keep, byTable[2], kafkatest.TableKey)
	run.waitRows(t, st.DML)
	run.stop(t)
	checkExactlyOnce(t, run.dir, st)
	as := run.log.assignments()
	if want := []string{keep + "-0", keep + "-1"}; len(as) == 0 || !slices.Equal(as[len(as)-1], want) {
		t.Errorf("assignments %v, want the last to be %v", as, want)
	}
}
