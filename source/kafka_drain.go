package source

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
)

// A drain (Once mode) finishes the topics, not just this instance's
// share of them:
//
//  1. Before joining, it reads the high watermark of every partition of
//     the subscribed topics: the drain covers each up to there.
//  2. Each partition assigned to this instance is read up to its start
//     watermark.
//  3. When all of them are read, every other partition must be durable up
//     to its start watermark in the group's committed offsets (another
//     live member exported it). Until then the instance stays in the
//     group: a member that died while holding partitions (killed while
//     joining, say) keeps them until its session times out, and the
//     rebalance that follows hands them to this instance, back to step 2.
//  4. When that does not happen within DrainTimeout, with no progress on
//     those partitions meanwhile, the drain fails naming them.
//
// This instance's own partitions become durable after io.EOF, when the
// pipeline's last checkpoint commits them.

// ErrDrainIncomplete is wrapped by the error of a drain that ended with
// partitions of the subscribed topics neither read by this instance nor
// committed by another member of the group.
var ErrDrainIncomplete = errors.New("partitions left unexported")

// drainPoll is how often a drain that waits reads the group's committed
// offsets.
const drainPoll = time.Second

// drainEnd is how waiting for the other partitions ended.
type drainEnd int

const (
	drainComplete   drainEnd = iota // every other partition is durable
	drainRebalanced                 // the generation ended: serve the next one
	drainFailed                     // an error was emitted, or the source closes
)

// startWatermarks reads the high watermark of every partition of set.
func (k *Kafka) startWatermarks(ctx context.Context, set topicSet) (map[string]int64, error) {
	parts := map[string][]int{}
	for topic, n := range set {
		for p := range n {
			parts[topic] = append(parts[topic], p)
		}
	}
	hw, err := k.endOffsets(ctx, parts)
	if err != nil {
		return nil, fmt.Errorf("read the high watermarks of %s: %w", strings.Join(set.names(), ","), err)
	}
	return hw, nil
}

// endOffsets reads where each of parts (partitions by topic) ends for
// this source: reading committed, its last stable offset (records past it
// belong to transactions still open); else its high watermark. The keys
// are partition names.
func (k *Kafka) endOffsets(ctx context.Context, parts map[string][]int) (map[string]int64, error) {
	c, done := k.client()
	defer done()
	req := &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{}}
	if !k.cfg.ReadUncommitted {
		req.IsolationLevel = kafka.ReadCommitted
	}
	for topic, ps := range parts {
		for _, p := range ps {
			req.Topics[topic] = append(req.Topics[topic], kafka.LastOffsetOf(p))
		}
	}
	res, err := c.ListOffsets(ctx, req)
	if err != nil {
		return nil, err
	}
	ends := map[string]int64{}
	for topic, ps := range res.Topics {
		for _, p := range ps {
			if p.Error != nil {
				return nil, fmt.Errorf("%s: %w", KafkaPartitionName(topic, p.Partition), p.Error)
			}
			ends[KafkaPartitionName(topic, p.Partition)] = p.LastOffset
		}
	}
	return ends, nil
}

// watermarksRead is what startWatermarks returned.
type watermarksRead struct {
	hw  map[string]int64
	err error
}

