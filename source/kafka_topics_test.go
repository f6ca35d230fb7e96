package source_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/kafkatest"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
)

// follower reads a continuous Kafka source as the pipeline does: it
// commits what it read when it is told to give its partitions up, and
// answers every ownership event.
type follower struct {
	src  *source.Kafka
	seen map[string]int   // position -> times read
	last map[string]int64 // partition -> last offset read
	// events is "R p,p,..." for an assignment, "D" for a revocation and
	// "M topic" for the first record read after either.
	events []string
}

func (f *follower) next(t *testing.T, ctx context.Context) {
	t.Helper()
	m, err := f.src.Next(ctx)
	if err == source.ErrIdle {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case m.Control != nil && m.Control.Resume != nil:
		ps := slices.Clone(m.Control.Partitions)
		slices.Sort(ps)
		f.events = append(f.events, "R "+strings.Join(ps, ","))
		m.Control.Resume <- nil
	case m.Control != nil && m.Control.Checkpoint != nil:
		m.Control.Checkpoint <- f.src.Ack(ctx, f.last)
	case m.Control != nil:
		f.events = append(f.events, "D")
		m.Control.Done <- f.src.Ack(ctx, f.last)
		f.last = map[string]int64{}
	default:
		f.seen[m.Position()]++
		f.last[m.Partition] = m.Offset
		topic := m.Partition[:strings.LastIndexByte(m.Partition, '-')]
		if e := "M " + topic; !strings.HasPrefix(f.events[len(f.events)-1], "M ") {
			f.events = append(f.events, e)
		}
	}
}

// until reads until cond holds.
func (f *follower) until(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		if ctx.Err() != nil {
			t.Fatalf("gave up waiting for %s; events %v", what, f.events)
		}
		f.next(t, ctx)
	}
}

func (f *follower) count(topic string) int {
	n := 0
	for pos := range f.seen {
		if strings.HasPrefix(pos, topic+"-") {
			n++
		}
	}
	return n
}

func numbered(prefix string, n int) [][]byte {
	lines := make([][]byte, n)
	for i := range lines {
		lines[i] = fmt.Appendf(nil, `{"%s":%d}`, prefix, i)
	}
	return lines
}

// TestKafkaPatternRejoinsThroughARevocation: a topic that comes to match
// the pattern while the source runs is read without a restart, and the
// way there is the rebalance path: every partition is revoked (and its
// offsets committed) before the assignment that holds the new topic, so
// nothing is read twice. A topic the anchored pattern does not match is
// never read.
func TestKafkaPatternRejoinsThroughARevocation(t *testing.T) {
	addrs := kafkatest.Cluster(t)
	prefix := kafkatest.Unique("src")
	a, b, other := prefix+".a", prefix+".b", "x"+prefix+".b"
	kafkatest.CreateTopic(t, addrs, a, 2)
	kafkatest.CreateTopic(t, addrs, other, 1)
	kafkatest.Produce(t, addrs, a, numbered("a", 20), func(l []byte) []byte { return l })
	kafkatest.Produce(t, addrs, other, numbered("x", 5), func(l []byte) []byte { return l })
	src, err := source.NewKafka(source.KafkaConfig{Brokers: addrs, TopicPattern: regexp.QuoteMeta(prefix) + `\.[ab]`,
		Group: kafkatest.Unique("g-src"), MetadataRefresh: 100 * time.Millisecond, MaxWait: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f := &follower{src: src, seen: map[string]int{}, last: map[string]int64{}, events: []string{"start"}}
	f.until(t, ctx, "the records of "+a, func() bool { return f.count(a) == 20 })

	kafkatest.CreateTopic(t, addrs, b, 3)
	kafkatest.Produce(t, addrs, b, numbered("b", 30), func(l []byte) []byte { return l })
	f.until(t, ctx, "the records of "+b, func() bool { return f.count(b) == 30 })

	t.Logf("events %v", f.events)
	for pos, n := range f.seen {
		if n != 1 {
			t.Errorf("%s read %d times", pos, n)
		}
	}
	if n := f.count(other); n != 0 {
		t.Errorf("read %d records of %s, which the pattern does not match", n, other)
	}
	both := fmt.Sprintf("R %[1]s-0,%[1]s-1,%[2]s-0,%[2]s-1,%[2]s-2", a, b)
	i := slices.Index(f.events, both)
	if i < 1 || !slices.Contains(f.events[:i], "D") || !slices.Contains(f.events[:i], "R "+a+"-0,"+a+"-1") {
		t.Errorf("want the assignment of %s, a revocation, then %q; events %v", a, both, f.events)
	}
	if j := slices.Index(f.events, "M "+b); j < i {
		t.Errorf("a record of %s before its assignment; events %v", b, f.events)
	}
}
