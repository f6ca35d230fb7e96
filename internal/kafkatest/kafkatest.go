// Package kafkatest gives tests a Kafka-protocol broker (franz-go's kfake)
// on 127.0.0.1, and helpers to produce CDC streams to it through kafka-go,
// the client the exporter uses.
package kafkatest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
)

// Start runs a broker with topic seeded at the given partition count, for
// the length of the test.
func Start(t testing.TB, topic string, partitions int) []string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(partitions), topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

// TableKey returns the table a GoldenGate line belongs to, so that every
// record of one table (metadata, DDL, schema records, DML) lands in one
// partition, as the GoldenGate Kafka handler keys them by default.
func TableKey(line []byte) []byte {
	var r struct {
		QualTable string `json:"qual_table"`
		ID        string `json:"id"`
		DDL       struct {
			Object struct{ Schema, Object string }
		} `json:"ddl"`
	}
	json.Unmarshal(line, &r)
	switch {
	case r.QualTable != "":
		return []byte(r.QualTable)
	case r.DDL.Object.Object != "":
		return []byte(r.DDL.Object.Schema + "." + r.DDL.Object.Object)
	}
	return []byte(r.ID)
}

// Produce writes lines to topic, keyed by key, in order.
func Produce(t testing.TB, addrs []string, topic string, lines [][]byte, key func([]byte) []byte) {
	t.Helper()
	w := &kafka.Writer{Addr: kafka.TCP(addrs...), Topic: topic, Balancer: &kafka.Hash{}, BatchTimeout: 5 * time.Millisecond,
		BatchSize: 1000, RequiredAcks: kafka.RequireAll}
	defer w.Close()
	msgs := make([]kafka.Message, len(lines))
	for i, l := range lines {
		msgs[i] = kafka.Message{Key: key(l), Value: l}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for len(msgs) > 0 {
		n := min(len(msgs), 5000)
		if err := w.WriteMessages(ctx, msgs[:n]...); err != nil {
			t.Fatal(err)
		}
		msgs = msgs[n:]
	}
}
