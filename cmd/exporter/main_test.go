package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func runExporter(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestBadUsageExitsTwoAndSaysWhy(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no source", []string{"run"}, "--source"},
		{"unknown flag", []string{"run", "--source", "stdin", "--bogus"}, "bogus"},
		{"bad compression", []string{"run", "--source", "stdin", "--compression", "lz5"}, "compression"},
		{"bad type hint", []string{"run", "--source", "stdin", "--type-hint", "S.T:C=decimal(50,2)"}, "type-hint"},
		{"bad hint key", []string{"run", "--source", "stdin", "--type-hint", "nocolon=int64"}, "TABLE:COLUMN"},
		{"missing file", []string{"run", "--source", "file:/does/not/exist.jsonl"}, "exist.jsonl"},
		{"file without a path", []string{"run", "--source", "file:"}, "file: needs the paths"},
		{"half of the S3 keys", []string{"run", "--source", "stdin", "--s3-secret-access-key", "k"}, "--s3-access-key-id (or EXPORTER_S3_ACCESS_KEY_ID) is not set"},
		{"empty path in a list", []string{"run", "--source", "file:a.jsonl,"}, "none of them empty"},
		{"unknown sink", []string{"run", "--source", "stdin", "--sink", "ftp://x"}, "--sink"},
		{"duplicate names", []string{"run", "--source", "stdin", "--gg-before-field", "after"}, "after"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := runExporter(t, nil, append(c.args, "--sink", "file://"+t.TempDir())...)
			if c.name == "unknown sink" {
				code, _, stderr = runExporter(t, nil, c.args...)
			}
			if code != exitUsage {
				t.Errorf("exit code %d, want %d; stderr: %s", code, exitUsage, stderr)
			}
			if !strings.Contains(stderr, c.want) {
				t.Errorf("stderr does not mention %q:\n%s", c.want, stderr)
			}
		})
	}
}

// TestMissingSourceSaysWhereToGiveIt: a run without a source names the
// three ways to give one (flag, config key, environment variable) and the
// forms it takes, and so does validate for a config file without one.
func TestMissingSourceSaysWhereToGiveIt(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "exporter.yaml")
	os.WriteFile(cfg, []byte("sink: file://"+t.TempDir()+"\n"), 0o644)
	for _, args := range [][]string{{"run", "--sink", "file://" + t.TempDir()}, {"validate", "--config", cfg}} {
		code, _, stderr := runExporter(t, nil, args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
		for _, want := range []string{"--source", "source: in the config file", "EXPORTER_SOURCE", "file:PATH", "stdin:NAME", "kafka://HOST:PORT", "e.g. file:"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("%v: stderr does not say %q:\n%s", args, want, stderr)
			}
		}
	}
}

func TestSeveralConfigProblemsReportedAtOnce(t *testing.T) {
	code, _, stderr := runExporter(t, nil, "run", "--source", "file:/nope.jsonl", "--sink", "ftp://x", "--type-hint", "bad=int64")
	if code != exitUsage {
		t.Fatalf("exit code %d", code)
	}
	for _, want := range []string{"--source", "--sink", "--type-hint"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not report %s:\n%s", want, stderr)
		}
	}
}

func TestHelpDocumentsEveryFlagWithItsEnvironmentVariable(t *testing.T) {
	code, out, _ := runExporter(t, nil, "run", "--help")
	if code != 0 {
		t.Fatalf("exit code %d", code)
	}
	for _, want := range []string{"--source", "--sink", "--once", "--max-rejects", "--type-hint", "--compression", "--config",
		"EXPORTER_SOURCE", "EXPORTER_MAX_REJECTS", "EXPORTER_FILE_MAX_ROWS"} {
		if !strings.Contains(out, want) {
			t.Errorf("help does not mention %s", want)
		}
	}
}

// TestRunFromConfigFileAndEnvironment: options come from the YAML file,
// the environment overrides the file, and flags override both.
func TestRunFromConfigFileAndEnvironment(t *testing.T) {
	sink := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "exporter.yaml")
	os.WriteFile(cfg, []byte(`
source: file:../../testdata/goldengate/sample.jsonl
sink: file://`+sink+`
compression: snappy
partition-by: day
type-hint:
  "SALES.ORDERS:TOTAL_AMOUNT": decimal(12,2)
max-rejects: 0
`), 0o644)
	code, out, stderr := runExporter(t, map[string]string{"EXPORTER_PARTITION_BY": "hour"}, "--config", cfg, "run", "--once")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "rows written:   SALES.ORDERS                   6") || !strings.Contains(out, "rejected:       0") {
		t.Errorf("summary:\n%s", out)
	}
	// hourly partitions came from the environment, over the file's day
	matches, _ := filepath.Glob(filepath.Join(sink, "SALES.ORDERS", "schema_version=1", "dt=2026-07-13", "hr=04", "*.parquet"))
	if len(matches) != 1 {
		t.Errorf("hourly partition files: %v", matches)
	}
	schema, err := os.ReadFile(filepath.Join(sink, "_schemas", "SALES.ORDERS", "v1.json"))
	if err != nil || !strings.Contains(string(schema), `"decimal(12,2)"`) {
		t.Errorf("type hint from the config file not applied: %s", schema)
	}
}

func TestUnknownConfigKeyIsAnError(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "exporter.yaml")
	os.WriteFile(cfg, []byte("source: stdin\ncompresion: zstd\n"), 0o644)
	code, _, stderr := runExporter(t, nil, "--config", cfg, "run")
	if code != exitUsage || !strings.Contains(stderr, "compresion") {
		t.Errorf("exit %d, stderr %s", code, stderr)
	}
}

