package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/syncbuf"
)

// TestMaintainRefusesWithoutCatalog: without --catalog, maintain exits 2
// with why compaction needs table metadata and how to give it.
func TestMaintainRefusesWithoutCatalog(t *testing.T) {
	sink := t.TempDir()
	code, out, stderr := runExporter(t, nil, "maintain", "--sink", "file://"+sink)
	if code != exitUsage {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitUsage, out, stderr)
	}
	for _, want := range []string{"metadata", "--catalog hadoop|sql|rest|glue", "docs/maintenance.md"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, stderr)
		}
	}
}

// TestMaintainPassAndMetrics: the sample exported a row per file, one
// pass compacts it; the summary line and the metrics textfile say how
// many files were rewritten, and a dry run before it changes nothing.
func TestMaintainPassAndMetrics(t *testing.T) {
	dir := t.TempDir()
	sink := filepath.Join(dir, "lake")
	cat := []string{"--sink", "file://" + sink, "--catalog", "sql", "--catalog-uri", "sqlite://" + filepath.Join(dir, "c.db")}
	code, _, stderr := runExporter(t, nil, append([]string{"run", "--source", "file:../../testdata/goldengate/sample.jsonl", "--file-max-rows", "1"}, cat...)...)
	if code != exitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	files := func() []string {
		fs, _ := filepath.Glob(filepath.Join(sink, "*", "*", "*", "*.parquet"))
		return fs
	}
	before := files()
	code, out, stderr := runExporter(t, nil, append([]string{"maintain", "--dry-run"}, cat...)...)
	if code != exitOK || !strings.Contains(out, "nothing changed: would rewrite") || len(files()) != len(before) {
		t.Fatalf("dry run: exit %d, %d files (%d before)\n%s%s", code, len(files()), len(before), out, stderr)
	}
	textfile := filepath.Join(dir, "maintain.prom")
	profile := filepath.Join(dir, "cpu.pprof")
	code, out, stderr = runExporter(t, nil, append([]string{"maintain", "--metrics-textfile", textfile, "--log-level", "info", "--cpu-profile", profile}, cat...)...)
	if code != exitOK {
		t.Fatalf("maintain: exit %d\n%s%s", code, out, stderr)
	}
	if p, err := os.ReadFile(profile); err != nil || len(p) < 2 || p[0] != 0x1f || p[1] != 0x8b {
		t.Errorf("--cpu-profile wrote no gzipped profile (%d bytes): %v", len(p), err)
	}
	var rewritten int
	if _, err := fmt.Sscanf(out, "maintained 2 tables in %s %d files rewritten", new(string), &rewritten); err != nil || rewritten == 0 {
		t.Fatalf("summary %q: %v", out, err)
	}
	if !strings.Contains(stderr, `table maintained`) || !strings.Contains(stderr, `"progress":"2/2"`) {
		t.Errorf("no progress per table in the log:\n%s", stderr)
	}
	prom, err := os.ReadFile(textfile)
	if err != nil {
		t.Fatal(err)
	}
	var sum int
	for _, line := range strings.Split(string(prom), "\n") {
		if strings.HasPrefix(line, "exporter_maintain_files_rewritten_total{") {
			var n int
			fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &n)
			sum += n
		}
	}
	if sum != rewritten {
		t.Errorf("the metrics count %d files rewritten, the summary %d:\n%s", sum, rewritten, prom)
	}
	// Compacted files are encoded and stamped as the exporter's own.
	exported := createdBy(t, before[0])
	compacted := 0
	for _, f := range files() {
		if !slices.Contains(before, f) {
			compacted++
			if got := createdBy(t, f); got != exported {
				t.Errorf("compacted file %s: created_by %q, the exporter's files %q", f, got, exported)
			}
		}
	}
	if compacted == 0 {
		t.Error("no compacted file in the table folders")
	}
}

func createdBy(t *testing.T, path string) string {
	t.Helper()
	rd, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	return rd.MetaData().GetCreatedBy()
}

// TestLastPositionSurvivesCompaction: `exporter tables` shows each
// table's last source position from its files; once compaction replaced
// them and expiry deleted the small ones, the compacted files still say
// it (they carried none, and the column went blank).
func TestLastPositionSurvivesCompaction(t *testing.T) {
	dir := t.TempDir()
	sink := filepath.Join(dir, "lake")
	cat := []string{"--sink", "file://" + sink, "--catalog", "hadoop"}
	if code, _, stderr := runExporter(t, nil, append([]string{"run", "--source", "file:../../testdata/goldengate/sample.jsonl", "--file-max-rows", "1", "--once"}, cat...)...); code != exitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	positions := func() map[string]string {
		code, out, stderr := runExporter(t, nil, "tables", "--sink", "file://"+sink)
		if code != exitOK {
			t.Fatalf("tables: exit %d: %s", code, stderr)
		}
		got := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) == 5 {
				got[f[0]] = f[4]
			} else {
				got[f[0]] = ""
			}
		}
		return got
	}
	before := positions()
	if code, out, stderr := runExporter(t, nil, append([]string{"maintain", "--expire-after", "1ns", "--keep-snapshots", "1"}, cat...)...); code != exitOK || !strings.Contains(out, "files rewritten") {
		t.Fatalf("maintain: exit %d: %s%s", code, out, stderr)
	}
	after := positions()
	if len(before) != 2 || before["SALES.ORDERS"] == "" {
		t.Fatalf("positions before compaction: %v", before)
	}
	for table, pos := range before {
		if after[table] != pos {
			t.Errorf("%s: last position %q after compaction, %q before", table, after[table], pos)
		}
	}
}

