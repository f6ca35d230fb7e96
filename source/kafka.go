package source

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
)

// ErrIdle is returned by Next when nothing arrived for a while, so that
// the caller can run time-based work (flushes on age) on a quiet topic.
var ErrIdle = errors.New("no message for a while")

// Control tells the pipeline about partition ownership. Exactly one of
// Resume and Done is set.
type Control struct {
	// Partitions were just assigned to this instance. The pipeline replies
	// on Resume with the next offset to read for each (a missing entry
	// means the group's committed offset, else the configured start).
	Partitions []string
	Resume     chan<- map[string]int64
	// Done is set when this instance is about to give up all its
	// partitions (rebalance): the pipeline flushes and checkpoints them,
	// then replies on Done.
	Done chan<- error
	// Checkpoint is set when a drain (Once) has read its partitions and
	// waits for the group's others: the pipeline flushes and checkpoints
	// them (acknowledging their offsets to the group), keeps them, and
	// replies on Checkpoint. Another member draining beside this one may
	// be waiting for exactly those offsets.
	Checkpoint chan<- error
}

// KafkaConfig configures a Kafka source.
type KafkaConfig struct {
	Brokers []string
	// Topics are consumed when they exist; one created later is picked up
	// at the next metadata refresh.
	Topics []string
	// TopicPattern, a Go regular expression (RE2 syntax) matched against
	// the whole topic name, subscribes every topic it matches, now and
	// later, with or instead of Topics. It never matches an internal
	// topic (a name starting with __).
	TopicPattern string
	// MetadataRefresh is how often the topics and their partition counts
	// are read again; a change makes the group rejoin with the new set.
	// Default 30s; Once mode reads them once, at the start.
	MetadataRefresh time.Duration
	Group           string // consumer group id
	ClientID        string // default "lakehouse-exporter"
	// StartAt is where a partition without committed offset starts:
	// "earliest" (default) or "latest".
	StartAt  string
	MinBytes int           // default 1
	MaxBytes int           // default 16 MiB
	MaxWait  time.Duration // longest a fetch waits for MinBytes; default 500ms
	// ReadUncommitted reads as Kafka's read_uncommitted isolation: the
	// records of transactions still open, and of aborted ones, are
	// exported too. By default (read_committed) a partition is read up
	// to its first open transaction, and aborted transactions are left
	// out. Transaction markers are never exported.
	ReadUncommitted bool
	// RebalanceTimeout bounds how long a rebalance waits for this instance
	// to flush and checkpoint the partitions it gives up; default 60s.
	RebalanceTimeout time.Duration
	// SessionTimeout is how long the group waits for a silent member
	// (a crashed instance) before giving its partitions away; default 10s.
	SessionTimeout time.Duration
	// Dialer carries TLS and SASL settings; nil means plain TCP.
	Dialer *kafka.Dialer
	// Once stops each partition at the high watermark seen when the drain
	// started; Next returns io.EOF when every partition of the
	// subscription is drained: those assigned here read, the others
	// committed by the group (see DrainTimeout and kafka_drain.go).
	Once bool
	// JoinTimeout, in Once mode, makes Next fail once joining the group
	// has kept failing this long (0: retry forever, as a continuous
	// consumer always does): a drain must not wait forever for brokers
	// that are not there.
	JoinTimeout time.Duration
	// DrainTimeout, in Once mode, bounds how long a drain that has read
	// its own partitions waits for the group to have the others durable
	// (another member holds them: a crashed one until its session times
	// out); it restarts when those partitions make progress. Then Next
	// fails with ErrDrainIncomplete naming them. 0 waits forever.
	DrainTimeout time.Duration
	Logger       *slog.Logger
}

// Validate reports every problem at once. kafka-go panics on some bad
// settings, so nothing is built before this passes.
func (c *KafkaConfig) Validate() error { return c.validate(true) }

