package e2e

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/gen"
	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
)

// TestMaintainCrashLoop: a lake with a SQLite catalog grows by a slice
// of a generated stream (five tables, DDL) per round, exported a few
// rows per file; after each, `exporter maintain` is started and kill
// -9'd a random moment later, while it compacts, commits, expires and
// deletes. A clean pass then leaves every table holding each change
// exactly once and no file in the tables' folders that the current
// snapshot does not hold: the killed passes' uncommitted files were
// orphans, and are gone.
func TestMaintainCrashLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level crash loop")
	}
	bin := t.TempDir()
	exporter := build(t, bin, "./cmd/exporter")
	var lines [][]byte
	st, err := gen.Write(io.Discard, gen.Options{Records: 6000, Tables: 5, Columns: 8, Seed: 77, DDLEvery: 1500,
		UpdateRatio: 0.3, DeleteRatio: 0.1, Track: true, Lines: &lines})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	lake, in := filepath.Join(dir, "lake"), filepath.Join(dir, "in.jsonl")
	catalog := []string{"--sink", "file://" + lake, "--catalog", "sql", "--catalog-uri", "sqlite://" + filepath.Join(dir, "catalog.db")}
	logs, _ := os.Create(filepath.Join(bin, "maintain.log"))
	defer logs.Close()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(exporter, append(args, catalog...)...)
		cmd.Stdout, cmd.Stderr = logs, logs
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v; log tail:\n%s", args[0], err, tail(filepath.Join(bin, "maintain.log"), 10))
		}
	}
	maintain := []string{"maintain", "--expire-after", "1ns", "--keep-snapshots", "2", "--orphan-age", "1ms", "--log-format", "json"}
	rng := rand.New(rand.NewPCG(34, 9))
	const rounds = 8
	killed := 0
	for i := range rounds {
		chunk := lines[:len(lines)*(i+1)/rounds]
		os.WriteFile(in, append(bytes.Join(chunk, []byte("\n")), '\n'), 0o644)
		run("run", "--source", "file:"+in, "--file-max-rows", "25", "--log-level", "warn")
		cmd := exec.Command(exporter, append(maintain, catalog...)...)
		cmd.Stdout, cmd.Stderr = logs, logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done: // finished before the kill: the next round has more to do
		case <-time.After(time.Duration(50+rng.IntN(700)) * time.Millisecond):
			cmd.Process.Kill() // SIGKILL: no shutdown of any kind
			<-done
			killed++
		}
	}
	if killed < rounds/2 {
		t.Fatalf("only %d of %d passes were killed while they ran", killed, rounds)
	}
	// The clean pass keeps only the current snapshot, so that every file
	// it does not hold is either expired (and deleted) or an orphan.
	run(append(maintain, "--keep-snapshots", "1")...)

	ctx := context.Background()
	pub, err := tables.Open(ctx, tables.Config{Kind: tables.SQL, URI: "sqlite://" + filepath.Join(dir, "catalog.db"),
		Warehouse: "file://" + lake + "/_iceberg"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	seen := map[string]int{}
	var live []string
	for _, name := range st.TableNames {
		at, err := pub.Read(ctx, name, []string{"pos"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		tr := array.NewTableReader(at, -1)
		for tr.Next() {
			pos := tr.RecordBatch().Column(0).(*array.String)
			for i := range pos.Len() {
				seen[pos.Value(i)]++
			}
		}
		tr.Release()
		at.Release()
		tbl, err := pub.LoadTable(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		files, err := tables.LiveFiles(ctx, tbl)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			live = append(live, strings.TrimPrefix(f.File.FilePath(), "file://"))
		}
	}
	for pos, want := range st.Expected {
		if seen[pos] != 1 {
			t.Errorf("change at %s (%s %s): %d times in the tables, want once", pos, want.Table, want.Op, seen[pos])
		}
	}
	if len(seen) != len(st.Expected) {
		t.Errorf("%d distinct changes in the tables, the stream has %d", len(seen), len(st.Expected))
	}
	onDisk, _ := filepath.Glob(filepath.Join(lake, "*", "schema_version=*", "*", "*.parquet"))
	slices.Sort(onDisk)
	slices.Sort(live)
	if !slices.Equal(onDisk, live) {
		t.Errorf("the tables' folders hold %d files, the tables %d: left over (the first five) %v", len(onDisk), len(live), diff(onDisk, live))
	}
	logText, _ := os.ReadFile(filepath.Join(bin, "maintain.log"))
	t.Logf("%d of %d passes killed; %d files live; %d tables maintained before kills", killed, rounds, len(live),
		strings.Count(string(logText), `"msg":"table maintained"`))
}

func diff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) && len(out) < 5 {
			out = append(out, x)
		}
	}
	return out
}