// awaitWatermarks makes startHW the watermarks read when the drain
// started, waiting for them if they are still on their way.
func (k *Kafka) awaitWatermarks(ctx context.Context) error {
	if k.watermarks == nil {
		return nil
	}
	select {
	case r := <-k.watermarks:
		return k.takeWatermarks(r)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// watermarksFailed returns the error of a watermark read that has
// failed, without waiting for one still on its way.
func (k *Kafka) watermarksFailed() error {
	select {
	case r := <-k.watermarks:
		return k.takeWatermarks(r)
	default:
		return nil
	}
}

func (k *Kafka) takeWatermarks(r watermarksRead) error {
	k.watermarks = nil
	if r.err != nil {
		return fmt.Errorf("kafka drain of group %s: %w (check that the brokers are reachable)", k.cfg.Group, r.err)
	}
	k.startHW = r.hw
	return nil
}

// undrained returns the partitions of the drain, other than mine, that
// the group has not committed up to their start watermark, sorted, and
// their committed offsets (to see progress).
func (k *Kafka) undrained(ctx context.Context, mine []string) (left []string, committed []int64, err error) {
	req := &kafka.OffsetFetchRequest{GroupID: k.cfg.Group, Topics: map[string][]int{}}
	for name := range k.startHW {
		if slices.Contains(mine, name) {
			continue
		}
		i := strings.LastIndexByte(name, '-')
		p, _ := strconv.Atoi(name[i+1:])
		req.Topics[name[:i]] = append(req.Topics[name[:i]], p)
	}
	if len(req.Topics) == 0 {
		return nil, nil, nil
	}
	c, done := k.client()
	defer done()
	res, err := c.OffsetFetch(ctx, req)
	if err == nil && res.Error != nil {
		err = res.Error
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read the committed offsets of group %s: %w", k.cfg.Group, err)
	}
	offsets := map[string]int64{}
	for topic, ps := range res.Topics {
		for _, p := range ps {
			if p.Error == nil {
				offsets[KafkaPartitionName(topic, p.Partition)] = p.CommittedOffset
			}
		}
	}
	for name := range k.startHW {
		if slices.Contains(mine, name) {
			continue
		}
		off, ok := offsets[name]
		if !ok {
			off = -1
		}
		// A new group starting at the latest offset exports nothing of
		// what came before: there is nothing to wait for.
		if k.startHW[name] <= 0 || off >= k.startHW[name] || (off < 0 && k.cfg.StartAt == "latest") {
			continue
		}
		left = append(left, name)
	}
	slices.Sort(left)
	for _, name := range left {
		committed = append(committed, offsets[name])
	}
	return left, committed, nil
}

// awaitOthers waits, once every partition of mine is read up to its start
// watermark, until the group has every other partition durable, or the
// generation ends (the partitions left may come to this instance), or
// DrainTimeout passes without progress.
func (k *Kafka) awaitOthers(ctx context.Context, mine []string, genID int32, genDone <-chan struct{}) drainEnd {
	tick := time.NewTicker(drainPoll)
	defer tick.Stop()
	checkpointed := false
	for {
		left, committed, err := k.undrained(ctx, mine)
		switch {
		case err != nil && ctx.Err() != nil:
			return drainFailed
		case err != nil:
			k.log.Warn("kafka drain: could not check the other members' partitions; trying again", "group", k.cfg.Group, "error", err)
		case len(left) == 0:
			return drainComplete
		case !checkpointed && len(mine) > 0:
			// The members holding the others may be draining too, and
			// waiting for this instance's partitions as it waits for
			// theirs: make them durable and committed in the group
			// first, or both would wait until the timeout.
			checkpointed = true
			if end, ok := k.checkpointDrained(ctx, genID, genDone); !ok {
				return end
			}
			continue
		}
		if err == nil {
			if key := fmt.Sprint(left, committed); key != k.waitKey {
				// a new wait, or progress on the partitions left
				if k.waitKey == "" {
					k.log.Info("kafka drain: this instance's partitions are read; waiting for the group to export the others, or for them to come here",
						"group", k.cfg.Group, "partitions", left, "timeout", k.cfg.DrainTimeout)
				}
				k.waitKey, k.waitSince, k.waitLeft = key, time.Now(), left
			}
		} else if k.waitSince.IsZero() {
			k.waitSince = time.Now()
		}
		if k.cfg.DrainTimeout > 0 && time.Since(k.waitSince) >= k.cfg.DrainTimeout {
			k.emit(ctx, kafkaEvent{err: fmt.Errorf("kafka: drain of group %s incomplete: partitions %s are not exported up to the high watermark seen at the start, and did not come to this instance within %s (another member holds them: one that crashed keeps them until --kafka-session-timeout passes); run again, or raise --kafka-drain-timeout: %w",
				k.cfg.Group, strings.Join(k.waitLeft, ", "), k.cfg.DrainTimeout, ErrDrainIncomplete)})
			return drainFailed
		}
		select {
		case <-tick.C:
		case <-genDone:
			return drainRebalanced
		case <-ctx.Done():
			return drainFailed
		}
	}
}

// checkpointDrained asks the pipeline to checkpoint this instance's
// partitions, read up to their watermarks, and waits for it; ok is false
// when the drain must end as end instead.
func (k *Kafka) checkpointDrained(ctx context.Context, genID int32, genDone <-chan struct{}) (end drainEnd, ok bool) {
	done := make(chan error, 1)
	if !k.emit(ctx, kafkaEvent{ctl: &Control{Checkpoint: done}, gen: genID}) {
		return drainFailed, false
	}
	select {
	case err := <-done:
		if err != nil {
			return drainFailed, false // the pipeline fails the run with it
		}
		return drainComplete, true
	case <-genDone:
		return drainRebalanced, false
	case <-ctx.Done():
		return drainFailed, false
	}
}
