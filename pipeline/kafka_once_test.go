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
