package pipeline_test

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/gen"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/kafkatest"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
	"github.com/lakehouse-exporter/lakehouse-exporter/store"
	"github.com/segmentio/kafka-go"
)

// TestKafkaTransactions pins down what the exporter does with a
// transactional producer's records: read committed (the default), the
// records of an aborted transaction are left out; read uncommitted, they
// are exported like the others. Either way the transaction markers are
// not records (never decoded, never dead letters), and the group's
// offset reaches the partition's end, marker included, so that the next
// --once drain has nothing left to wait for.
func TestKafkaTransactions(t *testing.T) {
	kafkatest.Each(t, testKafkaTransactions)
}

func testKafkaTransactions(t *testing.T, b kafkatest.Broker) {
	for _, readUncommitted := range []bool{false, true} {
		name := "read_committed"
		if readUncommitted {
			name = "read_uncommitted"
		}
		t.Run(name, func(t *testing.T) {
			tp := b.Topic(t, 1)
			var lines [][]byte
			st, err := gen.Write(io.Discard, gen.Options{Records: 600, Tables: 2, Seed: 13, Track: true, Lines: &lines})
			if err != nil {
				t.Fatal(err)
			}
			third := len(lines) / 3
			txns := []kafkatest.Transaction{{Lines: lines[:third], Commit: true}, {Lines: lines[third : 2*third], Commit: false},
				{Lines: lines[2*third:], Commit: true}}
			kafkatest.ProduceTransactions(t, tp, txns)
			want, records := st, len(lines)
			if !readUncommitted {
				want, records = without(t, st, lines[third:2*third]), len(lines)-(2*third-third)
				if want.DML == st.DML {
					t.Fatal("the aborted transaction holds no DML: the test proves nothing")
				}
			}
			dir := t.TempDir()
			local, _ := store.NewLocal(dir)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			kc := source.KafkaConfig{Brokers: tp.Addrs, Topics: []string{tp.Name}, Group: tp.Group("g-txn"), Once: true,
				MaxWait: 100 * time.Millisecond, ReadUncommitted: readUncommitted}
			sum, err := runKafkaWith(ctx, t, kc, local, nil)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Records != int64(records) || sum.Rejected != 0 {
				t.Errorf("read %d records, rejected %d; want %d read (every line %s), none rejected",
					sum.Records, sum.Rejected, records, map[bool]string{false: "of the committed transactions", true: "written"}[readUncommitted])
			}
			checkExactlyOnce(t, dir, want)

			// The last offset is the last transaction's commit marker:
			// the group's offset is past it.
			end := partitionEnd(ctx, t, tp)
			if got := committedOffset(ctx, t, tp, kc.Group); got != end {
				t.Errorf("group offset %d, want the partition's end %d (past the last transaction marker)", got, end)
			}
			again, err := runKafkaWith(ctx, t, kc, local, nil)
			if err != nil || again.Records != 0 {
				t.Errorf("a second drain read %d records (error %v), want none", again.Records, err)
			}
		})
	}
}

// without returns st less the DML records among lines.
func without(t *testing.T, st gen.Stats, lines [][]byte) gen.Stats {
	t.Helper()
	out := st
	out.Expected = maps.Clone(st.Expected)
	for _, l := range lines {
		var r struct {
			Pos string `json:"pos"`
		}
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatal(err)
		}
		if _, ok := out.Expected[r.Pos]; ok {
			delete(out.Expected, r.Pos)
			out.DML--
		}
	}
	return out
}

// partitionEnd returns the offset the next record of partition 0 gets.
func partitionEnd(ctx context.Context, t *testing.T, tp kafkatest.Topic) int64 {
	t.Helper()
	c := &kafka.Client{Addr: kafka.TCP(tp.Addrs...)}
	res, err := c.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{tp.Name: {kafka.LastOffsetOf(0)}}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Topics[tp.Name][0].LastOffset
}

// committedOffset returns the group's committed offset of partition 0.
func committedOffset(ctx context.Context, t *testing.T, tp kafkatest.Topic, group string) int64 {
	t.Helper()
	c := &kafka.Client{Addr: kafka.TCP(tp.Addrs...)}
	res, err := c.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{tp.Name: {0}}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Topics[tp.Name][0].CommittedOffset
}

