package source

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// partitionFetcher reads one topic partition from its leader through a
// connection of its own, one fetch response at a time.
//
// kafka.Reader does the same on a goroutine of its own and hands every
// message over a channel, setting a socket deadline and updating a dozen
// statistics per message; on a busy partition that was a fifth of the
// exporter's CPU beside decoding and encoding. kafka-go's Conn reads
// fetches without that cost, but neither it nor kafka.Reader filters the
// records of aborted transactions or leaves out transaction markers: it
// drops the response's list of aborted transactions and each batch's
// producer. So kafka-go dials the leader (TLS, SASL, the API versions),
// and the fetches are sent and read on the connection it made with kmsg,
// franz-go's protocol package (see batchWalker). The messages of a fetch
// go to the caller in slices, and the reconnection rules are
// kafka.Reader's (see next), except that records deleted by retention
// before they were read are reported instead of skipped in silence.
type partitionFetcher struct {
	dialer    *kafka.Dialer
	conns     *connCloser // dialer's: it hands over the connection under conn
	brokers   []string
	topic     string
	partition int
	name      string
	minBytes  int
	maxBytes  int
	maxWait   time.Duration
	// readUncommitted exports the records of open and aborted
	// transactions too (Kafka's read_uncommitted isolation).
	readUncommitted bool
	// lastStable reads the partition's last stable offset, where a
	// partition that starts at the latest offset starts when reading
	// committed (as a Kafka consumer does): the committed records of a
	// transaction open at that moment are then read.
	lastStable func(context.Context) (int64, error)
	clientID   string
	log        *slog.Logger

	conn *kafka.Conn
	// wire is the connection under conn, past TLS and SASL, on which the
	// fetches go; fetchVersion is the Fetch API version both ends speak.
	wire         *trackedConn
	fetchVersion int16
	correlation  int32
	format       *kmsg.RequestFormatter // with the client id
	request      []byte                 // reused
	response     []byte                 // the last fetch response, reused
	walker       batchWalker
	// readTimeout bounds reading a response once the broker's wait is
	// over; zero means messageReadTimeout.
	readTimeout time.Duration
	// throttledUntil is when the broker's quota lets the next fetch go.
	throttledUntil time.Time
	// failures counts consecutive failed connects or fetches; a fetch
	// that returns anything resets it.
	failures int
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
	// messageReadTimeout bounds reading a fetch response once the
	// broker's wait is over, as kafka.Reader's ReadBatchTimeout.
	messageReadTimeout = 10 * time.Second
	// responseMaxBytes bounds a fetch response, beside four times
	// MaxBytes: a record batch larger than MaxBytes comes whole, up to
	// the topic's max.message.bytes.
	responseMaxBytes = 256 << 20
	// fetchAPIKey is the Fetch API's key; minFetchVersion is the first
	// with isolation levels and the list of aborted transactions (Kafka
	// 0.11), maxFetchVersion the last before flexible versions, which
	// need nothing these fetches use.
	fetchAPIKey     = 1
	minFetchVersion = 4
	maxFetchVersion = 11
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
		f.conn, f.wire = nil, nil
	}
}

// connect dials the partition's leader through the first broker that
// answers, and agrees on the Fetch API's version with it.
func (f *partitionFetcher) connect(ctx context.Context) error {
	var err error
	for _, b := range f.brokers {
		var c *kafka.Conn
		if c, err = f.dialer.DialLeader(ctx, "tcp", b, f.topic, f.partition); err != nil {
			continue
		}
		f.conn, f.wire = c, f.conns.lastDialed()
		f.format = kmsg.NewRequestFormatter(kmsg.FormatterClientID(f.clientID))
		if f.fetchVersion, err = f.negotiate(); err != nil {
			f.close()
			return err
		}
		return nil
	}
	return err
}

// negotiate returns the highest Fetch API version that the leader and
// these fetches both speak.
func (f *partitionFetcher) negotiate() (int16, error) {
	if f.wire == nil {
		return 0, errors.New("the connection to the leader was not made through the fetcher's dialer")
	}
	f.conn.SetDeadline(time.Now().Add(messageReadTimeout))
	defer f.conn.SetDeadline(time.Time{})
	versions, err := f.conn.ApiVersions()
	if err != nil {
		return 0, fmt.Errorf("read the broker's API versions: %w", err)
	}
	for _, v := range versions {
		if v.ApiKey != fetchAPIKey {
			continue
		}
		if top := min(v.MaxVersion, maxFetchVersion); top >= max(v.MinVersion, minFetchVersion) {
			return top, nil
		}
		return 0, fmt.Errorf("the broker speaks Fetch versions %d to %d; the exporter needs one of %d to %d (Kafka 0.11 or later)",
			v.MinVersion, v.MaxVersion, minFetchVersion, maxFetchVersion)
	}
	return 0, errors.New("the broker does not list the Fetch API among its versions")
}

