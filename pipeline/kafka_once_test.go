package pipeline_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/kafkatest"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
	"github.com/lakehouse-exporter/lakehouse-exporter/store"
)

// TestKafkaOnceWaitsForADeadMembersPartitions: a member that died while
// it held partitions of the drain's generation (a killed --once run)
// keeps them until its session times out. The drain does not end when
// its own share is read: it stays in the group, gets the dead member's
// partitions in the rebalance that follows, and ends with every record
// exported.
func TestKafkaOnceWaitsForADeadMembersPartitions(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a dead member's session to time out")
	}
	kafkatest.Each(t, testKafkaOnceWaitsForADeadMembersPartitions)
}

func testKafkaOnceWaitsForADeadMembersPartitions(t *testing.T, b kafkatest.Broker) {
	tp, st := kafkaStream(t, b, 3000, 3)
	dead := kafkatest.Join(t, tp, tp.Group("g-dead"), 6*time.Second)
	dir := t.TempDir()
	local, _ := store.NewLocal(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	got := &assignments{}
	type result struct {
		records int64
		err     error
	}
	done := make(chan result, 1)
	go func() {
		sum, err := runKafkaWith(ctx, t, source.KafkaConfig{Brokers: tp.Addrs, Topics: []string{tp.Name}, Group: tp.Group("g-dead"),
			Once: true, MaxWait: 100 * time.Millisecond, Logger: slog.New(got)}, local, nil)
		done <- result{sum.Records, err}
	}()
	held := dead.DieInNextGeneration(t, tp)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if last := got.get(); !containsAll(last, held) {
		t.Errorf("the drain ended owning %v; the dead member held %v", last, held)
	}
	checkExactlyOnce(t, dir, st)
}

// TestKafkaOnceFailsNamingPartitionsLeft: when the dead member's
// partitions do not come within the drain timeout, the drain fails and
// names them, and only them.
func TestKafkaOnceFailsNamingPartitionsLeft(t *testing.T) {
	kafkatest.Each(t, testKafkaOnceFailsNamingPartitionsLeft)
}

func testKafkaOnceFailsNamingPartitionsLeft(t *testing.T, b kafkatest.Broker) {
	tp, _ := kafkaStream(t, b, 3000, 3)
	dead := kafkatest.Join(t, tp, tp.Group("g-stuck"), time.Minute)
	dir := t.TempDir()
	local, _ := store.NewLocal(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := runKafkaWith(ctx, t, source.KafkaConfig{Brokers: tp.Addrs, Topics: []string{tp.Name}, Group: tp.Group("g-stuck"),
			Once: true, MaxWait: 100 * time.Millisecond, DrainTimeout: 2 * time.Second}, local, nil)
		done <- err
	}()
	held := dead.DieInNextGeneration(t, tp)
	err := <-done
	if !errors.Is(err, source.ErrDrainIncomplete) {
		t.Fatalf("drain ended with %v, want %v", err, source.ErrDrainIncomplete)
	}
	for i := range 3 {
		p := tp.Partition(i)
		named := strings.Contains(err.Error(), p+",") || strings.Contains(err.Error(), p+" ")
		if named != slices.Contains(held, p) {
			t.Errorf("the error names %s: %v; the dead member held %v: %v", p, named, held, err)
		}
	}
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// TestKafkaOnceMembersDrainingTogether: two --once runs in one group
// (a Job with two pods, or overlapping scheduled runs) split the
// partitions. Each reads its own, then waits for the other's to be
// committed: each must make its own durable and committed first, or each
// waits for the other until the drain timeout and both fail. Both end
// with exit 0 and every record exported once.
func TestKafkaOnceMembersDrainingTogether(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a dead member's session to time out")
	}
	kafkatest.Each(t, testKafkaOnceMembersDrainingTogether)
}

func testKafkaOnceMembersDrainingTogether(t *testing.T, b kafkatest.Broker) {
	tp, st := kafkaStream(t, b, 3000, 2)
	group := tp.Group("g-two")
	// A member that dies holding the group makes the two runs wait for
	// its session to end, then share one generation.
	kafkatest.Join(t, tp, group, 6*time.Second).Die()
	dir := t.TempDir()
	local, _ := store.NewLocal(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	type result struct {
		records int64
		err     error
	}
	results := make(chan result, 2)
	for range 2 {
		go func() {
			sum, err := runKafkaWith(ctx, t, source.KafkaConfig{Brokers: tp.Addrs, Topics: []string{tp.Name}, Group: group,
				Once: true, MaxWait: 100 * time.Millisecond, DrainTimeout: 20 * time.Second}, local, nil)
			results <- result{sum.Records, err}
		}()
	}
	var counts []int64
	for range 2 {
		r := <-results
		if r.err != nil {
			t.Errorf("a run of the two: %v", r.err)
		}
		counts = append(counts, r.records)
	}
	if t.Failed() {
		return
	}
	if counts[0] == 0 || counts[1] == 0 {
		t.Errorf("records read by the two runs: %v; want both to have had partitions to drain", counts)
	}
	checkExactlyOnce(t, dir, st)
}
