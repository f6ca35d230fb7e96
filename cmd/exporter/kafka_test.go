package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/gen"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/kafkatest"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/syncbuf"
)

// produceGenerated writes a generated stream to a new topic of two
// partitions, keyed by table, and returns the --source that reads it
// with the consumer group named group, and the lines.
func produceGenerated(t *testing.T, b kafkatest.Broker, group string, o gen.Options) (string, [][]byte) {
	t.Helper()
	tp, lines := generatedTopic(t, b, o)
	return "kafka://" + tp.Addrs[0] + "/" + tp.Name + "?group=" + tp.Group(group), lines
}

// generatedTopic writes a generated stream to a new topic of two
// partitions and returns the topic and the stream's lines.
func generatedTopic(t *testing.T, b kafkatest.Broker, o gen.Options) (kafkatest.Topic, [][]byte) {
	t.Helper()
	tp := b.Topic(t, 2)
	var lines [][]byte
	o.Lines = &lines
	if _, err := gen.Write(io.Discard, o); err != nil {
		t.Fatal(err)
	}
	kafkatest.Produce(t, tp.Addrs, tp.Name, lines, kafkatest.TableKey)
	return tp, lines
}

// TestKafkaOnceFromTheCommandLine: --once exits 0 with everything up to
// the start watermark written; a second --once writes nothing.
func TestKafkaOnceFromTheCommandLine(t *testing.T) {
	kafkatest.Each(t, testKafkaOnceFromTheCommandLine)
}

func testKafkaOnceFromTheCommandLine(t *testing.T, b kafkatest.Broker) {
	source, lines := produceGenerated(t, b, "cli", gen.Options{Records: 2000, Tables: 3, Seed: 3})
	sink := t.TempDir()
	args := []string{"run", "--source", source, "--sink", "file://" + sink, "--once"}
	code, out, stderr := runExporter(t, nil, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "records read:   "+strconv.Itoa(len(lines))+"\ninput:          read to its end\n") || !strings.Contains(out, "rejected:       0") {
		t.Errorf("summary does not show all %d records read:\n%s", len(lines), out)
	}
	files, _ := filepath.Glob(filepath.Join(sink, "*", "*", "*", "*.parquet"))
	if len(files) == 0 {
		t.Fatal("no files")
	}
	code, out, stderr = runExporter(t, nil, args...)
	if code != 0 || !strings.Contains(out, "records read:   0") || !strings.Contains(out, "files:          0") {
		t.Errorf("second --once: exit %d\n%s%s", code, out, stderr)
	}
}

// TestKafkaOnceExitsOneNamingPartitionsLeft: --once, while a dead member
// of its group holds partitions longer than --kafka-drain-timeout, exits
// 1 naming those partitions, after exporting its own share.
func TestKafkaOnceExitsOneNamingPartitionsLeft(t *testing.T) {
	kafkatest.Each(t, testKafkaOnceExitsOneNamingPartitionsLeft)
}

func testKafkaOnceExitsOneNamingPartitionsLeft(t *testing.T, b kafkatest.Broker) {
	tp, _ := generatedTopic(t, b, gen.Options{Records: 2000, Tables: 3, Seed: 3})
	group := tp.Group("cli-dead")
	dead := kafkatest.Join(t, tp, group, time.Minute)
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, out, stderr := runExporter(t, nil, "run", "--source", "kafka://"+tp.Addrs[0]+"/"+tp.Name+"?group="+group,
			"--sink", "file://"+t.TempDir(), "--once", "--kafka-drain-timeout", "2s")
		done <- result{code, out, stderr}
	}()
	held := dead.DieInNextGeneration(t, tp)
	r := <-done
	if r.code != exitFailure || !strings.Contains(r.stderr, "partitions "+strings.Join(held, ", ")+" are not exported") ||
		!strings.Contains(r.stderr, "--kafka-drain-timeout") {
		t.Errorf("exit %d, want %d naming %v and the flag:\n%s%s", r.code, exitFailure, held, r.stdout, r.stderr)
	}
}

