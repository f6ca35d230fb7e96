package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/duckq"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/gen"
)

// stopAfter is an input that stops the run (as a SIGTERM does, by
// cancelling its context) once its first n bytes are read, and serves
// the rest after: the stop comes while input remains, at a point given
// by the data, not by a clock.
type stopAfter struct {
	data   []byte
	n      int
	off    int
	cancel context.CancelFunc
}

func (s *stopAfter) Read(p []byte) (int, error) {
	if s.off >= len(s.data) {
		return 0, io.EOF
	}
	if s.off >= s.n {
		s.cancel()
	} else if len(p) > s.n-s.off {
		p = p[:s.n-s.off]
	}
	k := copy(p, s.data[s.off:])
	s.off += k
	return k, nil
}

// genInput is a GoldenGate stream of records DML records.
func genInput(t *testing.T, records int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := gen.Write(&buf, gen.Options{Records: records, Tables: 3, Seed: 35}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// lakeRows counts the rows of every data file in sink and the distinct
// source positions among them.
func lakeRows(t *testing.T, sink string) (rows, distinct int64) {
	t.Helper()
	_, out, err := duckq.Rows(duckq.OpenTB(t), fmt.Sprintf(
		"SELECT count(*), count(DISTINCT pos) FROM read_parquet('%s/*/*/*/*.parquet', hive_partitioning=true, union_by_name=true)", sink))
	if err != nil {
		t.Fatal(err)
	}
	return out[0][0].(int64), out[0][1].(int64)
}

var recordsRead = regexp.MustCompile(`records read:\s+(\d+)`)

// TestStopBeforeTheEndExitsInterruptedAndARerunFinishes: a stop that
// comes before the input's end exits 3, not 0, and the summary, the log
// and the error say the input is not finished and where the run stopped;
// what was read is checkpointed, so the same command run again writes
// the rest, each row once. A run that reads its input to the end still
// exits 0 and says so.
func TestStopBeforeTheEndExitsInterruptedAndARerunFinishes(t *testing.T) {
	const records = 6000
	data := genInput(t, records)
	sink := t.TempDir()
	args := []string{"run", "--source", "stdin:orders", "--sink", "file://" + sink, "--once", "--log-format", "json", "--log-level", "info"}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := &stopAfter{data: data, n: len(data) / 3, cancel: cancel}
	var out, errb bytes.Buffer
	code := runContext(ctx, args, in, &out, &errb)
	if code != exitInterrupted {
		t.Fatalf("stopped run: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitInterrupted, out.String(), errb.String())
	}
	m := recordsRead.FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no records read in the summary:\n%s", out.String())
	}
	read, _ := strconv.Atoi(m[1])
	if read == 0 || read >= records {
		t.Errorf("the stopped run read %d records of more than %d", read, records)
	}
	for _, want := range []string{"input:          NOT FINISHED", "position:       stdin-orders", "checkpointed " + strconv.Itoa(read)} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary does not say %q:\n%s", want, out.String())
		}
	}
	for _, want := range []string{`"msg":"export stopped before the end of the input`, `"records_read":` + m[1], `"partitions":[{"name":"stdin-orders","last_read":`,
		"stopped before the end of the input after " + m[1] + " records", "run the same command again"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr does not say %q:\n%s", want, errb.String())
		}
	}
	if strings.Contains(errb.String(), `"msg":"export finished"`) {
		t.Errorf("the stopped run says it finished:\n%s", errb.String())
	}
	written, _ := lakeRows(t, sink)
	if written == 0 {
		t.Error("nothing of what the stopped run read was written")
	}

	out.Reset()
	errb.Reset()
	code = runContext(context.Background(), args, bytes.NewReader(data), &out, &errb)
	if code != exitOK {
		t.Fatalf("rerun: exit %d\n%s%s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "input:          read to its end") || strings.Contains(out.String(), "position:") {
		t.Errorf("rerun's summary does not say the input was read to its end:\n%s", out.String())
	}
	if !strings.Contains(out.String(), fmt.Sprintf("already durable (skipped): %d\n", written)) {
		t.Errorf("rerun did not skip the %d rows the stopped run wrote:\n%s", written, out.String())
	}
	rows, distinct := lakeRows(t, sink)
	if rows != records || distinct != records {
		t.Errorf("lake holds %d rows (%d distinct), want %d each", rows, distinct, records)
	}
}

