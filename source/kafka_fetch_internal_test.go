package source

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/kafkatest"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kgo"
)

// slowConn reads at most 4 KiB every 5 ms: a slow link.
type slowConn struct{ net.Conn }

func (c slowConn) Read(p []byte) (int, error) {
	time.Sleep(5 * time.Millisecond)
	return c.Conn.Read(p[:min(len(p), 4<<10)])
}

// A fetch response larger than what a slow link carries within the read
// timeout is still read whole, as long as its bytes keep coming: the
// timeout bounds a stall, not the transfer.
func TestFetchOfALargeResponseOnASlowConnection(t *testing.T) {
	addrs := kafkatest.Start(t, "cdc", 1)
	lines := [][]byte{fmt.Appendf(nil, `{"pad":"%s"}`, strings.Repeat("x", 20<<10))}
	for i := range 1000 {
		lines = append(lines, fmt.Appendf(nil, `{"n":%d,"pad":"%s"}`, i, strings.Repeat("y", 1<<10)))
	}
	kafkatest.ProduceTo(t, addrs, "cdc", 0, lines)
	dialer := &kafka.Dialer{Timeout: 10 * time.Second, DialFunc: func(ctx context.Context, network, address string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, address)
		if err != nil {
			return nil, err
		}
		return slowConn{c}, nil
	}}
	var conns connCloser
	defer conns.close()
	f := &partitionFetcher{dialer: conns.dialer(dialer), conns: &conns, brokers: addrs, topic: "cdc", partition: 0, name: "cdc-0",
		minBytes: 1, maxBytes: 16 << 20, maxWait: time.Second, log: slog.New(slog.DiscardHandler),
		// The 1 MB of the response take over a second on this link, more
		// than the broker's wait and the read timeout together.
		readTimeout: 500 * time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var got []Message
	offset := int64(0)
	for fetches := 0; offset < int64(len(lines)) && fetches < 50; fetches++ {
		next, err := f.next(ctx, offset, func(ms []Message) bool { got = append(got, ms...); return true })
		if err != nil {
			t.Fatal(err)
		}
		if f.failures != 0 {
			t.Fatalf("fetch %d from offset %d failed (%d in a row): a response that kept coming was cut by the read timeout", fetches, offset, f.failures)
		}
		offset = next
	}
	if len(got) != len(lines) {
		t.Fatalf("read %d of %d records", len(got), len(lines))
	}
	for i, m := range got {
		if m.Offset != int64(i) || string(m.Value) != string(lines[i]) {
			t.Fatalf("record %d: offset %d, %d bytes; want offset %d, %d bytes", i, m.Offset, len(m.Value), i, len(lines[i]))
		}
	}
}

// Every compression codec a producer may use is read back, values and
// offsets, from a fetch that starts inside the first batch.
func TestFetchOfCompressedBatches(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Broker) {
		codecs := map[string]kgo.CompressionCodec{"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(),
			"snappy": kgo.SnappyCompression(), "lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression()}
		for name, codec := range codecs {
			t.Run(name, func(t *testing.T) {
				tp := b.Topic(t, 1)
				var lines [][]byte
				for i := range 500 {
					lines = append(lines, fmt.Appendf(nil, `{"n":%d,"pad":"%s"}`, i, strings.Repeat("z", i%97)))
				}
				cl, err := kgo.NewClient(kgo.SeedBrokers(tp.Addrs...), kgo.DefaultProduceTopic(tp.Name),
					kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(codec), kgo.ProducerLinger(20*time.Millisecond))
				if err != nil {
					t.Fatal(err)
				}
				defer cl.Close()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				recs := make([]*kgo.Record, len(lines))
				for i, l := range lines {
					recs[i] = &kgo.Record{Value: l, Partition: 0}
				}
				if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
					t.Fatal(err)
				}
				var conns connCloser
				defer conns.close()
				f := &partitionFetcher{dialer: conns.dialer(&kafka.Dialer{Timeout: 10 * time.Second}), conns: &conns, brokers: tp.Addrs,
					topic: tp.Name, partition: 0, name: tp.Partition(0), minBytes: 1, maxBytes: 1 << 20, maxWait: 100 * time.Millisecond,
					log: slog.New(slog.DiscardHandler)}
				const from = 3
				var got []Message
				offset := int64(from)
				for fetches := 0; offset < int64(len(lines)) && fetches < 50; fetches++ {
					if offset, err = f.next(ctx, offset, func(ms []Message) bool { got = append(got, ms...); return true }); err != nil {
						t.Fatal(err)
					}
				}
				if len(got) != len(lines)-from {
					t.Fatalf("read %d records, want %d", len(got), len(lines)-from)
				}
				for i, m := range got {
					if want := i + from; m.Offset != int64(want) || string(m.Value) != string(lines[want]) || m.Skip {
						t.Fatalf("message %d: offset %d, value %q, skip %v; want offset %d, %q", i, m.Offset, m.Value, m.Skip, want, lines[want])
					}
				}
			})
		}
	})
}
