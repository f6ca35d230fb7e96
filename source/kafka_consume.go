package source

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/segmentio/kafka-go"
)

// drainCount counts the partitions of a Once generation still being read
// up to their watermarks; cut is set by a reader that stopped short of
// its watermark.
type drainCount struct {
	sync.WaitGroup
	cut atomic.Bool
}

// consume reads one partition of generation genID from start and hands
// its records to the events, until the generation ends. In a Once
// generation (hw >= 0) it counts the partition drained once it is read up
// to hw, the watermark the drain began with.
func (k *Kafka) consume(ctx context.Context, genID int32, topic string, partition int, name string, start, hw int64, drained *drainCount) {
	var conns connCloser
	f := &partitionFetcher{dialer: conns.dialer(k.cfg.Dialer), conns: &conns, brokers: k.cfg.Brokers, topic: topic, partition: partition, name: name,
		minBytes: k.cfg.MinBytes, maxBytes: k.cfg.MaxBytes, maxWait: k.cfg.MaxWait, readUncommitted: k.cfg.ReadUncommitted,
		clientID: k.cfg.ClientID, log: k.log}
	if !k.cfg.ReadUncommitted {
		f.lastStable = func(ctx context.Context) (int64, error) { return k.lastStableOffset(ctx, topic, partition) }
	}
	// A fetch waits on its socket up to MaxWait for records: cutting the
	// sockets ends it at once when the generation ends or the source
	// closes, instead of every rebalance and Close paying that wait.
	stop := context.AfterFunc(ctx, conns.close)
	defer func() {
		stop()
		conns.close()
	}()
	signalled := false
	signal := func() { // the partition is read up to its watermark
		if hw >= 0 && !signalled {
			signalled = true
			drained.Done()
		}
	}
	defer func() {
		if hw >= 0 && !signalled {
			drained.cut.Store(true) // before Done: the waiter reads it after Wait
			signal()
		}
	}()
	if (hw == 0 && start != kafka.LastOffset) || (hw > 0 && start >= hw) {
		// nothing to read up to the watermark seen at start
		signal()
		<-ctx.Done()
		return
	}
	offset, err := f.resolve(ctx, start)
	if err == nil && start == kafka.LastOffset {
		// A partition without a position, starting at the latest offset:
		// the start is kept, else every run would start at the latest
		// offset again and skip what was written since the last one. A
		// drain starts no later than its watermark: what came after it
		// is the next run's, and a start past it would skip that.
		if hw >= 0 {
			offset = min(offset, hw)
		}
		if !k.keepStart(ctx, genID, topic, partition, name, offset) {
			return
		}
		if hw == 0 {
			signal()
			<-ctx.Done()
			return
		}
	}
	for {
		var ret *errRetention
		if errors.As(err, &ret) {
			// Nothing the exporter accepted is lost, but the records were
			// never read: say so loudly, and go on with what is there.
			k.log.Error("kafka records expired before export", "group", k.cfg.Group, "partition", name,
				"first_missing", ret.from, "last_missing", ret.first-1, "error", ret.Error())
			offset, err = ret.first, nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if k.topicGone(ctx, topic, partition) {
				// The pipeline gives the partition up with the others when
				// the watcher, asked now, makes the group rejoin without it.
				k.log.Warn("kafka topic deleted: giving up its partition; the other topics go on", "group", k.cfg.Group, "partition", name, "error", err)
				k.refreshSoon()
				signal()
				<-ctx.Done()
				return
			}
			k.emit(ctx, kafkaEvent{err: fmt.Errorf("kafka %s: %w", name, err)})
			return
		}
		if hw > 0 && offset >= hw {
			signal()
			<-ctx.Done()
			return
		}
		offset, err = f.next(ctx, offset, func(msgs []Message) bool {
			if hw > 0 {
				// Once mode: what was produced after the drain started
				// waits for the next run.
				n, _ := slices.BinarySearchFunc(msgs, hw, func(m Message, hw int64) int { return cmp.Compare(m.Offset, hw) })
				if msgs = msgs[:n:n]; len(msgs) == 0 {
					return false
				}
			}
			return k.emit(ctx, kafkaEvent{msgs: msgs, gen: genID})
		})
		if ctx.Err() != nil {
			// The generation ended: what the fetch read past the last
			// event handed over was not delivered, so the partition is
			// not drained however far the fetch went (see the deferred
			// cut above).
			return
		}
		if hw > 0 && offset >= hw {
			err = nil // reached the watermark: whatever cut the fetch short does not matter
		}
	}
}