// TestKafkaOnceLeavesAnOpenTransaction: reading committed, a --once drain
// covers the partition up to its last stable offset when it started: it
// exports what is committed and exits, leaving a transaction still open
// for the next run, which exports it once committed.
func TestKafkaOnceLeavesAnOpenTransaction(t *testing.T) {
	kafkatest.Each(t, testKafkaOnceLeavesAnOpenTransaction)
}

func testKafkaOnceLeavesAnOpenTransaction(t *testing.T, b kafkatest.Broker) {
	tp := b.Topic(t, 1)
	var lines [][]byte
	st, err := gen.Write(io.Discard, gen.Options{Records: 600, Tables: 2, Seed: 17, Track: true, Lines: &lines})
	if err != nil {
		t.Fatal(err)
	}
	split := 2 * len(lines) / 3
	kafkatest.ProduceTransactions(t, tp, []kafkatest.Transaction{{Lines: lines[:split], Commit: true}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	open := kafkatest.BeginTransaction(t, tp, "open")
	open.Produce(t, lines[split:])

	dir := t.TempDir()
	local, _ := store.NewLocal(dir)
	kc := source.KafkaConfig{Brokers: tp.Addrs, Topics: []string{tp.Name}, Group: tp.Group("g-open"), Once: true,
		MaxWait: 100 * time.Millisecond, DrainTimeout: 30 * time.Second}
	sum, err := runKafkaWith(ctx, t, kc, local, nil)
	if err != nil || sum.Records != int64(split) {
		t.Fatalf("drain with a transaction open: read %d records (error %v), want the %d committed", sum.Records, err, split)
	}
	checkExactlyOnce(t, dir, without(t, st, lines[split:]))

	open.End(t, true)
	sum, err = runKafkaWith(ctx, t, kc, local, nil)
	if err != nil || sum.Records != int64(len(lines)-split) {
		t.Fatalf("drain after the commit: read %d records (error %v), want the %d of the transaction", sum.Records, err, len(lines)-split)
	}
	checkExactlyOnce(t, dir, st)
}

// TestKafkaInterleavedAbortedTransactions: two producers' transactions
// interleave on one partition, and the one that began first aborts last;
// the broker lists aborted transactions in the order of their markers.
// Neither is exported; the committed records around them are, once.
func TestKafkaInterleavedAbortedTransactions(t *testing.T) {
	kafkatest.Each(t, testKafkaInterleavedAbortedTransactions)
}

func testKafkaInterleavedAbortedTransactions(t *testing.T, b kafkatest.Broker) {
	tp := b.Topic(t, 1)
	var lines [][]byte
	st, err := gen.Write(io.Discard, gen.Options{Records: 600, Tables: 2, Seed: 19, Track: true, Lines: &lines})
	if err != nil {
		t.Fatal(err)
	}
	q := len(lines) / 4
	kafkatest.ProduceTransactions(t, tp, []kafkatest.Transaction{{Lines: lines[:q], Commit: true}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	a, bb := kafkatest.BeginTransaction(t, tp, "a"), kafkatest.BeginTransaction(t, tp, "b")
	half := q / 2
	a.Produce(t, lines[q:q+half])
	bb.Produce(t, lines[q+half:2*q])
	a.Produce(t, lines[2*q:2*q+half])
	bb.Produce(t, lines[2*q+half:3*q])
	bb.End(t, false) // b aborts first,
	a.End(t, false)  // a, which began first, after it
	kafkatest.ProduceTransactions(t, tp, []kafkatest.Transaction{{Lines: lines[3*q:], Commit: true}})

	dir := t.TempDir()
	local, _ := store.NewLocal(dir)
	kc := source.KafkaConfig{Brokers: tp.Addrs, Topics: []string{tp.Name}, Group: tp.Group("g-interleaved"), Once: true,
		MaxWait: 100 * time.Millisecond}
	sum, err := runKafkaWith(ctx, t, kc, local, nil)
	if want := len(lines) - 2*q; err != nil || sum.Records != int64(want) || sum.Rejected != 0 {
		t.Fatalf("read %d records, rejected %d (error %v); want the %d committed, none rejected", sum.Records, sum.Rejected, err, want)
	}
	checkExactlyOnce(t, dir, without(t, st, lines[q:3*q]))
}
