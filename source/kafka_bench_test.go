package source_test

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/gen"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/kafkatest"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
)

// BenchmarkKafkaSource measures the Kafka source alone (kfake in the same
// process): how fast records reach Next.
func BenchmarkKafkaSource(b *testing.B) {
	addrs := kafkatest.Start(b, "cdc", 4)
	var lines [][]byte
	st, _ := gen.Write(io.Discard, gen.Options{Records: 100_000, Tables: 4, Seed: 1, Lines: &lines})
	kafkatest.Produce(b, addrs, "cdc", lines, kafkatest.TableKey)
	var bytes int64
	for _, l := range lines {
		bytes += int64(len(l))
	}
	for i := 0; b.Loop(); i++ {
		src, err := source.NewKafka(source.KafkaConfig{Brokers: addrs, Topics: []string{"cdc"}, Group: fmt.Sprintf("b%d-%d", i, time.Now().UnixNano()), Once: true})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		var first time.Duration
		n := drain(b, context.Background(), src, func(n int) {
			if n == 0 {
				first = time.Since(start)
			}
		})
		b.ReportMetric(float64(first.Milliseconds()), "ms-to-first")
		src.Close()
		if n != len(lines) {
			b.Fatalf("read %d of %d", n, len(lines))
		}
	}
	secs := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(len(lines))/secs, "records/s")
	b.ReportMetric(float64(bytes)/secs/1e6, "MB/s")
	_ = st
}
