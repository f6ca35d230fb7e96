package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostileTable is a table name that, printed raw, would set the
// terminal's title, clear the screen and forge a summary line.
const hostileTable = "EVIL.T\x1b]0;pwned\x07\x1b[2J\nrows written:   FORGED"

// TestTableNamesWithControlCharactersAreEscaped: the run summary,
// exporter tables and exporter schema show a hostile table name with its
// control characters escaped, never raw.
func TestTableNamesWithControlCharactersAreEscaped(t *testing.T) {
	esc := func(s string) string { return strings.ReplaceAll(s, `"`, `\"`) }
	jsonName := esc(strings.NewReplacer("\x1b", `\u001b`, "\x07", `\u0007`, "\n", `\n`).Replace(hostileTable))
	in := filepath.Join(t.TempDir(), "in.jsonl")
	os.WriteFile(in, []byte(`{"op_type":"OBJECT_METADATA","qual_table":"`+jsonName+`","columns":{"ID":{"type":"number","null":false,"key":true}}}
{"qual_table":"`+jsonName+`","op_type":"INSERT","op_ts":"2026-07-15T00:00:00Z","xid":"t","pos":"G-1","after":{"ID":1}}
`), 0o644)
	sink := t.TempDir()
	code, out, stderr := runExporter(t, nil, "run", "--source", "file:"+in, "--sink", "file://"+sink)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := `EVIL.T\x1b]0;pwned\x07\x1b[2J\x0arows written:   FORGED`
	code, tables, stderr := runExporter(t, nil, "tables", "--sink", "file://"+sink)
	if code != 0 {
		t.Fatalf("tables: exit %d: %s", code, stderr)
	}
	code, schema, stderr := runExporter(t, nil, "schema", hostileTable, "--sink", "file://"+sink)
	if code != 0 {
		t.Fatalf("schema: exit %d: %s", code, stderr)
	}
	_, _, missing := runExporter(t, nil, "schema", hostileTable+"X", "--sink", "file://"+sink)
	for name, text := range map[string]string{"summary": out, "tables": tables, "schema": schema, "schema error": missing} {
		if strings.ContainsAny(text, "\x1b\x07") || strings.Contains(text, "\nrows written:   FORGED") {
			t.Errorf("%s shows control characters raw:\n%q", name, text)
		}
		if name != "schema error" && !strings.Contains(text, want) {
			t.Errorf("%s does not show the escaped name %s:\n%s", name, want, text)
		}
	}
}

// TestKafkaURLPasswordIsNeverEchoed: a password put in a Kafka URL is
// redacted from the usage error of run and from validate's report.
func TestKafkaURLPasswordIsNeverEchoed(t *testing.T) {
	src := "kafka://alice:hunter2secret@broker:9092/cdc?group=g"
	code, out, stderr := runExporter(t, nil, "run", "--source", src, "--sink", "file://"+t.TempDir())
	if code != exitUsage || !strings.Contains(stderr, "the URL does not carry credentials") || !strings.Contains(stderr, "--kafka-username") {
		t.Errorf("run: exit %d: %s", code, stderr)
	}
	vcode, vout, vstderr := runExporter(t, nil, "validate", "--source", src, "--sink", "file://"+t.TempDir())
	if vcode != exitUsage {
		t.Errorf("validate: exit %d: %s", vcode, vstderr)
	}
	for _, text := range []string{out, stderr, vout, vstderr} {
		if strings.Contains(text, "hunter2secret") {
			t.Errorf("the password is echoed:\n%s", text)
		}
	}
	if !strings.Contains(stderr, "***@broker:9092") {
		t.Errorf("the error does not show which broker is meant:\n%s", stderr)
	}
}

// TestPprofNeedsMetricsAddr: --pprof alone would serve nothing; it is a
// usage error that says what to add, in run and in validate.
func TestPprofNeedsMetricsAddr(t *testing.T) {
	for _, args := range [][]string{{"run", "--source", "stdin", "--pprof"}, {"validate", "--source", "stdin", "--pprof"}} {
		code, _, stderr := runExporter(t, nil, append(args, "--sink", "file://"+t.TempDir())...)
		if code != exitUsage || !strings.Contains(stderr, "--pprof") || !strings.Contains(stderr, "--metrics-addr") {
			t.Errorf("%v: exit %d, want %d: %s", args, code, exitUsage, stderr)
		}
	}
}

func TestTermSafe(t *testing.T) {
	for in, want := range map[string]string{
		"SALES.ORDERS":        "SALES.ORDERS",
		"a\x1b[2Jb":           `a\x1b[2Jb`,
		"tab\there":           `tab\x09here`,
		"c1\u009bx":           `c1\u009bx`,
		"bidi\u202egnp.exe":   `bidi\u202egnp.exe`,
		"bad\xffutf8":         `bad\xffutf8`,
		"Zürich 東京":           "Zürich 東京",
		"line1\nline2\x7fend": `line1\x0aline2\x7fend`,
	} {
		if got := termSafe(in, false); got != want {
			t.Errorf("termSafe(%q) = %q, want %q", in, got, want)
		}
	}
	if got := termSafe("a\nb\x1b", true); got != "a\nb\\x1b" {
		t.Errorf("with newlines kept: %q", got)
	}
}

// TestLogsRedactCredentials: string and error values of log lines lose
// the credentials they carry, in JSON and text logs.
func TestLogsRedactCredentials(t *testing.T) {
	for _, format := range []string{"json", "text"} {
		var buf strings.Builder
		logger := newLogger(&buf, format, "info")
		logger.Error("cannot join", "brokers", "alice:hunter2secret@b1:9092", "error", errors.New(`dial kafka://bob:hunter2secret@b2:9092: refused`))
		if strings.Contains(buf.String(), "hunter2secret") || !strings.Contains(buf.String(), "***@b1:9092") || !strings.Contains(buf.String(), "***@b2:9092") {
			t.Errorf("%s log: %s", format, buf.String())
		}
	}
}

// TestLibraryLogLinesJoinTheLog: a line a library prints with the
// standard log package (iceberg-go warns that way) becomes a WARN record
// of the command's JSON log, its credentials redacted like the rest.
func TestLibraryLogLinesJoinTheLog(t *testing.T) {
	defer log.SetOutput(os.Stderr)
	defer log.SetFlags(log.Flags())
	var buf strings.Builder
	newLogger(&buf, "json", "info")
	log.Printf("hadoop catalog: failed to write version hint for s3://carol:hunter2secret@minio/wh: %v", errors.New("denied"))
	var rec map[string]any
	if err := json.Unmarshal([]byte(buf.String()), &rec); err != nil {
		t.Fatalf("not one JSON record: %q: %v", buf.String(), err)
	}
	if rec["level"] != "WARN" || !strings.HasPrefix(fmt.Sprint(rec["msg"]), "hadoop catalog: failed to write version hint") || rec["from"] != "library" {
		t.Errorf("record %v, want a WARN with the library's line", rec)
	}
	if strings.Contains(buf.String(), "hunter2secret") {
		t.Errorf("credentials in the log: %s", buf.String())
	}
}
