package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateChecksTheEffectiveConfiguration: validate reads what run
// reads (the file named by EXPORTER_CONFIG or --config, before or after
// the command, the EXPORTER_* environment and run's flags) and reports
// every problem once, under the key, variable or flag it comes from.
func TestValidateChecksTheEffectiveConfiguration(t *testing.T) {
	sink := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "exporter.yaml")
	os.WriteFile(cfg, []byte("source: file:../../testdata/goldengate/sample.jsonl\nsink: file://"+sink+"\ncompression: lz5\n"), 0o644)
	// A bad variable over a good file is its own one problem.
	good := filepath.Join(t.TempDir(), "good.yaml")
	os.WriteFile(good, []byte("source: stdin\nsink: file://"+sink+"\ncompression: snappy\n"), 0o644)
	code, _, stderr := runExporter(t, map[string]string{"EXPORTER_PARTITION_BY": "week"}, "validate", "--config", good)
	if code != exitUsage || stderr != good+": 1 problem(s)\n  EXPORTER_PARTITION_BY: --partition-by must be one of \"day\",\"hour\" but got \"week\"\n" {
		t.Errorf("a bad EXPORTER_PARTITION_BY: exit %d\n%s", code, stderr)
	}

	env := map[string]string{"EXPORTER_CONFIG": cfg, "EXPORTER_PARTITION_BY": "week", "EXPORTER_TYPE_HINT": "nocolon=int64"}
	code, _, stderr = runExporter(t, env, "validate", "--file-max-rows", "many", "--bogus", "--sink", "ftp://x", "--no-before-image", "--file-max-bytes", "4294967296")
	if code != exitUsage {
		t.Fatalf("exit %d, want %d:\n%s", code, exitUsage, stderr)
	}
	for _, want := range []string{
		"compression: --compression must be one of",     // the file's key
		"EXPORTER_PARTITION_BY: --partition-by must be", // the variable, once
		"--file-max-rows: expected",                     // a flag
		"--bogus: unknown flag",                         // a flag run does not have
		"--sink: \"ftp://x\" is not a sink",             // a flag over the file, checked with the rest
		"EXPORTER_TYPE_HINT: type hint key \"nocolon\"", // a variable checked with the rest
		"--file-max-bytes 4294967296 is above",          // past what 32-bit sizes hold
	} {
		if !strings.Contains(stderr, "\n  "+want) {
			t.Errorf("no line %q in:\n%s", want, stderr)
		}
	}
	if n := strings.Count(stderr, "week"); n != 1 {
		t.Errorf("the bad variable is reported %d times:\n%s", n, stderr)
	}
	if !strings.HasPrefix(stderr, cfg+": 7 problem(s)\n") {
		t.Errorf("want 7 problems of %s:\n%s", cfg, stderr)
	}

	// Fixed by the flags and the environment over the same file, with
	// --config before the command: all is well.
	os.Unsetenv("EXPORTER_CONFIG") // t.Setenv above restores it
	t.Setenv("EXPORTER_TYPE_HINT", "SALES.ORDERS:TOTAL_AMOUNT=decimal(12,2)")
	code, out, stderr := runExporter(t, map[string]string{"EXPORTER_PARTITION_BY": "hour"}, "--config", cfg, "validate", "--compression", "gzip")
	if code != exitUsage || !strings.Contains(stderr, "\n  compression:") || strings.Count(stderr, "\n  ") != 1 {
		t.Errorf("only the file's bad compression should be left: exit %d\n%s%s", code, out, stderr)
	}
	os.WriteFile(cfg, []byte("source: file:../../testdata/goldengate/sample.jsonl\nsink: file://"+sink+"\n"), 0o644)
	if code, out, stderr := runExporter(t, nil, "--config", cfg, "validate", "--compression", "gzip", "--once"); code != exitOK || out != cfg+": OK\n" {
		t.Errorf("good configuration: exit %d\n%s%s", code, out, stderr)
	}
	// Without a file: the environment and flags alone, as run takes them.
	if code, out, stderr := runExporter(t, map[string]string{"EXPORTER_SOURCE": "stdin"}, "validate", "--sink", "file://"+sink); code != exitOK || !strings.Contains(out, "OK") {
		t.Errorf("no config file: exit %d\n%s%s", code, out, stderr)
	}
}

// TestValidateChecksWhatRunChecksLater: settings run only reaches after
// opening the sink (a schedule, its time zone, the metrics address, a
// profile's folder) are checked by validate too, and refuse the run
// before it starts.
func TestValidateChecksWhatRunChecksLater(t *testing.T) {
	for _, c := range []struct{ args []string }{
		{[]string{"--schedule", "every 5m"}},
		{[]string{"--maintain-schedule", "hourly", "--catalog", "hadoop"}},
		{[]string{"--schedule", "@hourly", "--schedule-timezone", "Mars/Base"}},
		{[]string{"--metrics-addr", "bad:addr:x"}},
		{[]string{"--cpu-profile", "/nonexistent/dir/x.pprof"}},
	} {
		flag := c.args[0]
		if len(c.args) > 2 && c.args[2] == "--schedule-timezone" {
			flag = c.args[2]
		}
		for _, cmd := range []string{"validate", "run"} {
			args := append([]string{cmd, "--source", "stdin", "--sink", "file://" + t.TempDir()}, c.args...)
			code, _, stderr := runExporter(t, nil, args...)
			if code != exitUsage || !strings.Contains(stderr, flag+":") {
				t.Errorf("%s %v: exit %d, want %d naming %s:\n%s", cmd, c.args, code, exitUsage, flag, stderr)
			}
		}
	}
}

// TestValidateTakesASharedConfigFile: a config file that run and
// maintain share holds maintain's keys, which run ignores; validate
// accepts them too, and still refuses a key no command has.
func TestValidateTakesASharedConfigFile(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "exporter.yaml")
	os.WriteFile(cfg, []byte("source: stdin\nsink: file://"+t.TempDir()+"\nexpire-after: 72h\ndry-run: false\n"), 0o644)
	if code, out, stderr := runExporter(t, nil, "validate", "--config", cfg); code != exitOK {
		t.Errorf("a file with maintain's keys: exit %d\n%s%s", code, out, stderr)
	}
	os.WriteFile(cfg, []byte("source: stdin\nexpire-aftr: 72h\n"), 0o644)
	if code, _, stderr := runExporter(t, nil, "validate", "--config", cfg); code != exitUsage || !strings.Contains(stderr, "expire-aftr: unknown key") {
		t.Errorf("a key no command has: exit %d\n%s", code, stderr)
	}
}

// TestCheckingLeavesNoSinkBehind: validate, and a run refused for its
// flags, leave no sink folder behind (a mistyped --sink used to become
// an empty lake that inspecting commands then took for a real one).
func TestCheckingLeavesNoSinkBehind(t *testing.T) {
	sink := filepath.Join(t.TempDir(), "not", "yet")
	if code, out, stderr := runExporter(t, nil, "validate", "--source", "stdin", "--sink", "file://"+sink); code != exitOK {
		t.Fatalf("validate: exit %d\n%s%s", code, out, stderr)
	}
	if code, _, stderr := runExporter(t, nil, "run", "--source", "stdin", "--sink", "file://"+sink, "--compression", "lz5"); code != exitUsage {
		t.Fatalf("run with a bad flag: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(sink))); !os.IsNotExist(err) {
		t.Errorf("checking made %s: %v", filepath.Dir(sink), err)
	}
}
