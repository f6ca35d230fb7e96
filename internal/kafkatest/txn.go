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

// transactional returns a transactional producer (kafka-go has none)
// named id, writing to partition 0 of the topic; the test closes it.
func transactional(t testing.TB, tp Topic, id string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(tp.Addrs...), kgo.TransactionalID(id+"-"+tp.Name),
		kgo.DefaultProduceTopic(tp.Name), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// ProduceTransactions writes each transaction to partition 0 of the topic
// through a transactional producer, in order.
func ProduceTransactions(t testing.TB, tp Topic, txns []Transaction) {
	t.Helper()
	cl := transactional(t, tp, "txn")
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

// OpenTransaction is a transaction begun and not yet ended, for tests of
// what happens meanwhile.
type OpenTransaction struct {
	cl *kgo.Client
}

// BeginTransaction begins a transaction of a producer of its own, named
// id, on partition 0 of the topic.
func BeginTransaction(t testing.TB, tp Topic, id string) *OpenTransaction {
	t.Helper()
	cl := transactional(t, tp, id)
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	return &OpenTransaction{cl: cl}
}

// Produce writes lines in the transaction, a record per request, so that
// two transactions produced in turn interleave batch by batch.
func (o *OpenTransaction) Produce(t testing.TB, lines [][]byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, l := range lines {
		if err := o.cl.ProduceSync(ctx, &kgo.Record{Value: l, Partition: 0}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// End commits or aborts the transaction.
func (o *OpenTransaction) End(t testing.TB, commit bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := o.cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		t.Fatal(err)
	}
}
