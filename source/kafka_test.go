package source_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/kafkatest"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
)

// TestKafkaCloseDoesNotWaitForFetch: once a partition is drained, its
// reader sits in a fetch that the broker holds for MaxWait. Close (and a
// rebalance, which ends the generation the same way) must not wait that
// out.
func TestKafkaCloseDoesNotWaitForFetch(t *testing.T) {
	addrs := kafkatest.Start(t, "cdc", 2)
	lines := [][]byte{[]byte(`{"a":1}`), []byte(`{"b":2}`), []byte(`{"c":3}`), []byte(`{"d":4}`)}
	kafkatest.Produce(t, addrs, "cdc", lines, func(l []byte) []byte { return l })
	const maxWait = 5 * time.Second
	src, err := source.NewKafka(source.KafkaConfig{Brokers: addrs, Topics: []string{"cdc"}, Group: "g-close", Once: true, MaxWait: maxWait})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if n := drain(t, ctx, src, nil); n != len(lines) {
		t.Fatalf("read %d of %d records", n, len(lines))
	}
	// let the readers go back to the broker for more, which waits MaxWait
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > maxWait/2 {
		t.Errorf("Close took %v, as long as the fetch in flight (MaxWait %v)", d, maxWait)
	}
}

// drain reads src to its end, answering ownership events as the pipeline
// would, calls onRecord (when set) before each record, and returns how
// many records it read.
func drain(tb testing.TB, ctx context.Context, src *source.Kafka, onRecord func(n int)) int {
	tb.Helper()
	return drainMessages(tb, ctx, src, func(n int, _ *source.Message) {
		if onRecord != nil {
			onRecord(n)
		}
	})
}

// drainMessages is drain with each record handed to onRecord.
func drainMessages(tb testing.TB, ctx context.Context, src *source.Kafka, onRecord func(n int, m *source.Message)) int {
	tb.Helper()
	n := 0
	for {
		m, err := src.Next(ctx)
		if err == io.EOF {
			return n
		}
		if err == source.ErrIdle {
			continue
		}
		if err != nil {
			tb.Fatal(err)
		}
		if m.Control != nil {
			if m.Control.Resume != nil {
				m.Control.Resume <- nil
			} else {
				m.Control.Done <- nil
			}
			continue
		}
		onRecord(n, m)
		n++
	}
}

// Kafka's messages say their values are their own, and they are: every
// value kept from Next is intact once the topic is drained, so the
// pipeline keeps them without a copy.
func TestKafkaValuesAreOwned(t *testing.T) {
	addrs := kafkatest.Start(t, "cdc", 2)
	var lines [][]byte
	for i := range 500 {
		lines = append(lines, fmt.Appendf(nil, `{"n":%d,"pad":"%s"}`, i, strings.Repeat("x", i%37)))
	}
	kafkatest.Produce(t, addrs, "cdc", lines, func(l []byte) []byte { return l })
	src, err := source.NewKafka(source.KafkaConfig{Brokers: addrs, Topics: []string{"cdc"}, Group: "g-owned", Once: true})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kept := map[string]bool{}
	var values [][]byte
	drainMessages(t, ctx, src, func(_ int, m *source.Message) {
		if !m.Owned {
			t.Fatalf("message at %s has Owned unset", m.Position())
		}
		values = append(values, m.Value) // kept, not copied
	})
	for _, v := range values {
		kept[string(v)] = true
	}
	for _, l := range lines {
		if !kept[string(l)] {
			t.Errorf("value %s was overwritten or not read", l)
		}
	}
	if len(values) != len(lines) {
		t.Errorf("read %d of %d records", len(values), len(lines))
	}
}
