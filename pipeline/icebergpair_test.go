package pipeline_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/gen"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/kafkatest"
	"github.com/lakehouse-exporter/lakehouse-exporter/pipeline"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
	"github.com/lakehouse-exporter/lakehouse-exporter/store"
	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
	"github.com/segmentio/kafka-go"
)

// TestTwoInstancesPublishToTheSameTables: two instances of one consumer
// group, each owning one of a topic's two partitions, export streams of
// the same tables (the same columns, each with its own DDL, so that both
// create the tables and update their schemas) and commit to the same
// Iceberg tables at once, every few hundred milliseconds. Through the
// catalog, every record must then be read once, and the tables must name
// each data file of the lake once.
func TestTwoInstancesPublishToTheSameTables(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for consumer-group rebalances")
	}
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Broker) {
		for catName, mk := range icebergCatalogs() {
			t.Run(catName, func(t *testing.T) {
				dir := t.TempDir()
				testTwoInstancesPublishToTheSameTables(t, b, filepath.Join(dir, "lake"), mk(dir))
			})
		}
	})
}

func testTwoInstancesPublishToTheSameTables(t *testing.T, b kafkatest.Broker, lake string, cfg tables.Config) {
	tp := b.Topic(t, 2)
	want := gen.Stats{Expected: map[string]gen.Expected{}}
	var byPartition [2][][]byte
	for p, prefix := range []string{"P-", "Q-"} {
		var lines [][]byte
		st, err := gen.Write(io.Discard, gen.Options{Records: 3000, Tables: 3, Seed: uint64(7 + p), DDLEvery: 1000, Track: true, Lines: &lines})
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range lines {
			// Positions unique across the two streams.
			lines[i] = bytes.ReplaceAll(l, []byte(`"pos":"P-`), []byte(`"pos":"`+prefix))
		}
		for pos, e := range st.Expected {
			want.Expected[prefix+strings.TrimPrefix(pos, "P-")] = e
		}
		want.TableNames = st.TableNames
		want.DML += st.DML
		byPartition[p] = lines
	}

	local, err := store.NewLocal(lake)
	if err != nil {
		t.Fatal(err)
	}
	withCatalog := func(c *pipeline.Config) {
		c.Catalog = &cfg
		c.Writer.MaxAge = 300 * time.Millisecond
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	sums := make([]pipeline.Summary, 2)
	logs := []*assignments{{}, {}}
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sums[i], errs[i] = runKafkaLogged(ctx, t, tp, "g-iceberg", false, local, withCatalog, debugLog(logs[i], string(rune('A'+i))))
		}()
	}
	waitFor(t, 60*time.Second, "each instance to own a partition", func() bool {
		return len(logs[0].get()) == 1 && len(logs[1].get()) == 1
	})
	produceTo(t, tp, byPartition)
	waitFor(t, 90*time.Second, "every row", func() bool { return countRows(t, lake) >= want.DML })
	stop()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("instance %d: %v", i, err)
		}
	}
	if sums[0].Records == 0 || sums[1].Records == 0 {
		t.Errorf("the partitions were not split: %d and %d records read", sums[0].Records, sums[1].Records)
	}
	checkTablesExactlyOnce(t, cfg, lake, want)
	checkTablesNameLakeFiles(t, cfg, lake, want.TableNames, true)
}

// produceTo writes lines[p] to partition p of the topic, in order.
func produceTo(t *testing.T, tp kafkatest.Topic, lines [2][][]byte) {
	t.Helper()
	w := &kafka.Writer{Addr: kafka.TCP(tp.Addrs...), Topic: tp.Name, BatchTimeout: 5 * time.Millisecond, BatchSize: 1000,
		RequiredAcks: kafka.RequireAll, Balancer: kafka.BalancerFunc(func(m kafka.Message, partitions ...int) int {
			return int(m.Key[0] - '0')
		})}
	defer w.Close()
	var msgs []kafka.Message
	for p, ls := range lines {
		for _, l := range ls {
			msgs = append(msgs, kafka.Message{Key: []byte{byte('0' + p)}, Value: l})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
}

// ackDyingKafka is the Kafka source whose acknowledgement dies: the
// round's checkpoints are written, the offsets never reach the group.
type ackDyingKafka struct{ *source.Kafka }

func (ackDyingKafka) Ack(context.Context, map[string]int64) error { return errDied }

// TestIcebergCheckpointWrittenSourceNotAcked: a Kafka run with a catalog
// dies between its checkpoints and its offset commit. The next run reads
// the topic from the group's (older) offsets, skips what the checkpoints
// cover, and every table holds every record once through the catalog.
func TestIcebergCheckpointWrittenSourceNotAcked(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Broker) {
		tp, want := kafkaStream(t, b, 3000, 2)
		dir := t.TempDir()
		lake := filepath.Join(dir, "lake")
		cfg := icebergCatalogs()["sql-sqlite"](dir)
		local, err := store.NewLocal(lake)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		_, err = runKafka(ctx, t, tp, "g-unacked", true, local, func(c *pipeline.Config) {
			c.Catalog = &cfg
			c.Source = ackDyingKafka{c.Source.(*source.Kafka)}
		})
		if !errors.Is(err, errDied) {
			t.Fatalf("the run whose acknowledgement dies ended with %v", err)
		}
		if _, err := runKafka(ctx, t, tp, "g-unacked", true, local, func(c *pipeline.Config) { c.Catalog = &cfg }); err != nil {
			t.Fatalf("the run after: %v", err)
		}
		checkTablesExactlyOnce(t, cfg, lake, want)
		checkTablesNameLakeFiles(t, cfg, lake, want.TableNames, true)
	})
}
