package pipeline_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/gen"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/kafkatest"
	"github.com/lakehouse-exporter/lakehouse-exporter/pipeline"
	"github.com/lakehouse-exporter/lakehouse-exporter/store"
)

// TestKafkaTransactionsAreReadUncommitted pins down what the exporter
// does with a transactional producer's records: kafka-go, its Kafka
// client, neither filters aborted transactions (whatever isolation level
// it asks for) nor recognises the transaction markers. So the records of
// an aborted transaction are exported like the committed ones, and each
// commit or abort marker reaches the decoder as a record of its own,
// which it rejects (a dead letter). docs/operating.md says so.
func TestKafkaTransactionsAreReadUncommitted(t *testing.T) {
	kafkatest.Each(t, testKafkaTransactionsAreReadUncommitted)
}

func testKafkaTransactionsAreReadUncommitted(t *testing.T, b kafkatest.Broker) {
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
	dir := t.TempDir()
	local, _ := store.NewLocal(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sum, err := runKafka(ctx, t, tp, "g-txn", true, local, func(c *pipeline.Config) { c.MaxRejects = -1 })
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records != int64(len(lines)+len(txns)) || sum.Rejected != int64(len(txns)) {
		t.Errorf("read %d records, rejected %d; want the %d lines and one marker per transaction (%d), the markers rejected",
			sum.Records, sum.Rejected, len(lines), len(txns))
	}
	// every line, the aborted third included, exactly once
	checkExactlyOnce(t, dir, st)
}
