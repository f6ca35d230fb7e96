package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/icebergtest"
	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
)

// TestRunPublishesIcebergTables: `exporter run --catalog` with the SQL
// catalog on SQLite, and with the hadoop catalog and its default
// warehouse beside the data, makes tables that iceberg-go reads through
// the catalog with the rows of the files.
func TestRunPublishesIcebergTables(t *testing.T) {
	for _, c := range []struct {
		name string
		args func(dir string) []string
		cfg  func(dir, sink string) tables.Config
	}{
		{"sql", func(dir string) []string {
			return []string{"--catalog", "sql", "--catalog-uri", "sqlite://" + filepath.Join(dir, "x.db")}
		}, func(dir, sink string) tables.Config {
			return tables.Config{Kind: tables.SQL, URI: "sqlite://" + filepath.Join(dir, "x.db"), Warehouse: "file://" + sink + "/_iceberg"}
		}},
		{"hadoop", func(string) []string { return []string{"--catalog", "hadoop"} },
			func(dir, sink string) tables.Config {
				return tables.Config{Kind: tables.Hadoop, Warehouse: "file://" + sink + "/_iceberg"}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			sink := filepath.Join(dir, "lake")
			args := append([]string{"run", "--source", "file:../../testdata/goldengate/sample.jsonl", "--sink", "file://" + sink, "--once"}, c.args(dir)...)
			code, _, stderr := runExporter(t, nil, args...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			ctx := context.Background()
			p, err := tables.Open(ctx, c.cfg(dir, sink), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			for name, want := range map[string]int64{"SALES.ORDERS": 6, "HR.EMPLOYEES": 6} {
				if _, rows := icebergtest.Scan(t, p, name); rows != want {
					t.Errorf("%s: %d rows through the catalog, want %d", name, rows, want)
				}
			}
		})
	}
}

// sampleLake returns a folder, the path of a sink in it, and an input
// file in it holding the GoldenGate sample, whose bytes it returns too
// (to feed the input more records).
func sampleLake(t *testing.T) (dir, sink, in string, sample []byte) {
	t.Helper()
	dir = t.TempDir()
	sink, in = filepath.Join(dir, "lake"), filepath.Join(dir, "in.jsonl")
	sample, err := os.ReadFile("../../testdata/goldengate/sample.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, sample, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, sink, in, sample
}

// TestRunWithoutTheLakesCatalogIsRefused: once a lake's tables are
// published to a catalog, a run without --catalog is a usage error that
// says what to give and writes nothing (its files would never reach the
// tables, and maintenance would delete them as orphans); with the
// catalog again it runs. A lake never published to one takes runs
// without it.
func TestRunWithoutTheLakesCatalogIsRefused(t *testing.T) {
	_, sink, in, sample := sampleLake(t)
	run := func(extra ...string) (int, string) {
		code, _, stderr := runExporter(t, nil, append([]string{"run", "--source", "file:" + in, "--sink", "file://" + sink, "--once"}, extra...)...)
		return code, stderr
	}
	if code, stderr := run(); code != exitOK {
		t.Fatalf("first run, no catalog: exit %d: %s", code, stderr)
	}
	if code, stderr := run("--catalog", "hadoop"); code != exitOK {
		t.Fatalf("run with the catalog: exit %d: %s", code, stderr)
	}
	// More records arrive; a run forgets the catalog.
	if err := os.WriteFile(in, append(sample, sample...), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := filepath.Glob(filepath.Join(sink, "*", "*", "*", "*.parquet"))
	code, stderr := run()
	if code != exitUsage || !strings.Contains(stderr, "--catalog hadoop") || !strings.Contains(stderr, "_checkpoints/iceberg-catalog.json") {
		t.Fatalf("run without the lake's catalog: exit %d, want %d naming the catalog and the mark: %s", code, exitUsage, stderr)
	}
	if after, _ := filepath.Glob(filepath.Join(sink, "*", "*", "*", "*.parquet")); len(after) != len(before) {
		t.Errorf("the refused run left %d data files, %d before", len(after), len(before))
	}
	if code, stderr := run("--catalog", "hadoop"); code != exitOK {
		t.Fatalf("run with the catalog again: exit %d: %s", code, stderr)
	}
}

// TestAnotherCatalogIsRefused: a run or a maintenance pass through
// another catalog than the lake's is a usage error that names both
// without credentials and writes or deletes nothing: through it the
// run's files would reach tables the lake's catalog lacks, and a pass
// would take every file of the lake for an orphan. A mark of an earlier
// version (the kind alone) takes the next run's catalog as the lake's.
func TestAnotherCatalogIsRefused(t *testing.T) {
	dir, sink, in, sample := sampleLake(t)
	lakes := func(db string) []string {
		return []string{"--catalog", "sql", "--catalog-uri", "sqlite://" + filepath.Join(dir, db)}
	}
	run := func(catalog ...string) (int, string) {
		code, _, stderr := runExporter(t, nil, append([]string{"run", "--source", "file:" + in, "--sink", "file://" + sink, "--once"}, catalog...)...)
		return code, stderr
	}
	files := func() int {
		got, _ := filepath.Glob(filepath.Join(sink, "*", "*", "*", "*.parquet"))
		return len(got)
	}
	if code, stderr := run(lakes("cat.db")...); code != exitOK {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	markKey := filepath.Join(sink, "_checkpoints", "iceberg-catalog.json")
	mark, _ := os.ReadFile(markKey)
	if !strings.Contains(string(mark), "cat.db") {
		t.Fatalf("the mark does not name the catalog's database: %s", mark)
	}
	before := files()
	if err := os.WriteFile(in, append(sample, sample...), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr := run(lakes("OTHER.db")...)
	if code != exitUsage || !strings.Contains(stderr, "cat.db") || !strings.Contains(stderr, "OTHER.db") || !strings.Contains(stderr, "iceberg-catalog.json") {
		t.Fatalf("run through another catalog: exit %d, want %d naming both and the mark: %s", code, exitUsage, stderr)
	}
	if files() != before {
		t.Errorf("the refused run left %d data files, %d before", files(), before)
	}
	// A scheduled run with maintenance: refused at its start, before any
	// drain or pass.
	code, _, stderr = runExporter(t, nil, append([]string{"run", "--source", "file:" + in, "--sink", "file://" + sink,
		"--schedule", "@every 1h", "--maintain-schedule", "@every 1h"}, lakes("OTHER.db")...)...)
	if code != exitUsage || !strings.Contains(stderr, "OTHER.db") {
		t.Fatalf("scheduled run through another catalog: exit %d, want %d: %s", code, exitUsage, stderr)
	}
	code, _, stderr = runExporter(t, nil, append([]string{"maintain", "--sink", "file://" + sink, "--orphan-age", "1ns"}, lakes("OTHER.db")...)...)
	if code != exitUsage || !strings.Contains(stderr, "OTHER.db") {
		t.Fatalf("maintain through another catalog: exit %d, want %d: %s", code, exitUsage, stderr)
	}
	if files() != before {
		t.Errorf("the refused pass left %d data files, %d before", files(), before)
	}
	// The commands that read the tables refuse it too, and make no
	// catalog file of the mistyped path.
	for _, cmd := range [][]string{{"tables"}, {"views"}, {"scan", "SALES.ORDERS"}} {
		code, _, stderr = runExporter(t, nil, append(append(cmd, "--sink", "file://"+sink), lakes("OTHER.db")...)...)
		if code == exitOK || !strings.Contains(stderr, "OTHER.db") {
			t.Errorf("%s through another catalog: exit %d: %s", cmd[0], code, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "OTHER.db")); !os.IsNotExist(err) {
		t.Errorf("a refused command made the other catalog's file: %v", err)
	}
	// The same catalog with other options is the same catalog.
	if code, stderr := run(append(lakes("cat.db"), "--catalog-property", "commit.retry.num-retries=4")...); code != exitOK {
		t.Fatalf("run through the lake's catalog: exit %d: %s", code, stderr)
	}
	// A mark of an earlier version names the kind alone.
	if err := os.WriteFile(markKey, []byte(`{"kind":"sql","since":"2026-01-01T00:00:00Z"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stderr := run(lakes("cat.db")...); code != exitOK {
		t.Fatalf("run on a mark of an earlier version: exit %d: %s", code, stderr)
	}
	if mark, _ := os.ReadFile(markKey); !strings.Contains(string(mark), "cat.db") || !strings.Contains(string(mark), "2026-01-01") {
		t.Errorf("the earlier mark was not completed with the catalog, keeping its date: %s", mark)
	}
	// An earlier mark of another kind is not completed with this one.
	if err := os.WriteFile(markKey, []byte(`{"kind":"hadoop","since":"2026-01-01T00:00:00Z"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stderr := run(lakes("cat.db")...); code != exitUsage || !strings.Contains(stderr, `"hadoop"`) {
		t.Errorf("run through sql on an earlier hadoop mark: exit %d, want %d: %s", code, exitUsage, stderr)
	}
}

// TestCatalogFlagsAreChecked: bad catalog settings are usage errors
// (exit 2) that name the flag, in run and in validate, and a catalog
// URI's password is never echoed.
func TestCatalogFlagsAreChecked(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown kind", []string{"--catalog", "hive"}, "unknown kind"},
		{"uri without catalog", []string{"--catalog-uri", "sqlite:///tmp/x.db"}, "--catalog hadoop, sql, rest or glue"},
		{"sql without database", []string{"--catalog", "sql"}, "--catalog-uri"},
		{"sql with another database", []string{"--catalog", "sql", "--catalog-uri", "mysql://u:hunter2secret@h/db"}, "sqlite:///path or postgres://"},
		{"rest without endpoint", []string{"--catalog", "rest"}, "--catalog-uri"},
		{"hadoop on s3", []string{"--catalog", "hadoop", "--catalog-warehouse", "s3://bucket/wh"}, "allow-unsafe-commits"},
		{"bad namespace", []string{"--catalog", "hadoop", "--catalog-namespace", "a..b"}, "--catalog-namespace"},
		// A password with a character that ends it early: the driver would
		// read the rest as the host or the path and quote it in its error.
		{"password with a slash", []string{"--catalog", "sql", "--catalog-uri", "postgres://bob:hunter2/hunter2secret@127.0.0.1:1/cat"}, "%2F"},
		{"password with an at", []string{"--catalog", "sql", "--catalog-uri", "postgres://bob:hun@hunter2secret@127.0.0.1:1/cat"}, "%40"},
		{"password with a space", []string{"--catalog", "sql", "--catalog-uri", "postgres://bob:hunter2 hunter2secret@127.0.0.1:1/cat"}, "%20"},
		{"property with a colon", []string{"--catalog", "rest", "--catalog-uri", "http://127.0.0.1:1", "--catalog-property", "credential:client:hunter2secret"}, "--catalog-property"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, cmd := range []string{"run", "validate"} {
				args := append([]string{cmd, "--source", "stdin", "--sink", "file://" + t.TempDir()}, c.args...)
				code, out, stderr := runExporter(t, nil, args...)
				if code != exitUsage {
					t.Errorf("%s: exit %d, want %d; stderr: %s", cmd, code, exitUsage, stderr)
				}
				if !strings.Contains(stderr+out, c.want) {
					t.Errorf("%s: output does not mention %q:\n%s%s", cmd, c.want, out, stderr)
				}
				if strings.Contains(stderr+out, "hunter2secret") {
					t.Errorf("%s: the catalog password is echoed:\n%s%s", cmd, out, stderr)
				}
			}
		})
	}
}

// TestCatalogDatabasePasswordIsNeverEchoed: a PostgreSQL catalog that
// cannot be reached fails the run (exit 1) with an error that names the
// database without its password.
func TestCatalogDatabasePasswordIsNeverEchoed(t *testing.T) {
	code, out, stderr := runExporter(t, nil, "run", "--source", "file:../../testdata/goldengate/sample.jsonl",
		"--sink", "file://"+t.TempDir(), "--once", "--log-format", "json",
		"--catalog", "sql", "--catalog-uri", "postgres://alice:hunter2secret@127.0.0.1:1/cat?connect_timeout=2")
	if code != exitFailure {
		t.Errorf("exit %d, want %d: %s", code, exitFailure, stderr)
	}
	if !strings.Contains(stderr, "127.0.0.1:1") {
		t.Errorf("the error does not name the catalog database:\n%s", stderr)
	}
	if !strings.Contains(out, "NOT FINISHED: the run failed") || strings.Contains(out, "stopped before its end") {
		t.Errorf("the summary should say the run failed, not that it was stopped:\n%s", out)
	}
	if strings.Contains(stderr+out, "hunter2secret") {
		t.Errorf("the catalog password is echoed:\n%s%s", out, stderr)
	}
}

// TestSQLiteCatalogPaths: a SQLite catalog in a folder that does not
// exist fails the run with an error that says so (SQLite's own is
// "unable to open database file"); a path with a space is a path, not a
// URI to percent-encode.
func TestSQLiteCatalogPaths(t *testing.T) {
	dir := t.TempDir()
	run := func(db string) (int, string) {
		code, _, stderr := runExporter(t, nil, "run", "--source", "file:../../testdata/goldengate/sample.jsonl", "--sink", "file://"+filepath.Join(t.TempDir(), "lake"),
			"--once", "--catalog", "sql", "--catalog-uri", "sqlite://"+db)
		return code, stderr
	}
	missing := filepath.Join(dir, "no such folder", "catalog.db")
	if code, stderr := run(missing); code != exitFailure || !strings.Contains(stderr, filepath.Dir(missing)+" of the SQLite catalog") || !strings.Contains(stderr, "does not exist") {
		t.Errorf("catalog in a missing folder: exit %d, want %d saying the folder does not exist: %s", code, exitFailure, stderr)
	}
	spaced := filepath.Join(dir, "my catalogs", "catalog.db")
	if err := os.MkdirAll(filepath.Dir(spaced), 0o755); err != nil {
		t.Fatal(err)
	}
	if code, stderr := run(spaced); code != exitOK {
		t.Errorf("catalog in a folder with a space: exit %d: %s", code, stderr)
	}
}

// TestReadingAMissingSQLiteCatalog: a command that reads the tables
// through a SQLite catalog file that does not exist says so, instead of
// making an empty catalog there and reporting every table missing.
func TestReadingAMissingSQLiteCatalog(t *testing.T) {
	sink, db := t.TempDir(), filepath.Join(t.TempDir(), "typo.db")
	code, _, stderr := runExporter(t, nil, "tables", "--sink", "file://"+sink, "--catalog", "sql", "--catalog-uri", "sqlite://"+db)
	if code == exitOK || !strings.Contains(stderr, "the SQLite catalog "+db) {
		t.Errorf("tables through a missing SQLite catalog: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("the command made %s: %v", db, err)
	}
}
