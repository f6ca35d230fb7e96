package kafkatest

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DeleteRecords deletes the records of a partition before offset, as the
// topic's retention would (kafka-go has no DeleteRecords).
func DeleteRecords(t testing.TB, tp Topic, partition int, before int64) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(tp.Addrs...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.TimeoutMillis = 30_000
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = tp.Name
	rp := kmsg.NewDeleteRecordsRequestTopicPartition()
	rp.Partition, rp.Offset = int32(partition), before
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("delete records of %s before %d: %v", tp.Partition(partition), before, err)
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
				t.Fatalf("delete records of %s before %d: %v", tp.Partition(partition), before, err)
			}
			if rp.LowWatermark != before {
				t.Fatalf("delete records of %s before %d: the partition now starts at %d", tp.Partition(partition), before, rp.LowWatermark)
			}
		}
	}
}