// TestRebuildAfterCompactionResumesExactlyOnce: after a maintenance pass
// replaced every file of the first export by compacted files and
// expired the snapshots that held the old ones (so they are deleted),
// a rebuilt checkpoint still resumes after the compacted files' rows
// (it reads their lakehouse.source_ranges), and the rest of the stream
// lands once.
func TestRebuildAfterCompactionResumesExactlyOnce(t *testing.T) {
	first, rest, dml := rebuildStream(t)
	catalogArgs := func(sink string) []string {
		return []string{"--catalog", "sql", "--catalog-uri", "sqlite://" + filepath.Join(filepath.Dir(sink), "catalog.db")}
	}
	export := func(sink string, lines [][]byte) (int, string) {
		in := filepath.Join(filepath.Dir(sink), "in.jsonl")
		os.WriteFile(in, append(bytes.Join(lines, []byte("\n")), '\n'), 0o644)
		args := append([]string{"run", "--source", "file:" + in, "--sink", "file://" + sink, "--file-max-rows", "40"}, catalogArgs(sink)...)
		code, _, stderr := runExporter(t, nil, args...)
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
	args := append([]string{"maintain", "--sink", "file://" + sink, "--expire-after", "1ns", "--keep-snapshots", "1", "--orphan-age", "0"}, catalogArgs(sink)...)
	code, out, stderr := runExporter(t, nil, args...)
	if code != exitOK || !strings.Contains(out, "files rewritten") {
		t.Fatalf("maintain: exit %d\n%s%s", code, out, stderr)
	}
	parts, _ := filepath.Glob(filepath.Join(sink, "*", "*", "*", "part-*.parquet"))
	compacted, _ := filepath.Glob(filepath.Join(sink, "*", "*", "*", "compact-*.parquet"))
	if len(parts) != 0 || len(compacted) == 0 {
		t.Fatalf("after maintenance: %d exporter files left (want none: replaced and expired), %d compacted files\n%s", len(parts), len(compacted), out)
	}
	corruptAndRebuild(t, sink, onlyCheckpoint(t, sink), func() (int, string) { return export(sink, all) })
	for _, s := range []string{reference, sink} {
		if code, stderr := export(s, all); code != 0 {
			t.Fatalf("export of the whole stream: %s", stderr)
		}
	}
	checkSameLake(t, sink, reference, dml)
}

// TestMaintainScheduleInRun: `run --schedule ... --maintain-schedule ...`
// with the SQL catalog compacts the tables in the exporter's own process
// (a compacted file appears), the tables keep every row, and a stop ends
// both; without --catalog the flag is a usage error.
func TestMaintainScheduleInRun(t *testing.T) {
	dir := t.TempDir()
	sink := filepath.Join(dir, "lake")
	cat := []string{"--catalog", "sql", "--catalog-uri", "sqlite://" + filepath.Join(dir, "c.db")}
	code, _, stderr := runExporter(t, nil, "run", "--source", "stdin", "--sink", "file://"+sink, "--maintain-schedule", "@every 1s")
	if code != exitUsage || !strings.Contains(stderr, "--maintain-schedule") || !strings.Contains(stderr, "--catalog") {
		t.Fatalf("without --catalog: exit %d: %s", code, stderr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncbuf.Buffer
	done := make(chan int, 1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	go func() {
		done <- runContext(ctx, append([]string{"run", "--source", "file:../../testdata/goldengate/sample.jsonl", "--sink", "file://" + sink,
			"--file-max-rows", "1", "--schedule", "*/1 * * * * *", "--maintain-schedule", "*/1 * * * * *", "--metrics-addr", addr}, cat...), strings.NewReader(""), &out, &errb)
	}()
	waitUntil(t, func() bool {
		fs, _ := filepath.Glob(filepath.Join(sink, "*", "*", "*", "compact-*.parquet"))
		return len(fs) > 0
	})
	// The passes in the exporter's process feed its /metrics.
	waitUntil(t, func() bool {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		for _, line := range strings.Split(string(body), "\n") {
			if strings.HasPrefix(line, "exporter_maintain_files_rewritten_total{") && !strings.HasSuffix(line, " 0") {
				return true
			}
		}
		return false
	})
	cancel()
	select {
	case code := <-done:
		if code != exitOK && code != exitInterrupted {
			t.Errorf("exit %d: %s", code, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the run did not stop")
	}
	code, scanned, stderr := runExporter(t, nil, append([]string{"scan", "SALES.ORDERS", "--sink", "file://" + sink, "--columns", "pos"}, cat...)...)
	if code != exitOK || strings.Count(scanned, "=100") != 6 {
		t.Errorf("scan after the run: exit %d\n%s%s", code, scanned, stderr)
	}
}
