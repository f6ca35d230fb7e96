package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakehouse-exporter/lakehouse-exporter/checkpoint"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/duckq"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/gen"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/kafkatest"
)

// rebuildStream is a generated stream with DDL in the middle, cut after a
// DML record past its middle (so the first part's checkpoint ends at a row
// that a data file records), and its number of DML records.
func rebuildStream(t *testing.T) (first, rest [][]byte, dml int) {
	t.Helper()
	var lines [][]byte
	gen.Write(io.Discard, gen.Options{Records: 3000, Tables: 3, Seed: 35, DDLEvery: 400, Lines: &lines})
	cut := len(lines) * 3 / 5
	for !isDML(lines[cut-1]) {
		cut--
	}
	for _, l := range lines {
		if isDML(l) {
			dml++
		}
	}
	if !bytes.Contains(bytes.Join(lines[cut:], nil), []byte(`"op_type":"DDL"`)) {
		t.Fatal("the generated stream has no DDL after the cut")
	}
	return lines[:cut], lines[cut:], dml
}

func isDML(line []byte) bool {
	for _, op := range []string{"INSERT", "UPDATE", "DELETE"} {
		if bytes.Contains(line, []byte(`"op_type":"`+op+`"`)) {
			return true
		}
	}
	return false
}

// onlyCheckpoint returns the partition of the one checkpoint in sink.
func onlyCheckpoint(t *testing.T, sink string) string {
	t.Helper()
	cps, _ := filepath.Glob(filepath.Join(sink, "_checkpoints", "partitions", "*.json"))
	if len(cps) != 1 {
		t.Fatalf("checkpoints: %v, want one", cps)
	}
	return strings.TrimSuffix(filepath.Base(cps[0]), ".json")
}

func readCheckpoint(t *testing.T, sink, partition string) checkpoint.Checkpoint {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(sink, checkpoint.Key(partition)))
	if err != nil {
		t.Fatal(err)
	}
	c, err := checkpoint.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// corruptAndRebuild replaces partition's checkpoint by garbage, checks
// that run refuses to go on and names the rebuild, rebuilds it, and
// checks the rebuilt offset is the original's.
func corruptAndRebuild(t *testing.T, sink, partition string, run func() (int, string)) {
	t.Helper()
	orig := readCheckpoint(t, sink, partition)
	os.WriteFile(filepath.Join(sink, checkpoint.Key(partition)), []byte("\x00\xffnot a checkpoint"), 0o644)
	code, stderr := run()
	if code != exitFailure || !strings.Contains(stderr, "exporter checkpoint rebuild --partition "+partition) {
		t.Fatalf("run over a corrupt checkpoint: exit %d, want %d and a message naming the rebuild:\n%s", code, exitFailure, stderr)
	}
	code, out, stderr := runExporter(t, nil, "checkpoint", "rebuild", "--sink", "file://"+sink, "--partition", partition)
	if code != 0 || !strings.Contains(out, "was corrupt") {
		t.Fatalf("rebuild: exit %d\n%s%s", code, out, stderr)
	}
	if got := readCheckpoint(t, sink, partition); got.Offset != orig.Offset {
		t.Errorf("rebuilt checkpoint at offset %d, the original at %d", got.Offset, orig.Offset)
	}
	// EXPORTER_FORCE left in an environment does not force it: only the
	// flag given to this command does.
	code, _, stderr = runExporter(t, map[string]string{"EXPORTER_FORCE": "true"}, "checkpoint", "rebuild", "--sink", "file://"+sink, "--partition", partition)
	if code != exitFailure || !strings.Contains(stderr, "--force") {
		t.Errorf("second rebuild of a readable checkpoint: exit %d: %s", code, stderr)
	}
}

// lakeState is what the lake holds: rows, distinct positions, and every
// schema document (without the time it was written).
func lakeState(t *testing.T, sink string) (rows, distinct int64, schemas map[string]string) {
	t.Helper()
	db := duckq.OpenTB(t)
	_, res, err := duckq.Rows(db, `SELECT count(*), count(DISTINCT pos) FROM read_parquet('`+sink+`/**/*.parquet', union_by_name=true)`)
	if err != nil {
		t.Fatal(err)
	}
	rows, distinct = res[0][0].(int64), res[0][1].(int64)
	docs, _ := filepath.Glob(filepath.Join(sink, "_schemas", "*", "*.json"))
	schemas = map[string]string{}
	for _, d := range docs {
		data, _ := os.ReadFile(d)
		var m map[string]any
		json.Unmarshal(data, &m)
		delete(m, "written_at")
		b, _ := json.Marshal(m)
		rel, _ := filepath.Rel(sink, d)
		schemas[rel] = string(b)
	}
	return rows, distinct, schemas
}

// checkSameLake: the rebuilt lake holds every DML record once and the
// same schema versions as the reference export, which never lost its
// checkpoint.
func checkSameLake(t *testing.T, sink, reference string, dml int) {
	t.Helper()
	rows, distinct, schemas := lakeState(t, sink)
	if rows != int64(dml) || distinct != int64(dml) {
		t.Errorf("the lake holds %d rows, %d distinct positions; want each of the %d DML records once", rows, distinct, dml)
	}
	_, _, want := lakeState(t, reference)
	if len(schemas) != len(want) {
		t.Errorf("%d schema documents, the reference export %d", len(schemas), len(want))
	}
	for k, v := range want {
		if schemas[k] != v {
			t.Errorf("%s:\n%s\nthe reference export:\n%s", k, schemas[k], v)
		}
	}
}

