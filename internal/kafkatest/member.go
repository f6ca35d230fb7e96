package kafkatest

import (
	"context"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

// Member is a consumer group member that holds partitions and never reads
// or commits them, and that can die without leaving the group: the
// brokers keep it, and its partitions, until its session times out, as
// they keep a process killed with SIGKILL.
type Member struct {
	cg   *kafka.ConsumerGroup
	gens chan *kafka.Generation
	cut  cutDialer
}

// Join makes a Member join group on the topic with the given session
// timeout, and waits until it holds partitions. A leader that read the
// topic's metadata before the broker served all of it assigns nothing, and
// nothing makes a lone member's group rebalance again: such a member
// leaves and joins anew.
func Join(t testing.TB, tp Topic, group string, session time.Duration) *Member {
	t.Helper()
	m := &Member{gens: make(chan *kafka.Generation, 16)}
	t.Cleanup(func() {
		m.Die()
		if m.cg != nil {
			m.cg.Close()
		}
	})
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if m.cg != nil {
			m.cg.Close()
		}
		m.join(t, tp, group, session)
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		held := m.next(ctx, tp)
		cancel()
		if held != nil {
			return m
		}
	}
	t.Fatalf("member of group %s got no partitions of %s within a minute", group, tp.Name)
	return nil
}

// join starts the member's consumer group and the goroutine that hands
// its generations to m.gens until the group is closed.
func (m *Member) join(t testing.TB, tp Topic, group string, session time.Duration) {
	t.Helper()
	d := &kafka.Dialer{Timeout: 5 * time.Second, DialFunc: m.cut.dial}
	cg, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{ID: group, Brokers: tp.Addrs, Topics: []string{tp.Name},
		Dialer: d, SessionTimeout: session, HeartbeatInterval: 200 * time.Millisecond, RebalanceTimeout: 30 * time.Second,
		JoinGroupBackoff: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	m.cg = cg
	go func() {
		for {
			gen, err := cg.Next(context.Background())
			if err != nil {
				return
			}
			m.gens <- gen
		}
	}()
}

// next waits for the member's next generation, and returns the names of
// its partitions there (TOPIC-N, sorted), nil when ctx ends first.
func (m *Member) next(ctx context.Context, tp Topic) []string {
	for {
		select {
		case gen := <-m.gens:
			var names []string
			for _, a := range gen.Assignments[tp.Name] {
				names = append(names, tp.Partition(a.ID))
			}
			if len(names) == 0 {
				continue
			}
			slices.Sort(names)
			return names
		case <-ctx.Done():
			return nil
		}
	}
}

// DieInNextGeneration waits until the group rebalances (another member
// joins) and this member holds partitions in the new generation, then
// dies. It returns the partitions it holds, dead.
func (m *Member) DieInNextGeneration(t testing.TB, tp Topic) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	held := m.next(ctx, tp)
	m.Die()
	if held == nil {
		t.Fatal("the group did not rebalance within a minute")
	}
	return held
}

// Die cuts the member's connections and refuses new ones: it neither
// heartbeats nor leaves the group.
func (m *Member) Die() { m.cut.close() }

// Leave makes the member leave the group, as a process that stops cleanly
// does: the group rebalances at once.
func (m *Member) Leave() { m.cg.Close() }

// cutDialer dials until it is closed, then cuts what it dialed.
type cutDialer struct {
	mu     sync.Mutex
	conns  []net.Conn
	closed bool
}

func (c *cutDialer) dial(ctx context.Context, network, address string) (net.Conn, error) {
	conn, err := (&net.Dialer{}).DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		conn.Close()
		return nil, net.ErrClosed
	}
	c.conns = append(c.conns, conn)
	return conn, nil
}

func (c *cutDialer) close() {
	c.mu.Lock()
	conns := c.conns
	c.conns, c.closed = nil, true
	c.mu.Unlock()
	for _, conn := range conns {
		conn.Close()
	}
}
