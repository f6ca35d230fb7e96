package kafkatest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
)

// Cluster returns the brokers of BrokersEnv when it is set, else those of
// a new kfake cluster without topics, for the length of the test. On a
// shared cluster, name topics and groups with Unique.
func Cluster(t testing.TB) []string {
	t.Helper()
	if env := os.Getenv(BrokersEnv); env != "" {
		return strings.Split(env, ",")
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

// Unique returns base on kfake, and base with a random suffix on a
// cluster from BrokersEnv, which outlives the test and is shared.
func Unique(base string) string {
	if os.Getenv(BrokersEnv) == "" {
		return base
	}
	return fmt.Sprintf("%s-%08x", base, rand.Uint32())
}

func admin(addrs []string) *kafka.Client {
	return &kafka.Client{Addr: kafka.TCP(addrs...), Timeout: 30 * time.Second}
}

// CreateTopic creates topic with the given partitions and waits until the
// brokers serve them all.
func CreateTopic(t testing.TB, addrs []string, topic string, partitions int) {
	t.Helper()
	res, err := admin(addrs).CreateTopics(context.Background(), &kafka.CreateTopicsRequest{
		Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: partitions, ReplicationFactor: 1}}})
	if err == nil {
		err = res.Errors[topic]
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	waitPartitions(t, addrs, topic, partitions)
}

// AddPartitions grows topic to total partitions and waits until the
// brokers serve them all.
func AddPartitions(t testing.TB, addrs []string, topic string, total int) {
	t.Helper()
	res, err := admin(addrs).CreatePartitions(context.Background(), &kafka.CreatePartitionsRequest{
		Topics: []kafka.TopicPartitionsConfig{{Name: topic, Count: int32(total)}}})
	if err == nil {
		err = res.Errors[topic]
	}
	if err != nil {
		t.Fatalf("grow topic %s to %d partitions: %v", topic, total, err)
	}
	waitPartitions(t, addrs, topic, total)
}

// DeleteTopic deletes topic and waits until the brokers no longer list it.
func DeleteTopic(t testing.TB, addrs []string, topic string) {
	t.Helper()
	res, err := admin(addrs).DeleteTopics(context.Background(), &kafka.DeleteTopicsRequest{Topics: []string{topic}})
	if err == nil {
		err = res.Errors[topic]
	}
	if err != nil {
		t.Fatalf("delete topic %s: %v", topic, err)
	}
	waitPartitions(t, addrs, topic, 0)
}

// waitPartitions waits until the metadata shows topic with n partitions,
// each with a leader (n 0: the topic is gone).
func waitPartitions(t testing.TB, addrs []string, topic string, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		// All topics, none named: a metadata request that names a topic
		// the broker does not have creates it where auto-creation is on
		// (Apache Kafka's default), which would bring a deleted topic back.
		res, err := admin(addrs).Metadata(context.Background(), &kafka.MetadataRequest{})
		got := 0
		if err == nil {
			for _, tp := range res.Topics {
				if tp.Name == topic && tp.Error == nil {
					for _, p := range tp.Partitions {
						if p.Error == nil && p.Leader.Host != "" {
							got++
						}
					}
				}
			}
			if got == n {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("topic %s: %d partitions served after a minute, want %d (last error: %v)", topic, got, n, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ProduceTo writes lines to one partition of topic, in order.
func ProduceTo(t testing.TB, addrs []string, topic string, partition int, lines [][]byte) {
	t.Helper()
	w := &kafka.Writer{Addr: kafka.TCP(addrs...), Topic: topic, BatchTimeout: 5 * time.Millisecond, BatchSize: 1000,
		RequiredAcks: kafka.RequireAll, Balancer: kafka.BalancerFunc(func(kafka.Message, ...int) int { return partition })}
	defer w.Close()
	msgs := make([]kafka.Message, len(lines))
	for i, l := range lines {
		msgs[i] = kafka.Message{Value: l}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatalf("produce to %s-%d: %v", topic, partition, err)
	}
}