// TestScheduleRunsDrainsOnTicks: with --schedule the process stays up and
// drains on each tick; records appended between ticks are picked up by the
// next drain, and a stop ends it cleanly.
func TestScheduleRunsDrainsOnTicks(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in.jsonl")
	sample, _ := os.ReadFile("../../testdata/goldengate/sample.jsonl")
	os.WriteFile(in, sample, 0o644)
	sink := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncbuf.Buffer
	done := make(chan int, 1)
	go func() {
		done <- runContext(ctx, []string{"run", "--source", "file:" + in, "--sink", "file://" + sink, "--schedule", "*/1 * * * * *"},
			strings.NewReader(""), &out, &errb)
	}()
	waitUntil(t, func() bool { return strings.Count(out.String(), "records read:") >= 1 })
	f, _ := os.OpenFile(in, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"qual_table":"HR.EMPLOYEES","op_type":"INSERT","op_ts":"2026-07-15T00:00:00Z","xid":"t","pos":"G-9999","after":{"EMP_ID":42,"NAME":"Late","SALARY":1}}` + "\n")
	f.Close()
	waitUntil(t, func() bool {
		return strings.Contains(out.String(), "rows written:   HR.EMPLOYEES                   1\n")
	})
	cancel()
	select {
	case code := <-done:
		// The stop lands between two drains (exit 0) or, when a tick has
		// just started one, inside it (exit 3, and the summary says so):
		// both are the contract, and which one happens is the clock's.
		midDrain := strings.Contains(out.String(), "NOT FINISHED")
		if !(code == 0 && !midDrain) && !(code == 3 && midDrain) {
			t.Errorf("exit %d (summary says not finished: %v): %s", code, midDrain, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the scheduled run did not stop")
	}
	if n := strings.Count(out.String(), "records read:"); n < 2 {
		t.Errorf("%d drains ran", n)
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestKafkaContinuousStopExitsZero: a continuous Kafka export (no --once)
// has no end of input; a SIGTERM is how it is meant to stop, so it exits
// 0 and says it finished, with no "not finished" in its summary.
func TestKafkaContinuousStopExitsZero(t *testing.T) {
	kafkatest.Each(t, testKafkaContinuousStopExitsZero)
}

func testKafkaContinuousStopExitsZero(t *testing.T, b kafkatest.Broker) {
	source, lines := produceGenerated(t, b, "cont", gen.Options{Records: 500, Tables: 2, Seed: 4})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncbuf.Buffer
	done := make(chan int, 1)
	go func() {
		done <- runContext(ctx, []string{"run", "--source", source,
			"--sink", "file://" + t.TempDir(), "--log-format", "json", "--log-level", "info", "--progress-every", "20ms"},
			strings.NewReader(""), &out, &errb)
	}()
	waitUntil(t, func() bool { return strings.Contains(errb.String(), `"records_read":`+strconv.Itoa(len(lines))+",") })
	cancel()
	code := <-done
	if code != exitOK {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitOK, out.String(), errb.String())
	}
	if strings.Contains(out.String(), "input:") || !strings.Contains(out.String(), "records read:   "+strconv.Itoa(len(lines))+"\n") {
		t.Errorf("summary:\n%s", out.String())
	}
	if !strings.Contains(errb.String(), `"msg":"export finished"`) || strings.Contains(errb.String(), "stopped before the end") {
		t.Errorf("log:\n%s", errb.String())
	}
}

// TestKafkaScheduleDrainsOnTicks: --schedule against a Kafka topic drains
// it on every tick; records produced between ticks are read by a later
// drain, and the lake ends with every record once.
func TestKafkaScheduleDrainsOnTicks(t *testing.T) {
	kafkatest.Each(t, testKafkaScheduleDrainsOnTicks)
}

func testKafkaScheduleDrainsOnTicks(t *testing.T, b kafkatest.Broker) {
	tp := b.Topic(t, 2)
	var lines [][]byte
	st, err := gen.Write(io.Discard, gen.Options{Records: 1000, Tables: 2, Seed: 5, Lines: &lines})
	if err != nil {
		t.Fatal(err)
	}
	kafkatest.Produce(t, tp.Addrs, tp.Name, lines[:600], kafkatest.TableKey)
	sink := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncbuf.Buffer
	done := make(chan int, 1)
	go func() {
		done <- runContext(ctx, []string{"run", "--source", "kafka://" + tp.Addrs[0] + "/" + tp.Name + "?group=" + tp.Group("sched"),
			"--sink", "file://" + sink, "--schedule", "*/1 * * * * *"}, strings.NewReader(""), &out, &errb)
	}()
	read := func() (total int, drains int) {
		for _, m := range recordsRead.FindAllStringSubmatch(out.String(), -1) {
			n, _ := strconv.Atoi(m[1])
			total += n
			drains++
		}
		return total, drains
	}
	waitUntil(t, func() bool { n, _ := read(); return n >= 600 })
	kafkatest.Produce(t, tp.Addrs, tp.Name, lines[600:], kafkatest.TableKey)
	waitUntil(t, func() bool { n, _ := read(); return n >= len(lines) })
	cancel()
	select {
	case code := <-done:
		midDrain := strings.Contains(out.String(), "NOT FINISHED")
		if !(code == exitOK && !midDrain) && !(code == 3 && midDrain) {
			t.Errorf("exit %d (summary says not finished: %v): %s", code, midDrain, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the scheduled run did not stop")
	}
	if n, drains := read(); n != len(lines) || drains < 2 {
		t.Errorf("%d drains read %d records, want at least 2 drains reading %d", drains, n, len(lines))
	}
	if rows, distinct := lakeRows(t, sink); rows != int64(st.DML) || distinct != rows {
		t.Errorf("lake holds %d rows (%d distinct positions), want the stream's %d changes once each", rows, distinct, st.DML)
	}
}
