package source

import (
	"context"
	"errors"
	"fmt"
)

// keepStart keeps where a partition without a position starts, at the
// latest offset: a Kafka consumer commits its position even when it read
// nothing, and so must the exporter, or each run would start at the
// latest offset again and skip what was written since the last one. The
// start is committed to the group at once (nothing of the partition is
// read before it, so no acknowledgement of the pipeline can come first),
// and past offset 0 it is also a position-only message before the start,
// which the pipeline checkpoints like any read. It returns false when the
// generation ended.
func (k *Kafka) keepStart(ctx context.Context, genID int32, topic string, partition int, name string, start int64) bool {
	if start > 0 && !k.emit(ctx, kafkaEvent{msgs: []Message{{Skip: true, Partition: name, Offset: start - 1, Origin: name, Sep: '@', Lag: -1}}, gen: genID}) {
		return false
	}
	k.mu.Lock()
	gen := k.gen
	k.mu.Unlock()
	if gen == nil || gen.ID != genID {
		return ctx.Err() == nil
	}
	if err := gen.CommitOffsets(map[string]map[int]int64{topic: {partition: start}}); err != nil && ctx.Err() == nil {
		k.log.Warn("could not commit where a partition without a committed offset starts; until a checkpoint holds it, "+
			"a restart starts at the latest offset again and skips what was written in between (--kafka-start earliest rules this out)",
			"group", k.cfg.Group, "partition", name, "offset", start, "error", err)
	}
	return ctx.Err() == nil
}

// lastStableOffset reads a partition's last stable offset: the first
// offset of its oldest open transaction, or its high watermark. Only a
// source reading committed asks (endOffsets reads what it reads).
func (k *Kafka) lastStableOffset(ctx context.Context, topic string, partition int) (int64, error) {
	ends, err := k.endOffsets(ctx, map[string][]int{topic: {partition}})
	if err != nil {
		return 0, fmt.Errorf("read the last stable offset: %w", err)
	}
	end, ok := ends[KafkaPartitionName(topic, partition)]
	if !ok {
		return 0, errors.New("read the last stable offset: the broker's answer does not list the partition")
	}
	return end, nil
}
