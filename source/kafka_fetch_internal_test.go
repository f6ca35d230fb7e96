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
)

// slowConn reads at most 4 KiB every 5 ms: a slow link.
type slowConn struct{ net.Conn }

func (c slowConn) Read(p []byte) (int, error) {
	time.Sleep(5 * time.Millisecond)
	return c.Conn.Read(p[:min(len(p), 4<<10)])
}

// A value larger than the fetcher's buffer ends its fetch with the rest
// of the response still on a slow connection, longer to read than the
// message deadline: the next fetch must not read those bytes as its own
// response (a failed fetch, or worse, a misparse), so the fetcher drops
// the connection and reads the large value whole on a new one.
func TestFetchAfterALargeValueOnASlowConnection(t *testing.T) {
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
	f := &partitionFetcher{dialer: conns.dialer(dialer), brokers: addrs, topic: "cdc", partition: 0, name: "cdc-0",
		minBytes: 1, maxBytes: 16 << 20, maxWait: time.Second, log: slog.New(slog.DiscardHandler),
		// The 1 MB after the large value take over a second on this link;
		// the 64 records read under one deadline, about 80 ms.
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
			t.Fatalf("fetch %d from offset %d failed (%d in a row): the connection was left inside the previous response", fetches, offset, f.failures)
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
