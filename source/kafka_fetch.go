package source

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/segmentio/kafka-go"
)

// partitionFetcher reads one topic partition from its leader through a
// kafka.Conn of its own, one fetch response at a time.
//
// kafka.Reader does the same on a goroutine of its own and hands every
// message over a channel, setting a socket deadline and updating a dozen
// statistics per message; on a busy partition that was a fifth of the
// exporter's CPU beside decoding and encoding. Here the messages of a
// fetch go to the caller in one slice, and the reconnection rules are
// kafka.Reader's (see next), except that records deleted by retention
// before they were read are reported instead of skipped in silence.
type partitionFetcher struct {
	dialer    *kafka.Dialer
	brokers   []string
	topic     string
	partition int
	name      string
	minBytes  int
	maxBytes  int
	maxWait   time.Duration
	log       *slog.Logger

	conn *kafka.Conn
	// readTimeout bounds the wait for the next message of a fetch
	// response under way; zero means messageReadTimeout.
	readTimeout time.Duration
	// failures counts consecutive failed connects or fetches; a fetch
	// that returns anything resets it.
	failures int
	// values reads message values off the socket (kafka.Batch.Read, no
	// allocation per message); each is then copied into the arena. A
	// value larger than it ends the fetch (kafka-go gives the batch up,
	// rolling its offset back) and drops the connection: the next fetch
	// reads that message whole with ReadMessage (wholeNext) and grows
	// values to fit such values, up to valuesMaxBytes.
	values    []byte
	wholeNext bool
	// arena holds the values handed out, one after the other; a full
	// one is left to the values in it and a new one made. What is in it
	// is never written again, so the values are Owned, and a value kept
	// long keeps at most arenaBytes alive.
	arena []byte
}

const (
	// fetchFailuresAllowed is how many connects or fetches in a row may
	// fail (broker restarting, leader moving) before the error reaches
	// the pipeline, which fails the run: a supervisor restarts it.
	fetchFailuresAllowed = 8
	// messageReadTimeout bounds the wait for the next message of a fetch
	// response already under way, as kafka.Reader's ReadBatchTimeout.
	messageReadTimeout = 10 * time.Second
	// deadlineEvery is how many messages share one socket deadline.
	deadlineEvery = 64
	// valuesBufferBytes is the size of a fetcher's value buffer until a
	// larger value comes, and valuesMaxBytes the most it grows to: a
	// value larger than that costs a fetch of its own every time.
	valuesBufferBytes = 16 << 10
	valuesMaxBytes    = 1 << 20
	// arenaBytes is the size of an arena (partitionFetcher.arena): one
	// allocation for about a hundred records of a few hundred bytes.
	arenaBytes = 32 << 10
)

// errRetention reports records that the broker deleted before the
// exporter read them; next returns it once and then goes on from the
// first record the broker still has.
type errRetention struct {
	partition   string
	from, first int64
}

func (e *errRetention) Error() string {
	return fmt.Sprintf("kafka %s: records %d to %d were deleted by the topic's retention before they were exported; "+
		"going on from offset %d (raise retention.ms or run the exporter more often)", e.partition, e.from, e.first-1, e.first)
}

// close drops the connection; the next fetch connects again.
func (f *partitionFetcher) close() {
	if f.conn != nil {
		f.conn.Close()
		f.conn = nil
	}
}

// connect dials the partition's leader through the first broker that
// answers.
func (f *partitionFetcher) connect(ctx context.Context) error {
	var err error
	for _, b := range f.brokers {
		var c *kafka.Conn
		if c, err = f.dialer.DialLeader(ctx, "tcp", b, f.topic, f.partition); err == nil {
			f.conn = c
			return nil
		}
	}
	return err
}

// resolve turns kafka.FirstOffset and kafka.LastOffset (a partition
// without a committed offset) into the partition's first or next offset,
// and reports an offset that retention has deleted since it was committed
// as an *errRetention.
func (f *partitionFetcher) resolve(ctx context.Context, offset int64) (int64, error) {
	for {
		first, last, err := f.offsets(ctx)
		if err == nil {
			switch {
			case offset == kafka.FirstOffset:
				return first, nil
			case offset == kafka.LastOffset:
				return last, nil
			case offset < first:
				return first, &errRetention{partition: f.name, from: offset, first: first}
			}
			return offset, nil
		}
		if err := f.failed(ctx, "read the partition's offsets", offset, err); err != nil {
			return offset, err
		}
		if err := f.pause(ctx); err != nil {
			return offset, err
		}
	}
}