// TestRebuiltCheckpointResumesAFileExactlyOnce: a file's corrupt
// checkpoint stops the run with a message naming the rebuild; once
// rebuilt, a run over the grown file writes only what is new.
func TestRebuiltCheckpointResumesAFileExactlyOnce(t *testing.T) {
	first, rest, dml := rebuildStream(t)
	export := func(sink string, lines [][]byte) (int, string) {
		in := filepath.Join(filepath.Dir(sink), "in.jsonl")
		os.WriteFile(in, append(bytes.Join(lines, []byte("\n")), '\n'), 0o644)
		code, _, stderr := runExporter(t, nil, "run", "--source", "file:"+in, "--sink", "file://"+sink)
		return code, stderr
	}
	all := append(append([][]byte(nil), first...), rest...)
	reference := filepath.Join(t.TempDir(), "lake")
	sink := filepath.Join(t.TempDir(), "lake")
	for _, s := range []string{reference, sink} {
		if code, stderr := export(s, first); code != 0 {
			t.Fatalf("first export: %s", stderr)
		}
	}
	corruptAndRebuild(t, sink, onlyCheckpoint(t, sink), func() (int, string) { return export(sink, all) })
	for _, s := range []string{reference, sink} {
		if code, stderr := export(s, all); code != 0 {
			t.Fatalf("export of the grown file: %s", stderr)
		}
	}
	checkSameLake(t, sink, reference, dml)
}

// TestRebuiltCheckpointResumesAKafkaPartitionExactlyOnce: the same for a
// Kafka partition, whose records after the checkpoint (DDL among them)
// need the schema catalog rebuilt from _schemas/: the tables' metadata is
// not sent again.
func TestRebuiltCheckpointResumesAKafkaPartitionExactlyOnce(t *testing.T) {
	kafkatest.Each(t, testRebuiltCheckpointResumesAKafkaPartitionExactlyOnce)
}

func testRebuiltCheckpointResumesAKafkaPartitionExactlyOnce(t *testing.T, b kafkatest.Broker) {
	first, rest, dml := rebuildStream(t)
	type lake struct {
		tp   kafkatest.Topic
		sink string
	}
	var lakes []lake
	for range 2 {
		lakes = append(lakes, lake{tp: b.Topic(t, 1), sink: t.TempDir()})
	}
	export := func(l lake) (int, string) {
		code, _, stderr := runExporter(t, nil, "run", "--source", "kafka://"+l.tp.Addrs[0]+"/"+l.tp.Name+"?group="+l.tp.Group("rebuild"),
			"--sink", "file://"+l.sink, "--once")
		return code, stderr
	}
	for _, l := range lakes {
		kafkatest.Produce(t, l.tp.Addrs, l.tp.Name, first, kafkatest.TableKey)
		if code, stderr := export(l); code != 0 {
			t.Fatalf("first export: %s", stderr)
		}
	}
	reference, broken := lakes[0], lakes[1]
	corruptAndRebuild(t, broken.sink, broken.tp.Partition(0), func() (int, string) { return export(broken) })
	for _, l := range lakes {
		kafkatest.Produce(t, l.tp.Addrs, l.tp.Name, rest, kafkatest.TableKey)
		if code, stderr := export(l); code != 0 {
			t.Fatalf("second export: %s", stderr)
		}
	}
	checkSameLake(t, broken.sink, reference.sink, dml)
}

// TestRebuildCountsDeadLetters: records past the last row that were
// dead-lettered are durable too: the rebuilt offset covers them, and a
// rerun rejects them no second time.
func TestRebuildCountsDeadLetters(t *testing.T) {
	dir := t.TempDir()
	in, sink := filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "lake")
	sample, err := os.ReadFile("../../testdata/goldengate/sample.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(in, append(sample, "{not json\n{\"op_type\":\"BOGUS\"}\n"...), 0o644)
	run := func() (int, string) {
		code, _, stderr := runExporter(t, nil, "run", "--source", "file:"+in, "--sink", "file://"+sink)
		return code, stderr
	}
	if code, stderr := run(); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	deadLetters := func() int {
		files, _ := filepath.Glob(filepath.Join(sink, "_dlq", "*", "*.jsonl"))
		n := 0
		for _, f := range files {
			data, _ := os.ReadFile(f)
			n += bytes.Count(data, []byte("\n"))
		}
		return n
	}
	if deadLetters() != 2 {
		t.Fatalf("%d dead letters after the export, want 2", deadLetters())
	}
	corruptAndRebuild(t, sink, onlyCheckpoint(t, sink), run)
	if code, stderr := run(); code != 0 {
		t.Fatalf("rerun: %s", stderr)
	}
	if n := deadLetters(); n != 2 {
		t.Errorf("%d dead letters after the rerun, want the 2 of the first run", n)
	}
}