// TestFileExportStoppedBeforeItsEndExitsInterrupted: the same for a
// file source, which ends whether or not --once is given; a stop before
// the run reads anything leaves the file unread, and the rerun exports
// all of it.
func TestFileExportStoppedBeforeItsEndExitsInterrupted(t *testing.T) {
	const records = 500
	in := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(in, genInput(t, records), 0o644); err != nil {
		t.Fatal(err)
	}
	sink := t.TempDir()
	args := []string{"run", "--source", "file:" + in, "--sink", "file://" + sink}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	if code := runContext(ctx, args, strings.NewReader(""), &out, &errb); code != exitInterrupted {
		t.Fatalf("stopped run: exit %d, want %d\n%s%s", code, exitInterrupted, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "input:          NOT FINISHED: stopped before its end; run again to finish (0 of ") {
		t.Errorf("summary does not say the file was not finished:\n%s", out.String())
	}
	code, stdout, stderr := runExporter(t, nil, args...)
	if code != exitOK {
		t.Fatalf("rerun: exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "input:          read to its end") {
		t.Errorf("rerun's summary:\n%s", stdout)
	}
	if rows, distinct := lakeRows(t, sink); rows != records || distinct != records {
		t.Errorf("lake holds %d rows (%d distinct), want %d each", rows, distinct, records)
	}
}

// TestRejectLimitStopsBeforeTheEndAndARerunFinishes: --max-rejects stops
// a file export in the middle with exit 1, saying the input is not
// finished and where it stopped; the rerun goes on from there and the
// lake ends with every good record once.
func TestRejectLimitStopsBeforeTheEndAndARerunFinishes(t *testing.T) {
	const records = 3000
	lines := strings.SplitAfter(string(genInput(t, records)), "\n")
	half := len(lines) / 2
	in := filepath.Join(t.TempDir(), "in.jsonl")
	input := strings.Join(lines[:half], "") + "garbage\nmore garbage\n" + strings.Join(lines[half:], "")
	if err := os.WriteFile(in, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	sink := t.TempDir()
	args := []string{"run", "--source", "file:" + in, "--sink", "file://" + sink, "--max-rejects", "1", "--log-format", "json"}
	code, stdout, stderr := runExporter(t, nil, args...)
	if code != exitFailure {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitFailure, stdout, stderr)
	}
	for _, want := range []string{"max-rejects", "stopped before the end of the input after", `"input_finished":false`, `"partitions":[{"name":"in_jsonl-`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr)
		}
	}
	if !strings.Contains(stdout, "input:          NOT FINISHED") || !strings.Contains(stdout, "position:       in_jsonl-") {
		t.Errorf("summary does not say where the run stopped:\n%s", stdout)
	}
	code, stdout, stderr = runExporter(t, nil, args...)
	if code != exitOK {
		t.Fatalf("rerun: exit %d\n%s%s", code, stdout, stderr)
	}
	if rows, distinct := lakeRows(t, sink); rows != records || distinct != records {
		t.Errorf("lake holds %d rows (%d distinct), want %d each", rows, distinct, records)
	}
}

// TestScheduledDrainStoppedBeforeItsEndExitsInterrupted: a stop that
// comes during a --schedule drain, before its input's end, exits 3 and
// says the next start finishes it.
func TestScheduledDrainStoppedBeforeItsEndExitsInterrupted(t *testing.T) {
	data := genInput(t, 3000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := &stopAfter{data: data, n: len(data) / 2, cancel: cancel}
	var out, errb bytes.Buffer
	code := runContext(ctx, []string{"run", "--source", "stdin:s", "--sink", "file://" + t.TempDir(), "--schedule", "*/1 * * * * *"}, in, &out, &errb)
	if code != exitInterrupted {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitInterrupted, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "input:          NOT FINISHED") || !strings.Contains(errb.String(), "the next start finishes it") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	}
}