// validate is Validate, with the check that something is subscribed left
// out for a URL whose topics may come from a pattern given apart.
func (c *KafkaConfig) validate(requireTopics bool) error {
	var p []string
	if len(c.Brokers) == 0 {
		p = append(p, "no brokers (want kafka://HOST:PORT[,HOST:PORT]/TOPIC)")
	}
	for _, b := range c.Brokers {
		if i := strings.LastIndexByte(b, '@'); i >= 0 {
			// Not quoted whole: before the @ are a user and a password.
			p = append(p, fmt.Sprintf("broker ***@%s: the URL does not carry credentials; give them as --kafka-sasl with --kafka-username and EXPORTER_KAFKA_PASSWORD", b[i+1:]))
			continue
		}
		if _, port, err := net.SplitHostPort(b); err != nil || port == "" {
			p = append(p, fmt.Sprintf("broker %q is not HOST:PORT", b))
		}
	}
	if requireTopics && len(c.Topics) == 0 && c.TopicPattern == "" {
		p = append(p, "no topic (want kafka://HOST:PORT/TOPIC[,TOPIC], or a topic pattern)")
	}
	if c.TopicPattern != "" {
		if _, err := compileTopicPattern(c.TopicPattern); err != nil {
			p = append(p, err.Error())
		}
	}
	if c.MetadataRefresh < 0 {
		p = append(p, "metadata refresh interval is negative")
	}
	if c.Group == "" {
		p = append(p, "no consumer group (add ?group=NAME)")
	}
	switch c.StartAt {
	case "", "earliest", "latest":
	default:
		p = append(p, fmt.Sprintf("start position %q is not earliest or latest", c.StartAt))
	}
	if c.MinBytes < 0 || c.MaxBytes < 0 || (c.MaxBytes > 0 && c.MinBytes > c.MaxBytes) {
		p = append(p, "fetch sizes: want 0 <= min bytes <= max bytes")
	}
	if len(p) > 0 {
		return errors.New("kafka source: " + strings.Join(p, "; "))
	}
	return nil
}

// ParseKafkaURL reads kafka://HOST:PORT[,HOST:PORT]/[TOPIC[,TOPIC]]?group=NAME[&start=earliest|latest][&client_id=ID].
// The topic list may be empty when the caller sets TopicPattern; Validate
// checks that one of them is there.
func ParseKafkaURL(spec string) (KafkaConfig, error) {
	rest, ok := strings.CutPrefix(spec, "kafka://")
	if !ok {
		return KafkaConfig{}, fmt.Errorf("%q is not a kafka:// URL", spec)
	}
	rest, query, _ := strings.Cut(rest, "?")
	hosts, topics, _ := strings.Cut(rest, "/")
	c := KafkaConfig{}
	for _, h := range strings.Split(hosts, ",") {
		if h != "" {
			c.Brokers = append(c.Brokers, h)
		}
	}
	for _, t := range strings.Split(topics, ",") {
		if t != "" {
			c.Topics = append(c.Topics, t)
		}
	}
	for _, kv := range strings.Split(query, "&") {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "group":
			c.Group = v
		case "start":
			c.StartAt = v
		case "client_id":
			c.ClientID = v
		case "":
		default:
			return c, fmt.Errorf("kafka URL: unknown parameter %q (known: group, start, client_id)", k)
		}
	}
	return c, c.validate(false)
}

// KafkaPartitionName is the partition name used in file names and
// checkpoints: TOPIC-PARTITION.
func KafkaPartitionName(topic string, partition int) string {
	return topic + "-" + strconv.Itoa(partition)
}

// kafkaEvent is a record when ctl, eof and err are all unset. The record
// travels by value: one allocation less per record.
type kafkaEvent struct {
	// msgs are consecutive records of one partition, at most
	// maxEventMessages: one channel send per fetch response, not per
	// record.
	msgs []Message
	ctl  *Control
	eof  bool
	err  error
	gen  int32 // generation of a message or control
}

