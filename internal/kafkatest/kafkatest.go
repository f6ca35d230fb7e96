// Package kafkatest gives tests a Kafka-protocol broker on 127.0.0.1 and
// helpers to produce CDC streams to it through kafka-go, the client the
// exporter uses. The broker is franz-go's kfake, in the test's process;
// tests that check the exporter's guarantees also run against the Apache
// Kafka broker that scripts/kafka.sh starts, named by
// EXPORTER_TEST_KAFKA_BROKERS (see Each).
package kafkatest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
)

// BrokersEnv names the Apache Kafka broker (host:port[,host:port]) that
// tests use besides kfake; scripts/test.sh sets it.
const BrokersEnv = "EXPORTER_TEST_KAFKA_BROKERS"

// Start runs a kfake broker with topic seeded at the given partition
// count, for the length of the test.
func Start(t testing.TB, topic string, partitions int) []string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(partitions), topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

// Broker is one kind of broker a test runs against: kfake, started anew
// for each topic, or the shared Apache Kafka broker, on which each topic
// gets a name of its own.
type Broker struct {
	// Name is "kfake" or "kafka"; Each names its subtests after it.
	Name  string
	addrs []string
}

// Brokers returns kfake, and the Apache Kafka broker when BrokersEnv is
// set and the tests do not run with -short.
func Brokers() []Broker {
	bs := []Broker{{Name: "kfake"}}
	if env := os.Getenv(BrokersEnv); env != "" && !testing.Short() {
		bs = append(bs, Broker{Name: "kafka", addrs: strings.Split(env, ",")})
	}
	return bs
}

// Each runs f as a subtest for every broker of Brokers.
func Each(t *testing.T, f func(t *testing.T, b Broker)) {
	for _, b := range Brokers() {
		t.Run(b.Name, func(t *testing.T) { f(t, b) })
	}
}

// Topic is a topic that belongs to one test.
type Topic struct {
	Addrs []string
	Name  string
}

// Group returns a consumer group name that is the test's own on a shared
// broker, where a group of the same name from another test (or another
// package's tests, run at the same time) would join the same rebalances.
func (tp Topic) Group(name string) string { return name + "_" + tp.Name }

// Partition returns the exporter's name for a partition of the topic
// (its checkpoints and metrics use TOPIC-N).
func (tp Topic) Partition(n int) string { return tp.Name + "-" + strconv.Itoa(n) }

// Topic gives the test a new topic with the given partition count: on
// kfake a cluster of its own with the topic "cdc", on Apache Kafka a
// topic named cdc_ and random hex (no dash, so that a partition's name
// TOPIC-N splits at its last dash only), deleted when the test ends.
func (b Broker) Topic(t testing.TB, partitions int) Topic {
	t.Helper()
	if b.addrs == nil {
		return Topic{Addrs: Start(t, "cdc", partitions), Name: "cdc"}
	}
	var suffix [6]byte
	rand.Read(suffix[:])
	tp := Topic{Addrs: b.addrs, Name: "cdc_" + hex.EncodeToString(suffix[:])}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := &kafka.Client{Addr: kafka.TCP(b.addrs...), Timeout: 30 * time.Second}
	res, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{
		Topic: tp.Name, NumPartitions: partitions, ReplicationFactor: 1}}})
	if err == nil {
		err = res.Errors[tp.Name]
	}
	if err != nil {
		t.Fatalf("create topic %s on %v (is the broker of %s up?): %v", tp.Name, b.addrs, BrokersEnv, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		client.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{tp.Name}})
	})
	waitLeaders(ctx, t, client, tp.Name, partitions)
	return tp
}

// waitLeaders waits until every partition of a new topic has a leader,
// since a producer that comes earlier is told the partition is unknown.
func waitLeaders(ctx context.Context, t testing.TB, client *kafka.Client, topic string, partitions int) {
	t.Helper()
	var last error
	for ctx.Err() == nil {
		md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
		if err == nil && len(md.Topics) == 1 && md.Topics[0].Error == nil && len(md.Topics[0].Partitions) == partitions {
			ready := true
			for _, p := range md.Topics[0].Partitions {
				ready = ready && p.Error == nil && p.Leader.Host != ""
			}
			if ready {
				return
			}
		}
		last = errors.Join(err, fmt.Errorf("metadata: %+v", md))
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("topic %s has no leader for each of its %d partitions: %v", topic, partitions, last)
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
