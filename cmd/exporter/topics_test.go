package main

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/gen"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/kafkatest"
)

// TestKafkaTopicPatternFromTheCommandLine: --kafka-topic-pattern, from
// the environment or the config file, with no topic in --source, drains
// every matching topic (not the one the anchored pattern leaves out),
// says which it drained, and exporter tables shows their tables. Without
// topics and pattern, or with a pattern that does not compile, it is bad
// usage.
func TestKafkaTopicPatternFromTheCommandLine(t *testing.T) {
	addrs := kafkatest.Cluster(t)
	prefix := kafkatest.Unique("cli")
	var lines [][]byte
	st, _ := gen.Write(io.Discard, gen.Options{Records: 1500, Tables: 3, Seed: 36, Lines: &lines})
	topics := []string{prefix + ".a", prefix + ".b", "x" + prefix + ".a"}
	byTopic := make([][][]byte, 3)
	for _, l := range lines {
		i := slices.Index(st.TableNames, string(kafkatest.TableKey(l)))
		byTopic[i] = append(byTopic[i], l)
	}
	for i, topic := range topics {
		kafkatest.CreateTopic(t, addrs, topic, 2-i%2)
		kafkatest.Produce(t, addrs, topic, byTopic[i], kafkatest.TableKey)
	}
	pattern := regexp.QuoteMeta(prefix) + `\..*`
	source := "kafka://" + addrs[0] + "/?group=" + kafkatest.Unique("cli")
	config := filepath.Join(t.TempDir(), "exporter.yaml")
	if err := os.WriteFile(config, []byte("kafka-topic-pattern: '"+pattern+"'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"environment", map[string]string{"EXPORTER_KAFKA_TOPIC_PATTERN": pattern}, nil},
		{"config file", nil, []string{"--config", config}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sink := t.TempDir()
			code, out, stderr := runExporter(t, c.env, append([]string{"run", "--source", source + "-" + strings.Fields(c.name)[0],
				"--sink", "file://" + sink, "--once", "--log-format", "text"}, c.args...)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			want := len(byTopic[0]) + len(byTopic[1])
			if !strings.Contains(out, "records read:   "+strconv.Itoa(want)+"\n") {
				t.Errorf("want %d records read from %s and %s:\n%s", want, topics[0], topics[1], out)
			}
			drained := "topics=\"[" + topics[0] + " " + topics[1] + "]\""
			if !strings.Contains(stderr, "kafka drain done") || !strings.Contains(stderr, drained) {
				t.Errorf("the log does not say the drain took %s:\n%s", drained, stderr)
			}
			code, out, stderr = runExporter(t, nil, "tables", "--sink", "file://"+sink)
			if code != exitOK || !strings.Contains(out, st.TableNames[0]) || !strings.Contains(out, st.TableNames[1]) || strings.Contains(out, st.TableNames[2]) {
				t.Errorf("exporter tables: exit %d, want %s and %s, not %s:\n%s%s", code, st.TableNames[0], st.TableNames[1], st.TableNames[2], out, stderr)
			}
		})
	}
	for _, c := range []struct{ pattern, want string }{{"", "no topic"}, {"cdc(", "topic pattern"}} {
		code, _, stderr := runExporter(t, nil, "run", "--source", source, "--sink", "file://"+t.TempDir(), "--once", "--kafka-topic-pattern", c.pattern)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("pattern %q: exit %d, want %d with %q: %s", c.pattern, code, exitUsage, c.want, stderr)
		}
	}
}
