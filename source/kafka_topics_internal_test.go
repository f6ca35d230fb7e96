package source

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A pattern matches whole topic names, never an internal topic; a listed
// topic is taken as named, even one starting with __.
func TestTopicMatcher(t *testing.T) {
	m, err := newTopicMatcher([]string{"__listed", "orders"}, `cdc\..*`)
	if err != nil {
		t.Fatal(err)
	}
	for topic, want := range map[string]bool{
		"cdc.a":              true,
		"cdc.":               true,
		"orders":             true,
		"__listed":           true,
		"xcdc.a":             false, // anchored at the start
		"cdc":                false,
		"__cdc.a":            false,
		"__consumer_offsets": false,
		"orders2":            false,
	} {
		if got := m.match(topic); got != want {
			t.Errorf("match(%q) = %v, want %v", topic, got, want)
		}
	}
	// anchored at the end as well, also for an alternation
	m, _ = newTopicMatcher(nil, `a|b`)
	if m.match("ab") || !m.match("a") || !m.match("b") {
		t.Errorf("a|b: ab %v, a %v, b %v", m.match("ab"), m.match("a"), m.match("b"))
	}
}

// The URL's topic list may be empty when a pattern is given; a config
// with neither, or with a pattern that does not compile, is refused with
// every problem named.
func TestKafkaConfigTopics(t *testing.T) {
	c, err := ParseKafkaURL("kafka://127.0.0.1:9092/?group=g")
	if err != nil {
		t.Fatalf("URL without topics: %v", err)
	}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "no topic") {
		t.Errorf("neither topics nor pattern: %v", err)
	}
	c.TopicPattern = `cdc\..*`
	if err := c.Validate(); err != nil {
		t.Errorf("pattern alone: %v", err)
	}
	c.TopicPattern, c.MetadataRefresh = `cdc(`, -1
	err = c.Validate()
	if err == nil || !strings.Contains(err.Error(), `topic pattern "cdc("`) || !strings.Contains(err.Error(), "metadata refresh") {
		t.Errorf("bad pattern and refresh: %v", err)
	}
}

func TestTopicSetChanges(t *testing.T) {
	old := topicSet{"a": 1, "b": 2, "c": 3}
	now := topicSet{"a": 1, "b": 4, "d": 1}
	added, removed, grown := now.changes(old)
	if strings.Join(added, " ") != "d:1" || strings.Join(removed, " ") != "c" || strings.Join(grown, " ") != "b:2->4" {
		t.Errorf("added %v, removed %v, grown %v", added, removed, grown)
	}
	if now.equal(old) || !old.equal(topicSet{"c": 3, "b": 2, "a": 1}) {
		t.Error("equal")
	}
}

// A partition is taken for deleted only when the brokers say its topic
// is unknown or has fewer partitions: an error they report for the topic
// (no leader during an election, not authorized) is no deletion, or the
// partition would be given up, and in a drain counted as done.
func TestTopicGoneOnlyWhenTheBrokersSaySo(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "cdc"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	k, err := NewKafka(KafkaConfig{Brokers: c.ListenAddrs(), Topics: []string{"cdc"}, Group: "g-gone"})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Every metadata request is answered by the test while mode is set.
	type mode struct {
		code int16
		keep bool
	}
	var current atomic.Pointer[mode]
	host, port, _ := net.SplitHostPort(c.ListenAddrs()[0])
	p, _ := strconv.Atoi(port)
	c.ControlKey(int16(kmsg.Metadata), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		m := current.Load()
		if m == nil {
			return nil, nil, false
		}
		resp := req.(*kmsg.MetadataRequest).ResponseKind().(*kmsg.MetadataResponse)
		resp.Brokers = []kmsg.MetadataResponseBroker{{NodeID: 0, Host: host, Port: int32(p)}}
		if m.keep {
			tp := kmsg.NewMetadataResponseTopic()
			tp.Topic = kmsg.StringPtr("cdc")
			tp.ErrorCode = m.code
			resp.Topics = append(resp.Topics, tp)
		}
		return resp, nil, true
	})
	answer := func(code int16, keep bool) { current.Store(&mode{code, keep}) }
	for _, tc := range []struct {
		what string
		code int16
		keep bool
		want bool
	}{
		{"no leader", kerr.LeaderNotAvailable.Code, true, false},
		{"not authorized", kerr.TopicAuthorizationFailed.Code, true, false},
		{"unknown", kerr.UnknownTopicOrPartition.Code, true, true},
		{"absent", 0, false, true},
	} {
		answer(tc.code, tc.keep)
		if got := k.topicGone(ctx, "cdc", 1); got != tc.want {
			t.Errorf("%s: topicGone = %v, want %v", tc.what, got, tc.want)
		}
	}
	current.Store(nil) // the cluster answers as it is
	if k.topicGone(ctx, "cdc", 1) {
		t.Error("partition 1 of a 2-partition topic taken for deleted")
	}
	if !k.topicGone(ctx, "cdc", 2) {
		t.Error("partition 2 of a 2-partition topic not taken for deleted")
	}
}