// resolve turns kafka.FirstOffset and kafka.LastOffset (a partition
// without a committed offset) into the partition's first or next offset,
// and reports an offset that retention has deleted since it was committed
// as an *errRetention.
func (f *partitionFetcher) resolve(ctx context.Context, offset int64) (int64, error) {
	for {
		first, last, err := f.offsets(ctx)
		if err == nil && offset == kafka.LastOffset && f.lastStable != nil {
			last, err = f.lastStable(ctx)
		}
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
// its own. It returns the offset to ask for next: after the last record
// delivered (or the last offset of batches holding nothing to export),
// or offset itself when nothing arrived within MaxWait, or after a
// failure that a new connection may fix; after an *errRetention, the
// error's first. A deliver that returns false (the generation ended)
// stops the fetch.
//
// A stretch of offsets that holds nothing to export (a transaction's
// marker, an aborted transaction's records) is delivered as a message
// with Skip set, so that the pipeline counts it as read: a partition
// whose last records are such must still be checkpointed up to its end.
func (f *partitionFetcher) next(ctx context.Context, offset int64, deliver func([]Message) bool) (int64, error) {
	if err := f.pause(ctx); err != nil {
		return offset, err
	}
	if f.conn == nil {
		if err := f.connect(ctx); err != nil {
			return offset, f.failed(ctx, "connect to the leader", offset, err)
		}
	}
	if err := f.waitThrottle(ctx); err != nil {
		return offset, err
	}
	p, err := f.fetch(offset)
	if err != nil {
		if ctx.Err() != nil {
			return offset, ctx.Err()
		}
		return offset, f.failed(ctx, "fetch", offset, err)
	}
	if p.ErrorCode != 0 {
		return offset, f.fetchError(ctx, offset, kafka.Error(p.ErrorCode))
	}
	hw := p.HighWatermark
	if !f.readUncommitted && p.LastStableOffset >= 0 {
		hw = p.LastStableOffset // what is past it cannot be read yet
	}
	var (
		chunk   []Message
		stopped bool
	)
	next, stopped, err := f.walker.walk(p.RecordBatches, offset, p.AbortedTransactions, !f.readUncommitted, func(value []byte, at int64, skip bool) bool {
		if chunk == nil {
			chunk = make([]Message, 0, maxEventMessages)
		}
		if value != nil {
			value = f.keep(value)
		}
		chunk = append(chunk, Message{Value: value, Owned: true, Skip: skip, Partition: f.name, Offset: at, Origin: f.name, Sep: '@',
			Size: int64(len(value)), Lag: max(hw-at-1, 0)})
		if len(chunk) < maxEventMessages {
			return true
		}
		full := chunk
		chunk = nil
		return deliver(full)
	})
	if len(chunk) > 0 && !stopped {
		stopped = !deliver(chunk)
	}
	if next > offset {
		f.failures = 0
	}
	switch {
	case stopped:
		return next, ctx.Err()
	case errors.Is(err, errOldFormat):
		f.close()
		return next, fmt.Errorf("fetch at offset %d: %w", next, err)
	case err != nil:
		// A batch that cannot be read (damaged, an unknown codec): what
		// came before it was delivered; the run fails if fetching it
		// keeps failing.
		return next, f.failed(ctx, "read the fetched records", next, err)
	case next == offset && len(p.RecordBatches) > 0:
		// Bytes, but no whole batch at or past offset: asked again at
		// once, the broker would answer the same for ever.
		return next, f.failed(ctx, "read the fetched records", next,
			fmt.Errorf("the response holds %d bytes of records but no whole record batch from offset %d on", len(p.RecordBatches), offset))
	}
	return next, nil
}

// waitThrottle waits out the time the broker asked the last fetch's
// client to hold back (its quota): from Fetch version 8 on it answers at
// once and then stops reading the connection for that long, so a fetch
// sent meanwhile would wait on the socket and could time out.
func (f *partitionFetcher) waitThrottle(ctx context.Context) error {
	wait := time.Until(f.throttledUntil)
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// fetch sends one fetch request for the partition at offset on the wire
// and reads its response.
func (f *partitionFetcher) fetch(offset int64) (*kmsg.FetchResponseTopicPartition, error) {
	req := kmsg.NewPtrFetchRequest()
	req.Version = f.fetchVersion
	req.ReplicaID = -1
	req.MaxWaitMillis = int32(f.maxWait / time.Millisecond)
	req.MinBytes = int32(f.minBytes)
	req.MaxBytes = int32(f.maxBytes)
	if !f.readUncommitted {
		req.IsolationLevel = 1
	}
	req.SessionID, req.SessionEpoch = 0, -1 // a full fetch, no session
	part := kmsg.NewFetchRequestTopicPartition()
	part.Partition = int32(f.partition)
	part.FetchOffset = offset
	part.PartitionMaxBytes = int32(f.maxBytes)
	topic := kmsg.NewFetchRequestTopic()
	topic.Topic = f.topic
	topic.Partitions = []kmsg.FetchRequestTopicPartition{part}
	req.Topics = []kmsg.FetchRequestTopic{topic}

	f.correlation++
	f.request = f.format.AppendRequest(f.request[:0], req, f.correlation)
	f.wire.SetWriteDeadline(time.Now().Add(messageReadTimeout))
	if _, err := f.wire.Conn.Write(f.request); err != nil {
		return nil, err
	}
	defer f.wire.SetDeadline(time.Time{})
	stall := cmp.Or(f.readTimeout, messageReadTimeout)
	var head [8]byte // the response's length, then its correlation id
	if err := f.read(head[:], f.maxWait+stall, stall); err != nil {
		return nil, err
	}
	size := int(int32(binary.BigEndian.Uint32(head[:4]))) - 4
	if id := int32(binary.BigEndian.Uint32(head[4:])); id != f.correlation || size < 0 {
		return nil, fmt.Errorf("the broker's response is not the answer to the fetch (correlation id %d, want %d)", id, f.correlation)
	}
	// A response may pass MaxBytes by one record batch larger than it
	// (the broker sends the first one whole), not by gigabytes.
	if limit := max(4*f.maxBytes, responseMaxBytes); size > limit {
		return nil, fmt.Errorf("the broker's fetch response is %d bytes, more than the %d a fetch of at most %d may take", size, limit, f.maxBytes)
	}
	if cap(f.response) < size {
		f.response = make([]byte, size)
	}
	f.response = f.response[:size]
	if err := f.read(f.response, stall, stall); err != nil {
		return nil, err
	}
	res := kmsg.NewPtrFetchResponse()
	res.Version = f.fetchVersion
	if err := res.UnsafeReadFrom(f.response); err != nil {
		return nil, fmt.Errorf("read the fetch response: %w", err)
	}
	f.throttledUntil = time.Now().Add(time.Duration(res.ThrottleMillis) * time.Millisecond)
	if res.ErrorCode != 0 {
		return nil, kafka.Error(res.ErrorCode)
	}
	for i := range res.Topics {
		for j := range res.Topics[i].Partitions {
			if p := &res.Topics[i].Partitions[j]; res.Topics[i].Topic == f.topic && p.Partition == int32(f.partition) {
				return p, nil
			}
		}
	}
	return nil, fmt.Errorf("the fetch response has no records for partition %s", f.name)
}

// read fills p from the wire. The first read may wait up to first (the
// broker holds a fetch up to MaxWait for records to come); each later
// one up to stall: a large response on a slow link takes as long as it
// takes, a link that stops does not.
func (f *partitionFetcher) read(p []byte, first, stall time.Duration) error {
	wait := first
	for n := 0; n < len(p); {
		f.wire.SetReadDeadline(time.Now().Add(wait))
		m, err := f.wire.Read(p[n:])
		n += m
		if err != nil && (n < len(p) || !errors.Is(err, io.EOF)) {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		wait = stall
	}
	return nil
}

// fetchError handles the error a fetch response gives for the partition.
func (f *partitionFetcher) fetchError(ctx context.Context, offset int64, err kafka.Error) error {
	switch {
	case errors.Is(err, kafka.RequestTimedOut):
		return nil // the broker's own wait ran out: ask again
	case errors.Is(err, kafka.OffsetOutOfRange):
		return f.outOfRange(ctx, offset)
	case !err.Temporary() && !errors.Is(err, kafka.UnknownTopicOrPartition):
		// Not something a new connection fixes (authorization, say): the
		// run fails with it.
		f.close()
		return fmt.Errorf("fetch at offset %d: %w", offset, err)
	}
	// The leader moved, the topic is being re-created: connect again, to
	// whichever broker leads the partition now.
	return f.failed(ctx, "fetch", offset, err)
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
