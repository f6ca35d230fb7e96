package kafkatest

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Transaction is a batch of lines a transactional producer writes and
// then commits or aborts.
type Transaction struct {
	Lines  [][]byte
	Commit bool
}

// ProduceTransactions writes each transaction to partition 0 of the topic
// through a transactional producer (kafka-go has none), in order.
func ProduceTransactions(t testing.TB, tp Topic, txns []Transaction) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(tp.Addrs...), kgo.TransactionalID("txn-"+tp.Name),
		kgo.DefaultProduceTopic(tp.Name), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i, txn := range txns {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatalf("transaction %d: begin: %v", i, err)
		}
		recs := make([]*kgo.Record, len(txn.Lines))
		for j, l := range txn.Lines {
			recs[j] = &kgo.Record{Value: l, Partition: 0}
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("transaction %d: produce: %v", i, err)
		}
		if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(txn.Commit)); err != nil {
			t.Fatalf("transaction %d: end (commit %v): %v", i, txn.Commit, err)
		}
	}
}
