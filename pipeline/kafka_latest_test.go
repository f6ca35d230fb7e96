package pipeline_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/gen"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/kafkatest"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
	"github.com/lakehouse-exporter/lakehouse-exporter/store"
)

// TestKafkaLatestStart: a new group that starts at the latest offset
// skips what was written before its first run, and only that. The first
// --once run, which has nothing to read, still keeps the position it
// started from, as a Kafka consumer commits its position: the next run
// exports everything written after it, instead of starting at the latest
// offset again and skipping it. Reading committed, the latest offset is
// the last stable one, so a transaction open at the first run is
// exported once it commits.
func TestKafkaLatestStart(t *testing.T) {
	kafkatest.Each(t, testKafkaLatestStart)
}

func testKafkaLatestStart(t *testing.T, b kafkatest.Broker) {
	// before is a stream of its own, as what comes after cannot be
	// decoded without the table metadata at the beginning of its stream.
	var before [][]byte
	if _, err := gen.Write(io.Discard, gen.Options{Records: 200, Tables: 2, Seed: 24, Lines: &before}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		// write puts what the partition holds at the first run, and
		// returns what writes the lines after it.
		write func(t *testing.T, tp kafkatest.Topic, lines [][]byte) (after func())
		// offset is the group's offset after the first run.
		offset int64
	}{
		{"records before", func(t *testing.T, tp kafkatest.Topic, lines [][]byte) func() {
			kafkatest.Produce(t, tp.Addrs, tp.Name, before, kafkatest.TableKey)
			return func() { kafkatest.Produce(t, tp.Addrs, tp.Name, lines, kafkatest.TableKey) }
		}, int64(len(before))},
		{"a transaction open", func(t *testing.T, tp kafkatest.Topic, lines [][]byte) func() {
			kafkatest.ProduceTransactions(t, tp, []kafkatest.Transaction{{Lines: before, Commit: true}})
			open := kafkatest.BeginTransaction(t, tp, "open")
			open.Produce(t, lines)
			return func() { open.End(t, true) }
		}, int64(len(before)) + 1}, // past the commit marker
		{"an empty partition", func(t *testing.T, tp kafkatest.Topic, lines [][]byte) func() {
			return func() { kafkatest.Produce(t, tp.Addrs, tp.Name, lines, kafkatest.TableKey) }
		}, 0},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tp := b.Topic(t, 1)
			var lines [][]byte
			st, err := gen.Write(io.Discard, gen.Options{Records: 300, Tables: 2, Seed: uint64(31 + i), Track: true, Lines: &lines})
			if err != nil {
				t.Fatal(err)
			}
			after := c.write(t, tp, lines)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			dir := t.TempDir()
			local, _ := store.NewLocal(dir)
			kc := source.KafkaConfig{Brokers: tp.Addrs, Topics: []string{tp.Name}, Group: tp.Group("g-latest"), Once: true,
				StartAt: "latest", MaxWait: 100 * time.Millisecond}
			sum, err := runKafkaWith(ctx, t, kc, local, nil)
			if err != nil || sum.Records != 0 {
				t.Fatalf("first run from the latest offset read %d records (error %v), want none", sum.Records, err)
			}
			if got := committedOffset(ctx, t, tp, kc.Group); got != c.offset {
				t.Errorf("group offset after the first run %d, want %d: the position the group started from", got, c.offset)
			}
			after()
			sum, err = runKafkaWith(ctx, t, kc, local, nil)
			if err != nil || sum.Records != int64(len(lines)) {
				t.Fatalf("second run read %d records (error %v), want the %d written after the first", sum.Records, err, len(lines))
			}
			checkExactlyOnce(t, dir, st)
		})
	}
}

// TestKafkaLatestStartIsCommittedAtOnce: a continuous run that starts at
// the latest offset commits its start to the group as soon as it has
// the partition, not at its first commit round: killed before that
// round, it would otherwise start at the latest offset again and skip
// what was written in between.
func TestKafkaLatestStartIsCommittedAtOnce(t *testing.T) {
	kafkatest.Each(t, testKafkaLatestStartIsCommittedAtOnce)
}

func testKafkaLatestStartIsCommittedAtOnce(t *testing.T, b kafkatest.Broker) {
	tp := b.Topic(t, 1)
	var before [][]byte
	if _, err := gen.Write(io.Discard, gen.Options{Records: 50, Tables: 1, Seed: 37, Lines: &before}); err != nil {
		t.Fatal(err)
	}
	kafkatest.Produce(t, tp.Addrs, tp.Name, before, kafkatest.TableKey)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	runCtx, stop := context.WithCancel(ctx)
	local, _ := store.NewLocal(t.TempDir())
	kc := source.KafkaConfig{Brokers: tp.Addrs, Topics: []string{tp.Name}, Group: tp.Group("g-latest-now"),
		StartAt: "latest", MaxWait: 100 * time.Millisecond}
	done := make(chan error, 1)
	go func() {
		_, err := runKafkaWith(runCtx, t, kc, local, nil)
		done <- err
	}()
	committed := int64(-1)
	for deadline := time.Now().Add(30 * time.Second); committed != int64(len(before)) && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		committed = committedOffset(ctx, t, tp, kc.Group)
	}
	stop()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("run: %v", err)
	}
	if committed != int64(len(before)) {
		t.Errorf("group offset %d while the run went on, want its start %d committed before any round", committed, len(before))
	}
}
