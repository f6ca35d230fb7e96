package source

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
)

// A Kafka subscription is a topic list, a pattern, or both. kafka-go's
// consumer group takes a fixed topic list, so the source reads the
// cluster's topics itself, subscribes the group to the ones that match
// and exist, and re-reads them every MetadataRefresh: when the matching
// topics or their partition counts change, it closes the group (which
// ends the generation the way a rebalance does: the pipeline flushes and
// checkpoints every partition it holds) and joins again with the new
// list. A topic that is listed but does not exist yet is waited for, not
// subscribed, so that the group never asks the brokers about it (kafka-go
// asks with auto-creation on).

// topicMatcher says which topics a subscription covers.
type topicMatcher struct {
	listed  map[string]bool
	pattern *regexp.Regexp
}

// compileTopicPattern anchors pattern to the whole topic name.
func compileTopicPattern(pattern string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(`^(?:` + pattern + `)$`)
	if err != nil {
		return nil, fmt.Errorf("topic pattern %q: %w", pattern, err)
	}
	return re, nil
}

func newTopicMatcher(topics []string, pattern string) (topicMatcher, error) {
	m := topicMatcher{listed: map[string]bool{}}
	for _, t := range topics {
		m.listed[t] = true
	}
	if pattern != "" {
		re, err := compileTopicPattern(pattern)
		if err != nil {
			return m, err
		}
		m.pattern = re
	}
	return m, nil
}

// match reports whether the subscription covers topic. A pattern never
// matches an internal topic (__consumer_offsets and the like); a listed
// topic is taken as it is named.
func (m topicMatcher) match(topic string) bool {
	if m.listed[topic] {
		return true
	}
	return m.pattern != nil && !strings.HasPrefix(topic, "__") && m.pattern.MatchString(topic)
}

// topicSet is what a subscription covers at one time: each matching topic
// with its partition count.
type topicSet map[string]int

func (s topicSet) names() []string {
	names := make([]string, 0, len(s))
	for t := range s {
		names = append(names, t)
	}
	slices.Sort(names)
	return names
}

func (s topicSet) equal(o topicSet) bool {
	if len(s) != len(o) {
		return false
	}
	for t, n := range s {
		if m, ok := o[t]; !ok || m != n {
			return false
		}
	}
	return true
}

// describe lists the topics as TOPIC:PARTITIONS, for logs.
func (s topicSet) describe() []string {
	names := s.names()
	for i, t := range names {
		names[i] = t + ":" + strconv.Itoa(s[t])
	}
	return names
}

// changes names what differs from old to s, for logs.
func (s topicSet) changes(old topicSet) (added, removed, grown []string) {
	for _, t := range s.names() {
		switch n, ok := old[t]; {
		case !ok:
			added = append(added, t+":"+strconv.Itoa(s[t]))
		case n != s[t]:
			grown = append(grown, fmt.Sprintf("%s:%d->%d", t, n, s[t]))
		}
	}
	for _, t := range old.names() {
		if _, ok := s[t]; !ok {
			removed = append(removed, t)
		}
	}
	return added, removed, grown
}

// readTopics reads the cluster's topics and returns those the
// subscription covers. A topic of prev that the brokers report with an
// error other than "unknown topic" keeps its count from prev, so that a
// leader election does not look like a deletion.
func (k *Kafka) readTopics(ctx context.Context, prev topicSet) (topicSet, error) {
	c, done := k.client()
	defer done()
	// No topic names: all topics, and nothing is created by asking.
	res, err := c.Metadata(ctx, &kafka.MetadataRequest{})
	if err != nil {
		return nil, fmt.Errorf("read topic metadata from %s: %w", strings.Join(k.cfg.Brokers, ","), err)
	}
	set := topicSet{}
	for _, t := range res.Topics {
		if t.Internal || !k.topics.match(t.Name) {
			continue
		}
		if t.Error != nil {
			if n, ok := prev[t.Name]; ok && !errors.Is(t.Error, kafka.UnknownTopicOrPartition) {
				set[t.Name] = n
			}
			continue
		}
		if len(t.Partitions) > 0 {
			set[t.Name] = len(t.Partitions)
		}
	}
	return set, nil
}

// client returns a kafka-go client for one-off requests, and a function
// that closes its connections. A transport of its own each time:
// kafka-go's transport serves metadata from a cache it refreshes on its
// own schedule, and a caller must see the cluster as it is now.
func (k *Kafka) client() (*kafka.Client, func()) {
	d := k.cfg.Dialer
	tr := &kafka.Transport{Dial: dialFunc(d), DialTimeout: d.Timeout, ClientID: d.ClientID, TLS: d.TLS, SASL: d.SASLMechanism}
	return &kafka.Client{Addr: kafka.TCP(k.cfg.Brokers...), Transport: tr, Timeout: 10 * time.Second}, tr.CloseIdleConnections
}

// dialFunc is how d dials, for a kafka.Transport.
func dialFunc(d *kafka.Dialer) func(context.Context, string, string) (net.Conn, error) {
	if d.DialFunc != nil {
		return d.DialFunc
	}
	return (&net.Dialer{Timeout: d.Timeout, LocalAddr: d.LocalAddr, FallbackDelay: d.FallbackDelay, KeepAlive: d.KeepAlive}).DialContext
}

// watchTopics re-reads the topics every MetadataRefresh, and at once when
// a reader found its topic gone, and returns the set as soon as it
// differs from have. It returns nil when ctx ends.
func (k *Kafka) watchTopics(ctx context.Context, have topicSet) topicSet {
	t := time.NewTicker(k.cfg.MetadataRefresh)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-k.refresh:
		}
		now, err := k.readTopics(ctx, have)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			k.log.Warn("kafka metadata refresh failed; the subscription stays as it is until the next one", "group", k.cfg.Group, "error", err)
			continue
		}
		if !now.equal(have) {
			added, removed, grown := now.changes(have)
			if len(removed) > 0 {
				k.log.Warn("kafka topics deleted: their partitions are given up, the other topics go on", "group", k.cfg.Group, "topics", removed)
			}
			k.log.Info("kafka topics changed; the group rejoins with the new set", "group", k.cfg.Group,
				"added", added, "removed", removed, "partitions_added", grown)
			return now
		}
	}
}

// firstTopics reads the topics at the start, retrying like a group join:
// forever, or in Once mode for JoinTimeout.
func (k *Kafka) firstTopics(ctx context.Context) (topicSet, bool) {
	var failingSince time.Time
	for {
		set, err := k.readTopics(ctx, nil)
		if err == nil {
			return set, true
		}
		if ctx.Err() != nil {
			return nil, false
		}
		if failingSince.IsZero() {
			failingSince = time.Now()
		}
		if k.joinTimedOut(failingSince) {
			k.emit(ctx, kafkaEvent{err: k.joinError(err)})
			return nil, false
		}
		k.log.Warn("kafka metadata read failed; retrying", "group", k.cfg.Group, "error", err)
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return nil, false
		}
	}
}

// topicGone reports whether the brokers say topic's partition no longer
// exists (the topic was deleted); an error reading that says no, and so
// does an error the brokers report for the topic other than "unknown"
// (no leader during an election, not authorized): a partition taken for
// deleted is given up, and in a drain counted as done.
func (k *Kafka) topicGone(ctx context.Context, topic string, partition int) bool {
	set, err := k.readTopics(ctx, topicSet{topic: partition + 1})
	return err == nil && set[topic] <= partition
}

// refreshSoon asks the topic watcher for a refresh now.
func (k *Kafka) refreshSoon() {
	select {
	case k.refresh <- struct{}{}:
	default:
	}
}