// offsets reads the partition's first offset and the offset its next
// record will get.
func (f *partitionFetcher) offsets(ctx context.Context) (first, last int64, err error) {
	if f.conn == nil {
		if err := f.connect(ctx); err != nil {
			return 0, 0, err
		}
	}
	f.conn.SetDeadline(time.Now().Add(messageReadTimeout))
	first, last, err = f.conn.ReadOffsets()
	if f.conn != nil {
		f.conn.SetDeadline(time.Time{})
	}
	return first, last, err
}

// pause waits before another attempt after failures, longer after each.
func (f *partitionFetcher) pause(ctx context.Context) error {
	if f.failures == 0 {
		return nil
	}
	backoff := min(time.Duration(1<<min(f.failures, 6))*50*time.Millisecond, 2*time.Second)
	select {
	case <-time.After(backoff/2 + rand.N(backoff/2)):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// next reads one fetch response starting at offset and hands its
// records to deliver in slices of at most maxEventMessages, each slice
// its own, as they come off the socket: at most one slice per partition
// is held here, however large the response. It returns the offset to
// ask for next: after the last record delivered, or offset itself when
// nothing arrived within MaxWait, or after a failure that a new
// connection may fix; after an *errRetention, the error's first. A
// deliver that returns false (the generation ended) stops the fetch.
func (f *partitionFetcher) next(ctx context.Context, offset int64, deliver func([]Message) bool) (int64, error) {
	if err := f.pause(ctx); err != nil {
		return offset, err
	}
	if f.conn == nil {
		if err := f.connect(ctx); err != nil {
			return offset, f.failed(ctx, "connect to the leader", offset, err)
		}
	}
	if _, err := f.conn.Seek(offset, kafka.SeekAbsolute|kafka.SeekDontCheck); err != nil {
		return offset, f.failed(ctx, "seek", offset, err)
	}
	f.conn.SetReadDeadline(time.Now().Add(f.maxWait))
	batch := f.conn.ReadBatchWith(kafka.ReadBatchConfig{MinBytes: f.minBytes, MaxBytes: f.maxBytes})
	hw := batch.HighWaterMark()
	next := offset
	var (
		chunk   []Message
		stopped bool
		short   bool // a value larger than f.values ended the fetch
	)
	for i := 0; ; i++ {
		if i%deadlineEvery == 0 {
			f.conn.SetReadDeadline(time.Now().Add(cmp.Or(f.readTimeout, messageReadTimeout)))
		}
		value, at, own, err := f.read(batch, offset)
		if err != nil {
			short = errors.Is(err, io.ErrShortBuffer)
			break
		}
		if chunk == nil {
			chunk = make([]Message, 0, maxEventMessages)
		}
		if value != nil && !own {
			value = f.keep(value)
		}
		chunk = append(chunk, Message{Value: value, Owned: true, Partition: f.name, Offset: at, Origin: f.name, Sep: '@',
			Size: int64(len(value)), Lag: max(hw-at-1, 0)})
		next = at + 1
		if len(chunk) == maxEventMessages {
			if stopped = !deliver(chunk); stopped {
				break
			}
			chunk, i = nil, -1 // the wait in deliver does not count against the socket's deadline
		}
	}
	if len(chunk) > 0 && !stopped {
		stopped = !deliver(chunk)
	}
	if bo := batch.Offset(); !stopped && bo > next {
		// The batch ended in records that compaction removed: kafka-go
		// moves its offset past them with no message to say so, and
		// asking for the same offset again would return the same batch
		// for ever.
		next = bo
	}
	if short {
		// Closing the batch would read the rest of the response, up to
		// MaxBytes, under a deadline set up to 64 records ago, and keep
		// the connection if that ran out midway: the next fetch would
		// read the old response's bytes as its own. The next fetch, which
		// reads the large value whole, connects again instead.
		f.conn.Close()
	}
	err := batch.Close()
	if short {
		f.close()
		err = nil
	}
	if f.conn != nil {
		f.conn.SetReadDeadline(time.Time{})
	}
	if next > offset {
		f.failures = 0
	}
	switch {
	case stopped:
		return next, ctx.Err()
	case err == nil, errors.Is(err, io.EOF):
		return next, nil
	case errors.Is(err, kafka.RequestTimedOut):
		// the broker's own wait ran out: ask again
		return next, nil
	case errors.Is(err, kafka.OffsetOutOfRange):
		if next > offset {
			return next, nil
		}
		return next, f.outOfRange(ctx, offset)
	case errors.Is(err, context.Canceled):
		return next, err
	}
	var kerr kafka.Error
	if errors.As(err, &kerr) && !kerr.Temporary() && !errors.Is(err, kafka.UnknownTopicOrPartition) {
		// Not something a new connection fixes (authorization, a record
		// the client cannot decode): the run fails with it.
		f.close()
		return next, fmt.Errorf("fetch at offset %d: %w", next, err)
	}
	// The leader moved, the topic is being re-created, or the connection
	// broke: connect again, to whichever broker leads the partition now.
	return next, f.failed(ctx, "fetch", next, err)
}

// failed counts a failed connect or fetch and returns nil while more may
// fail, so that the caller simply asks again.
func (f *partitionFetcher) failed(ctx context.Context, what string, offset int64, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	f.close()
	f.failures++
	if f.failures > fetchFailuresAllowed {
		return fmt.Errorf("%s at offset %d failed %d times in a row, last: %w", what, offset, f.failures, err)
	}
	f.log.Warn("kafka fetch failed; retrying", "partition", f.name, "offset", offset, "attempt", f.failures, "error", err)
	return nil
}

// outOfRange handles a fetch at an offset the broker does not hold: past
// the end (records not yet replicated to a new leader: ask again later),
// or before the start (deleted by retention: reported, then skipped).
func (f *partitionFetcher) outOfRange(ctx context.Context, offset int64) error {
	first, last, err := f.offsets(ctx)
	if err != nil {
		return f.failed(ctx, "read the partition's offsets", offset, err)
	}
	if offset < first {
		return &errRetention{partition: f.name, from: offset, first: first}
	}
	if offset >= last {
		return f.failed(ctx, "fetch past the partition's end", offset, kafka.OffsetOutOfRange)
	}
	return nil
}

// keep copies value into the arena and returns the copy.
func (f *partitionFetcher) keep(value []byte) []byte {
	if len(f.arena)+len(value) > cap(f.arena) {
		if len(value) > arenaBytes/4 {
			return bytes.Clone(value) // would leave most of an arena unused
		}
		f.arena = make([]byte, 0, arenaBytes)
	}
	n := len(f.arena)
	f.arena = append(f.arena, value...)
	return f.arena[n:len(f.arena):len(f.arena)]
}

// read reads the next message of batch at or past from: its value and
// offset. A value read whole is the caller's (own); any other stays valid
// only until the next read. The broker answers with whole record
// batches, so a fetch from inside one starts with the records before from
// (kafka-go's ReadMessage skips them; its Read does not). After a value
// too large for f.values, it reads the next message whole (and grows
// f.values to fit such values, up to valuesMaxBytes); the error is then
// the batch's io.ErrShortBuffer.
func (f *partitionFetcher) read(batch *kafka.Batch, from int64) (value []byte, at int64, own bool, err error) {
	if f.wholeNext {
		m, err := batch.ReadMessage()
		if err != nil {
			return nil, 0, false, err
		}
		f.wholeNext = false
		if n := len(m.Value) + len(m.Value)/4; n > len(f.values) && n <= valuesMaxBytes {
			f.values = make([]byte, n)
		}
		return m.Value, m.Offset, true, nil
	}
	if f.values == nil {
		f.values = make([]byte, valuesBufferBytes)
	}
	for {
		n, err := batch.Read(f.values)
		if errors.Is(err, io.ErrShortBuffer) {
			f.wholeNext = true
		}
		if err != nil {
			return nil, 0, false, err
		}
		at := batch.Offset() - 1
		switch {
		case at < from:
			continue
		case n == 0:
			// A null value (a tombstone) and an empty one read alike
			// here; neither is a record.
			return nil, at, false, nil
		}
		return f.values[:n], at, false, nil
	}
}
