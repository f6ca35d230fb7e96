package source

import (
	"strings"
	"testing"
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
