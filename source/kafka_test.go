package source_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/kafkatest"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/syncbuf"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
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
			answer(m.Control)
			continue
		}
		onRecord(n, m)
		n++
	}
}

// drainAll reads a Once source of cfg to its end, within a minute, and
// returns every record.
func drainAll(t *testing.T, cfg source.KafkaConfig) []*source.Message {
	t.Helper()
	src, err := source.NewKafka(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var got []*source.Message
	drainMessages(t, ctx, src, func(_ int, m *source.Message) { got = append(got, m) })
	return got
}

// answer replies to an ownership event as a pipeline that has nothing
// to checkpoint does: resume from the group's offsets, and done.
func answer(c *source.Control) {
	switch {
	case c.Resume != nil:
		c.Resume <- nil
	case c.Checkpoint != nil:
		c.Checkpoint <- nil
	default:
		c.Done <- nil
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

// Values larger than the fetcher's read buffer (16 KiB until a larger one
// comes) among small ones: each arrives once, whole, in order and at its
// own offset, as does every small value around it.
func TestKafkaLargeValuesAmongSmallOnes(t *testing.T) {
	kafkatest.Each(t, testKafkaLargeValuesAmongSmallOnes)
}

func testKafkaLargeValuesAmongSmallOnes(t *testing.T, b kafkatest.Broker) {
	tp := b.Topic(t, 1)
	var lines [][]byte
	for i := range 300 {
		pad := i % 41
		switch i {
		case 0, 7, 8, 150:
			pad = 70 << 10 // the first read of such a value fails and is read whole
		case 151:
			pad = 600 << 10 // larger than the buffer grown for the ones before
		case 299:
			pad = 65 << 10
		}
		lines = append(lines, fmt.Appendf(nil, `{"n":%d,"pad":"%s"}`, i, strings.Repeat(string(rune('a'+i%26)), pad)))
	}
	kafkatest.ProduceTo(t, tp.Addrs, tp.Name, 0, lines)
	got := drainAll(t, source.KafkaConfig{Brokers: tp.Addrs, Topics: []string{tp.Name}, Group: tp.Group("g-large"), Once: true})
	if len(got) != len(lines) {
		t.Fatalf("read %d of %d records", len(got), len(lines))
	}
	for i, m := range got {
		if m.Offset != int64(i) || !bytes.Equal(m.Value, lines[i]) || m.Size != int64(len(lines[i])) {
			t.Errorf("record %d: offset %d, %d bytes (size %d), want offset %d and the %d bytes produced", i, m.Offset, len(m.Value), m.Size, i, len(lines[i]))
		}
	}
}

// A fetch response cut at MaxBytes ends inside a record batch; the next
// fetch, from the first record not read, gets that batch again from its
// start, and the records before the offset asked for are not handed out
// a second time.
func TestKafkaFetchesStartingInsideARecordBatch(t *testing.T) {
	kafkatest.Each(t, testKafkaFetchesStartingInsideARecordBatch)
}

func testKafkaFetchesStartingInsideARecordBatch(t *testing.T, b kafkatest.Broker) {
	tp := b.Topic(t, 1)
	var lines [][]byte
	for n := range 20 {
		var batch [][]byte
		for i := range 50 {
			batch = append(batch, fmt.Appendf(nil, `{"n":%d,"pad":"%s"}`, n*50+i, strings.Repeat("x", 80)))
		}
		kafkatest.ProduceTo(t, tp.Addrs, tp.Name, 0, batch) // one record batch of about 5 KB
		lines = append(lines, batch...)
	}
	got := drainAll(t, source.KafkaConfig{Brokers: tp.Addrs, Topics: []string{tp.Name}, Group: tp.Group("g-cut"), Once: true, MaxBytes: 8 << 10})
	for i, m := range got {
		if i < len(lines) && (m.Offset != int64(i) || !bytes.Equal(m.Value, lines[i])) {
			t.Fatalf("record %d: offset %d, value %.20s, want offset %d, value %.20s", i, m.Offset, m.Value, i, lines[i])
		}
	}
	if len(got) != len(lines) {
		t.Fatalf("read %d records, want %d", len(got), len(lines))
	}
}

// Records that retention deleted after the group committed an offset
// before them were never exported: the source goes on from the first
// record the broker still has, and says which records it never saw,
// instead of skipping them in silence.
func TestKafkaReportsRecordsDeletedByRetention(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Broker) {
		tp := b.Topic(t, 1)
		var lines [][]byte
		for i := range 10 {
			lines = append(lines, fmt.Appendf(nil, `{"n":%d}`, i))
		}
		kafkatest.ProduceTo(t, tp.Addrs, tp.Name, 0, lines[:3])
		group := tp.Group("g-retention")
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		first, err := source.NewKafka(source.KafkaConfig{Brokers: tp.Addrs, Topics: []string{tp.Name}, Group: group, Once: true})
		if err != nil {
			t.Fatal(err)
		}
		if n := drain(t, ctx, first, nil); n != 3 {
			t.Fatalf("first run read %d records, want 3", n)
		}
		if err := first.Ack(ctx, map[string]int64{tp.Partition(0): 2}); err != nil {
			t.Fatal(err)
		}
		first.Close()

		kafkatest.ProduceTo(t, tp.Addrs, tp.Name, 0, lines[3:])
		kafkatest.DeleteRecords(t, tp, 0, 6)
		var logs syncbuf.Buffer
		src, err := source.NewKafka(source.KafkaConfig{Brokers: tp.Addrs, Topics: []string{tp.Name}, Group: group, Once: true,
			Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		var got []string
		drainMessages(t, ctx, src, func(_ int, m *source.Message) { got = append(got, string(m.Value)) })
		if want := []string{`{"n":6}`, `{"n":7}`, `{"n":8}`, `{"n":9}`}; !slices.Equal(got, want) {
			t.Errorf("second run read %q, want %q", got, want)
		}
		var found bool
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, `"msg":"kafka records expired before export"`) {
				found = true
				for _, want := range []string{`"level":"ERROR"`, `"first_missing":3`, `"last_missing":5`, `"partition":"` + tp.Partition(0) + `"`} {
					if !strings.Contains(line, want) {
						t.Errorf("log line %s lacks %s", line, want)
					}
				}
			}
		}
		if !found {
			t.Errorf("no log line says records were deleted before export; logs:\n%s", logs.String())
		}
	})
}

// A fetch connection that breaks (a broker restarting, a leader moving)
// is dialled again and the partition goes on where it was: every record
// is read once and in order.
func TestKafkaFetchSurvivesBrokenConnections(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "cdc"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var lines [][]byte
	for i := range 1000 {
		lines = append(lines, fmt.Appendf(nil, `{"n":%d,"pad":"%s"}`, i, strings.Repeat("x", 40)))
	}
	for i := 0; i < len(lines); i += 50 {
		// one record batch each: a fetch of MaxBytes 4096 gets one
		kafkatest.Produce(t, c.ListenAddrs(), "cdc", lines[i:i+50], func(l []byte) []byte { return nil })
	}
	// Every fifth fetch request fails, which closes its connection.
	var fetches atomic.Int32
	c.ControlKey(int16(kmsg.Fetch), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if fetches.Add(1)%5 == 0 {
			return nil, errors.New("connection cut by the test"), true
		}
		return nil, nil, false
	})
	src, err := source.NewKafka(source.KafkaConfig{Brokers: c.ListenAddrs(), Topics: []string{"cdc"}, Group: "g-cut", Once: true,
		MaxBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var offsets []int64
	var values []string
	drainMessages(t, ctx, src, func(_ int, m *source.Message) {
		offsets = append(offsets, m.Offset)
		values = append(values, string(m.Value))
	})
	if len(values) != len(lines) {
		t.Fatalf("read %d records, want %d", len(values), len(lines))
	}
	for i, v := range values {
		if v != string(lines[i]) || offsets[i] != int64(i) {
			t.Fatalf("record %d: offset %d value %s, want offset %d value %s", i, offsets[i], v, i, lines[i])
		}
	}
	if n := fetches.Load(); n < 10 {
		t.Errorf("only %d fetches: too few for the test to have cut any connection", n)
	}
}

// TestKafkaOnceDrainSurvivesARebalance: a member that joins the group
// while a drain is under way ends the drain's generation before its
// partitions are read; the drain must go on in the next generation (here,
// once that member has left again) and end only when every record was
// read, not take the cut-short readers for finished ones.
func TestKafkaOnceDrainSurvivesARebalance(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Broker) {
		tp := b.Topic(t, 2)
		const records = 6000
		lines := make([][]byte, records)
		for i := range lines {
			lines[i] = fmt.Appendf(nil, `{"n":%d}`, i)
		}
		kafkatest.Produce(t, tp.Addrs, tp.Name, lines, func(l []byte) []byte { return l })
		group := tp.Group("g-mid")
		src, err := source.NewKafka(source.KafkaConfig{Brokers: tp.Addrs, Topics: []string{tp.Name}, Group: group, Once: true,
			MaxWait: 100 * time.Millisecond, DrainTimeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		joined := make(chan struct{})
		var generations atomic.Int32
		seen := map[string]bool{}
		for {
			m, err := src.Next(ctx)
			if err == io.EOF {
				break
			}
			if err == source.ErrIdle {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Control != nil {
				if m.Control.Resume != nil {
					generations.Add(1)
				}
				answer(m.Control)
				continue
			}
			if len(seen) == 0 {
				go func() {
					defer close(joined)
					kafkatest.Join(t, tp, group, 10*time.Second).Leave()
				}()
			}
			seen[m.Position()] = true
			select {
			case <-joined:
			default:
				time.Sleep(2 * time.Millisecond) // let the member join mid-drain
			}
		}
		<-joined
		if len(seen) != records {
			t.Fatalf("the drain ended after %d of %d records (generations %d)", len(seen), records, generations.Load())
		}
		if generations.Load() < 2 {
			t.Errorf("the drain read everything in its first generation: the member joined too late to test anything")
		}
	})
}