func TestStdinSourceAndRejectLimitExitCode(t *testing.T) {
	sink := t.TempDir()
	var out, errb bytes.Buffer
	in := strings.NewReader("garbage\nmore garbage\n")
	code := run([]string{"run", "--source", "stdin", "--sink", "file://" + sink, "--max-rejects", "1"}, in, &out, &errb)
	if code != exitFailure {
		t.Fatalf("exit %d, want 1; %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "max-rejects") {
		t.Errorf("error does not name the limit: %s", errb.String())
	}
	if m, _ := filepath.Glob(filepath.Join(sink, "_dlq", "*", "stdin-*.jsonl")); len(m) != 1 {
		t.Errorf("dead letters for stdin: %v", m)
	}
}

// TestUnusableLocalSinkIsARuntimeFailure: a well-formed file:// sink that
// this machine cannot write (a regular file where the folder should be)
// exits 1, a runtime failure, naming the path; a malformed one stays a
// usage error.
func TestUnusableLocalSinkIsARuntimeFailure(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "afile")
	os.WriteFile(blocker, []byte("x"), 0o644)
	code, _, stderr := runExporter(t, nil, "run", "--source", "file:../../testdata/goldengate/sample.jsonl", "--sink", "file://"+blocker, "--once")
	if code != exitFailure || !strings.Contains(stderr, blocker) {
		t.Errorf("sink over a regular file: exit %d, want %d; stderr: %s", code, exitFailure, stderr)
	}
	code, _, stderr = runExporter(t, nil, "run", "--source", "file:../../testdata/goldengate/sample.jsonl", "--sink", "file://", "--once")
	if code != exitUsage {
		t.Errorf("empty sink path: exit %d, want %d; stderr: %s", code, exitUsage, stderr)
	}
}

// TestEachStdinRunIsANewStream: stdin cannot be read again, so a second
// run into the same sink exports its whole stream; a fixed stdin
// checkpoint made it skip as many lines as the first run had read.
func TestEachStdinRunIsANewStream(t *testing.T) {
	sink := t.TempDir()
	for i, sample := range []string{"goldengate", "qlik"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", sample, "sample.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		code := run([]string{"run", "--source", "stdin", "--sink", "file://" + sink, "--once"}, bytes.NewReader(data), &out, &errb)
		if code != exitOK {
			t.Fatalf("run %d: exit %d: %s", i+1, code, errb.String())
		}
		if strings.Contains(out.String(), "already durable") {
			t.Errorf("run %d over stdin skipped records as already durable:\n%s", i+1, out.String())
		}
		if want := []string{"SALES.ORDERS", "SALES.CUSTOMERS"}[i]; !strings.Contains(out.String(), want) {
			t.Errorf("run %d over stdin wrote no rows of %s:\n%s", i+1, want, out.String())
		}
	}
	for _, table := range []string{"SALES.ORDERS", "SALES.CUSTOMERS"} {
		if files, _ := filepath.Glob(filepath.Join(sink, table, "*", "*", "*.parquet")); len(files) == 0 {
			t.Errorf("no files of %s in the sink", table)
		}
	}
}

// TestOnceFailsWhenKafkaIsUnreachable: a drain (--once) against brokers
// that never answer fails with exit 1 and says what to check, instead of
// retrying forever (and then exiting 0 on a signal, as if it had done
// its work).
func TestOnceFailsWhenKafkaIsUnreachable(t *testing.T) {
	start := time.Now()
	code, _, stderr := runExporter(t, nil, "run", "--source", "kafka://127.0.0.1:1/t?group=g", "--sink", "file://"+t.TempDir(),
		"--once", "--kafka-join-timeout", "2s")
	if code != exitFailure || !strings.Contains(stderr, "could not join group g") || !strings.Contains(stderr, "--kafka-join-timeout") {
		t.Errorf("exit %d, want %d; stderr: %s", code, exitFailure, stderr)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %s to give up with a 2s join timeout", d)
	}
}

// TestNamedStdinStreamResumes: stdin:NAME keeps its checkpoint from run
// to run, so the same stream fed again (after a crash, say) adds nothing;
// a name that is not a safe path segment is bad usage.
func TestNamedStdinStreamResumes(t *testing.T) {
	sink := t.TempDir()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "goldengate", "sample.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var outs []string
	for range 2 {
		var out, errb bytes.Buffer
		if code := run([]string{"run", "--source", "stdin:orders", "--sink", "file://" + sink, "--once"}, bytes.NewReader(data), &out, &errb); code != exitOK {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		outs = append(outs, out.String())
	}
	if strings.Contains(outs[0], "already durable") || !strings.Contains(outs[1], "already durable") || strings.Contains(outs[1], "rows written:") {
		t.Errorf("the second feeding of stdin:orders should skip everything:\nfirst:\n%s\nsecond:\n%s", outs[0], outs[1])
	}
	if _, err := os.Stat(filepath.Join(sink, "_checkpoints", "partitions", "stdin-orders.json")); err != nil {
		t.Errorf("checkpoint of stdin:orders: %v", err)
	}
	code, _, stderr := runExporter(t, nil, "run", "--source", "stdin:../x", "--sink", "file://"+sink)
	if code != exitUsage || !strings.Contains(stderr, "stdin stream name") {
		t.Errorf("stdin:../x: exit %d, stderr %s", code, stderr)
	}
}
