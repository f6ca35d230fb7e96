package source

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/kafkatest"
	"github.com/segmentio/kafka-go"
)

// A --once drain of a partition that starts at the latest offset starts
// at the watermark the drain began with, not at the partition's end when
// it got to it: records written in between are the next run's, and a
// start kept past them would skip them for good.
func TestLatestStartOfADrainIsItsWatermark(t *testing.T) {
	addrs := kafkatest.Start(t, "cdc", 1)
	var lines [][]byte
	for i := range 10 {
		lines = append(lines, fmt.Appendf(nil, `{"n":%d}`, i))
	}
	kafkatest.ProduceTo(t, addrs, "cdc", 0, lines)
	k := &Kafka{cfg: KafkaConfig{Brokers: addrs, Group: "g", Dialer: &kafka.Dialer{Timeout: 10 * time.Second}, MinBytes: 1,
		MaxBytes: 1 << 20, MaxWait: 100 * time.Millisecond}, log: slog.New(slog.DiscardHandler), events: make(chan kafkaEvent, 4)}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var drained drainCount
	drained.Add(1)
	const watermark = 6 // when the drain began, the partition ended here; four records came since
	done := make(chan struct{})
	go func() {
		defer close(done)
		k.consume(ctx, 1, "cdc", 0, "cdc-0", kafka.LastOffset, watermark, &drained)
	}()
	select {
	case ev := <-k.events:
		if len(ev.msgs) != 1 || !ev.msgs[0].Skip || ev.msgs[0].Offset != watermark-1 {
			t.Errorf("first event %+v, want the start kept at the drain's watermark: offsets up to %d read", ev, watermark-1)
		}
	case <-ctx.Done():
		t.Fatal("no event")
	}
	drained.Wait() // read up to the watermark
	cancel()
	<-done
}