// Kafka consumes topics in a consumer group. Offsets are never committed
// automatically: Ack commits what the caller says is durable.
type Kafka struct {
	cfg    KafkaConfig
	log    *slog.Logger
	topics topicMatcher
	// refresh asks the topic watcher to read the topics now.
	refresh chan struct{}
	events  chan kafkaEvent
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	mu  sync.Mutex
	gen *kafka.Generation
	// pending holds the records of the last event that Next has not
	// handed out yet.
	pending []Message
	// Once mode, touched by the run goroutine only: the high watermark of
	// every partition of the subscription when the drain started, and
	// what a drain that waits for other members' partitions last saw:
	// those partitions and their offsets (waitKey), since when.
	startHW map[string]int64
	// watermarks brings startHW, read while the group is joined; nil
	// once received.
	watermarks <-chan watermarksRead
	waitKey    string
	waitLeft   []string
	waitSince  time.Time

	// active is the generation whose messages Next hands out, -1 between
	// a revocation and the next assignment. A partition reader can still
	// queue a message after its generation ended; it must not reach the
	// pipeline after the pipeline committed and forgot that partition.
	active int32
}

// NewKafka joins the consumer group and starts consuming.
func NewKafka(cfg KafkaConfig) (*Kafka, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.ClientID == "" {
		cfg.ClientID = "lakehouse-exporter"
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = 16 << 20
	}
	if cfg.MinBytes == 0 {
		cfg.MinBytes = 1
	}
	if cfg.MaxWait == 0 {
		cfg.MaxWait = 500 * time.Millisecond
	}
	if cfg.RebalanceTimeout == 0 {
		cfg.RebalanceTimeout = 60 * time.Second
	}
	if cfg.SessionTimeout == 0 {
		cfg.SessionTimeout = 10 * time.Second
	}
	if cfg.MetadataRefresh == 0 {
		cfg.MetadataRefresh = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Dialer == nil {
		cfg.Dialer = &kafka.Dialer{Timeout: 10 * time.Second, DualStack: true}
	}
	cfg.Dialer.ClientID = cfg.ClientID
	topics, err := newTopicMatcher(cfg.Topics, cfg.TopicPattern)
	if err != nil {
		return nil, fmt.Errorf("kafka source: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	k := &Kafka{cfg: cfg, log: cfg.Logger, topics: topics, refresh: make(chan struct{}, 1),
		events: make(chan kafkaEvent, eventsQueued), cancel: cancel, active: -1}
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		k.run(ctx)
	}()
	return k, nil
}

// Next returns the next message or control event. It returns ErrIdle after
// a second without events, and io.EOF in Once mode when the drain is
// complete (see KafkaConfig.Once).
func (k *Kafka) Next(ctx context.Context) (*Message, error) {
	// Fast path: while the readers keep up, an event is already queued,
	// and the idle timer and the three-way select cost more than the
	// record itself. A cancelled ctx takes the slow path, so that it is
	// noticed as before.
	if len(k.pending) > 0 && ctx.Err() == nil {
		return k.pop(), nil
	}
	for ctx.Err() == nil {
		select {
		case ev := <-k.events:
			if m, ok, err := k.event(&ev); ok {
				return m, err
			}
			continue
		default:
		}
		break
	}
	t := time.NewTimer(time.Second)
	defer t.Stop()
	for {
		select {
		case ev := <-k.events:
			if m, ok, err := k.event(&ev); ok {
				return m, err
			}
		case <-t.C:
			return nil, ErrIdle
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// event turns an event into Next's result; ok is false for a record
// fetched by a generation that has ended, which Next skips.
func (k *Kafka) event(ev *kafkaEvent) (m *Message, ok bool, err error) {
	if ev.err != nil {
		return nil, true, ev.err
	}
	if ev.eof {
		return nil, true, errEOF
	}
	if ev.ctl != nil {
		if ev.ctl.Checkpoint != nil {
			// Of a generation that ended, it is moot: the rebalance's
			// Done checkpoints everything.
			return &Message{Control: ev.ctl}, ev.gen == k.active, nil
		}
		if ev.ctl.Resume != nil {
			k.active = ev.gen
		} else {
			k.active = -1
		}
		return &Message{Control: ev.ctl}, true, nil
	}
	if ev.gen != k.active || len(ev.msgs) == 0 {
		return nil, false, nil
	}
	k.pending = ev.msgs
	return k.pop(), true, nil
}

// pop hands out the next pending record. The pointer stays valid after
// the next call: each event's slice is its own.
func (k *Kafka) pop() *Message {
	m := &k.pending[0]
	k.pending = k.pending[1:]
	return m
}

// Ack commits offsets: offsets[partition] is the last offset that is
// durable, so the group resumes after it.
func (k *Kafka) Ack(ctx context.Context, offsets map[string]int64) error {
	k.mu.Lock()
	gen := k.gen
	k.mu.Unlock()
	if gen == nil || len(offsets) == 0 {
		return nil
	}
	commit := map[string]map[int]int64{}
	for name, off := range offsets {
		i := strings.LastIndexByte(name, '-')
		p, err := strconv.Atoi(name[i+1:])
		if i < 0 || err != nil {
			continue
		}
		topic := name[:i]
		if commit[topic] == nil {
			commit[topic] = map[int]int64{}
		}
		commit[topic][p] = off + 1
	}
	if err := gen.CommitOffsets(commit); err != nil {
		// The checkpoint in the sink is the truth; a failed commit only
		// means more records are read again and skipped.
		k.log.Warn("kafka offset commit failed; the sink checkpoint still holds", "error", err)
	}
	return nil
}

// Close leaves the group.
func (k *Kafka) Close() error {
	k.cancel()
	k.wg.Wait()
	return nil
}

func (k *Kafka) emit(ctx context.Context, ev kafkaEvent) bool {
	select {
	case k.events <- ev:
		return true
	case <-ctx.Done():
		return false
	}
}

// run subscribes to the topics that match, and again with the new set
// whenever it changes, until the source closes.
func (k *Kafka) run(ctx context.Context) {
	set, ok := k.firstTopics(ctx)
	for ok {
		if len(set) == 0 {
			if k.cfg.Once {
				k.log.Warn("no kafka topic matches the subscription; nothing to drain", "group", k.cfg.Group,
					"topics", k.cfg.Topics, "pattern", k.cfg.TopicPattern)
				k.emit(ctx, kafkaEvent{eof: true})
				return
			}
			k.log.Warn("no kafka topic matches the subscription yet; waiting for one", "group", k.cfg.Group,
				"topics", k.cfg.Topics, "pattern", k.cfg.TopicPattern, "refresh", k.cfg.MetadataRefresh)
			set = k.watchTopics(ctx, set)
			ok = set != nil
			continue
		}
		set, ok = k.subscribe(ctx, set)
	}
}

// subscribe consumes set in the group until the set changes, and returns
// the new one; ok is false when the source is done.
func (k *Kafka) subscribe(ctx context.Context, set topicSet) (next topicSet, ok bool) {
	start := kafka.FirstOffset
	if k.cfg.StartAt == "latest" {
		start = kafka.LastOffset
	}
	k.log.Info("kafka subscription", "group", k.cfg.Group, "topics", set.describe())
	if k.cfg.Once {
		// Read while the group is joined (a few round trips each, on the
		// way to a run's first record); the first generation waits for it.
		watermarks := make(chan watermarksRead, 1)
		go func() {
			hw, err := k.startWatermarks(ctx, set)
			watermarks <- watermarksRead{hw, err}
		}()
		k.watermarks = watermarks
	}
	cg, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{
		ID: k.cfg.Group, Brokers: k.cfg.Brokers, Topics: set.names(), Dialer: k.cfg.Dialer, StartOffset: start,
		RebalanceTimeout: k.cfg.RebalanceTimeout, HeartbeatInterval: time.Second, SessionTimeout: k.cfg.SessionTimeout,
		JoinGroupBackoff: 500 * time.Millisecond,
	})
	if err != nil {
		k.emit(ctx, kafkaEvent{err: fmt.Errorf("kafka consumer group %s: %w", k.cfg.Group, err)})
		return nil, false
	}
	defer func() {
		// Closing the group ends its generation as a rebalance does: the
		// pipeline flushes and checkpoints every partition it holds before
		// this member leaves, and only then does the next group join.
		cg.Close()
		k.mu.Lock()
		k.gen = nil
		k.mu.Unlock()
	}()
	changedCtx, changed := context.WithCancel(ctx)
	defer changed()
	var watcher sync.WaitGroup
	if !k.cfg.Once {
		// A drain takes what matches when it starts.
		watcher.Add(1)
		go func() {
			defer watcher.Done()
			next = k.watchTopics(changedCtx, set)
			changed()
		}()
	}
	more := k.generations(ctx, changedCtx, cg)
	changed()
	watcher.Wait()
	return next, more && next != nil && ctx.Err() == nil
}

// generations serves the group's generations one after another. It
// returns true when changed ends (the topics changed), false when the
// source is done.
func (k *Kafka) generations(ctx, changed context.Context, cg *kafka.ConsumerGroup) bool {
	var failingSince time.Time
	for {
		gen, err := cg.Next(changed)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, kafka.ErrGroupClosed) {
				return false
			}
			if changed.Err() != nil {
				return true
			}
			if werr := k.watermarksFailed(); werr != nil {
				// The brokers did not answer that either: say so now
				// rather than after the join's timeout.
				k.emit(ctx, kafkaEvent{err: werr})
				return false
			}
			if failingSince.IsZero() {
				failingSince = time.Now()
			}
			if k.joinTimedOut(failingSince) {
				k.emit(ctx, kafkaEvent{err: k.joinError(err)})
				return false
			}
			k.log.Warn("kafka group join failed; retrying", "group", k.cfg.Group, "error", err)
			select {
			case <-time.After(time.Second):
				continue
			case <-changed.Done():
				return ctx.Err() == nil
			}
		}
		failingSince = time.Time{}
		k.mu.Lock()
		k.gen = gen
		k.mu.Unlock()
		if !k.generation(ctx, gen, changed.Done()) {
			return false
		}
		if changed.Err() != nil {
			return ctx.Err() == nil
		}
	}
}

// joinTimedOut says whether joining has failed since failingSince for
// longer than a drain waits.
func (k *Kafka) joinTimedOut(failingSince time.Time) bool {
	return k.cfg.Once && k.cfg.JoinTimeout > 0 && time.Since(failingSince) >= k.cfg.JoinTimeout
}

func (k *Kafka) joinError(err error) error {
	return fmt.Errorf("kafka: could not join group %s at %s for %s: %w (check the brokers in --source and that they are reachable; --kafka-join-timeout sets how long to try)",
		k.cfg.Group, strings.Join(k.cfg.Brokers, ","), k.cfg.JoinTimeout, err)
}

// generation serves one group generation until it ends or changed is
// closed. It returns false when the source is closing.
func (k *Kafka) generation(ctx context.Context, gen *kafka.Generation, changed <-chan struct{}) bool {
	type assigned struct {
		topic string
		kafka.PartitionAssignment
		name string
	}
	var parts []assigned
	var names []string
	for topic, as := range gen.Assignments {
		for _, a := range as {
			n := KafkaPartitionName(topic, a.ID)
			parts = append(parts, assigned{topic, a, n})
			names = append(names, n)
		}
	}
	k.log.Info("kafka partitions assigned", "group", k.cfg.Group, "generation", gen.ID, "partitions", names)
	if len(names) == 0 {
		k.log.Warn("no kafka partitions assigned to this instance: the group's other members hold them all",
			"group", k.cfg.Group)
	}
	reply := make(chan map[string]int64, 1)
	if !k.emit(ctx, kafkaEvent{ctl: &Control{Partitions: names, Resume: reply}, gen: gen.ID}) {
		return false
	}
	var resume map[string]int64
	select {
	case resume = <-reply:
	case <-ctx.Done():
		return false
	}

	if k.cfg.Once {
		if err := k.awaitWatermarks(ctx); err != nil {
			if ctx.Err() == nil {
				k.emit(ctx, kafkaEvent{err: err})
			}
			return false
		}
	}
	var drained drainCount
	genDone := make(chan struct{})
	for _, p := range parts {
		start := p.Offset
		if off, ok := resume[p.name]; ok {
			start = off
		}
		hw := int64(-1)
		if k.cfg.Once {
			if _, ok := k.startHW[p.name]; !ok {
				// added to its topic since the drain started: it is
				// drained up to its watermark now
				more, err := k.startWatermarks(ctx, topicSet{p.topic: p.ID + 1})
				if err != nil {
					k.emit(ctx, kafkaEvent{err: fmt.Errorf("kafka %s: %w", p.name, err)})
					return false
				}
				for n, off := range more {
					if _, ok := k.startHW[n]; !ok {
						k.startHW[n] = off
					}
				}
			}
			hw = k.startHW[p.name]
			drained.Add(1)
		}
		gen.Start(func(gctx context.Context) {
			k.consume(gctx, gen.ID, p.topic, p.ID, p.name, start, hw, &drained)
		})
	}
	// The watcher holds the generation open (kafka-go rejoins only after
	// every started function returned) until the pipeline has flushed and
	// checkpointed the partitions this instance is giving up.
	gen.Start(func(gctx context.Context) {
		defer close(genDone)
		<-gctx.Done()
		if ctx.Err() != nil {
			return
		}
		done := make(chan error, 1)
		if !k.emit(ctx, kafkaEvent{ctl: &Control{Done: done}, gen: gen.ID}) {
			return
		}
		select {
		case <-done:
		case <-ctx.Done():
		}
	})
	if k.cfg.Once {
		allDrained := make(chan struct{})
		go func() { drained.Wait(); close(allDrained) }()
		select {
		case <-allDrained:
			if drained.cut.Load() {
				// A partition's reader stopped before its watermark: the
				// generation ended (another member joined, a heartbeat
				// failed) or its fetch failed (the pipeline has the
				// error). The drain goes on in the next generation.
				return ctx.Err() == nil
			}
			switch k.awaitOthers(ctx, names, gen.ID, genDone) {
			case drainRebalanced:
				return ctx.Err() == nil
			case drainFailed:
				return false
			}
			slices.Sort(names)
			k.log.Info("kafka drain done: every assigned partition read up to its high watermark at the start, the others committed by the group",
				"group", k.cfg.Group, "topics", topicsOf(names), "partitions", names)
			k.emit(ctx, kafkaEvent{eof: true})
			// The group stays joined until Close: the pipeline's last
			// checkpoint still commits offsets in this generation.
			<-ctx.Done()
			return false
		case <-genDone:
			return ctx.Err() == nil
		case <-ctx.Done():
			return false
		}
	}
	select {
	case <-genDone:
	case <-changed:
	case <-ctx.Done():
	}
	return ctx.Err() == nil
}

// topicsOf lists the topics of sorted partition names.
func topicsOf(names []string) []string {
	topics := make([]string, len(names))
	for i, n := range names {
		topics[i] = n[:strings.LastIndexByte(n, '-')]
	}
	return slices.Compact(topics)
}

// maxEventMessages caps the records of one event, and eventsQueued the
// events waiting for Next: together they bound what the partitions have
// fetched ahead of the pipeline (about as much as kafka.Reader's queues
// held, 100 records per partition and 256 in ours, did before).
const (
	maxEventMessages = 128
	eventsQueued     = 8
)

// PerPartitionCatalog tells the pipeline that partitions resume from a
// stored offset, so each keeps its own schema catalog in its checkpoint.
func (k *Kafka) PerPartitionCatalog() bool { return true }

// Ready reports whether Next would return without waiting.
func (k *Kafka) Ready() bool { return len(k.pending) > 0 || len(k.events) > 0 }
