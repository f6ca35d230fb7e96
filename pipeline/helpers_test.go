package pipeline_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/duckq"
	"github.com/lakehouse-exporter/lakehouse-exporter/pipeline"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
	"github.com/lakehouse-exporter/lakehouse-exporter/store"
	"github.com/lakehouse-exporter/lakehouse-exporter/writer"
)

// export runs the pipeline over files into dir with a checked allocator,
// and fails the test if any Arrow memory is left allocated afterwards.
func export(t *testing.T, dir string, mutate func(*pipeline.Config), paths ...string) (pipeline.Summary, error) {
	t.Helper()
	var st pipeline.Store
	if dir != "" {
		local, err := store.NewLocal(dir)
		if err != nil {
			t.Fatal(err)
		}
		st = local
	}
	src, err := source.NewFiles(paths, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dec, err := cdc.NewGoldenGate(cdc.GoldenGateNames{})
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	cfg := pipeline.Config{
		Source: src, Store: st, Decoder: dec, MaxRejects: -1, DecodeWorkers: 2,
		NewDecoder: func() pipeline.Decoder { d, _ := cdc.NewGoldenGate(cdc.GoldenGateNames{}); return d },
		Schema:     arrowschema.Options{BeforeImage: true},
		Writer:     writer.Config{Allocator: mem},
	}
	if mutate != nil {
		mutate(&cfg)
	}
	if cfg.Decoder != pipeline.Decoder(dec) {
		cfg.NewDecoder = nil // the test chose another decoder: decode sequentially with it
	}
	sum, err := pipeline.Run(context.Background(), cfg)
	mem.AssertSize(t, 0)
	return sum, err
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func openDuck(t *testing.T) *sql.DB { return duckq.OpenTB(t) }

// lakeGlob is the DuckDB source over every data file of dir.
func lakeGlob(dir, table string) string {
	if table == "" {
		table = "*"
	}
	return fmt.Sprintf("read_parquet('%s/%s/*/*/*.parquet', hive_partitioning=true, union_by_name=true)", dir, table)
}

func query(t *testing.T, db *sql.DB, q string) [][]any {
	t.Helper()
	_, rows, err := duckq.Rows(db, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return rows
}

// rowStrings renders rows as "a|b|c" strings for easy comparison.
func rowStrings(rows [][]any) []string { return duckq.Lines(rows) }

func equalLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\ngot:\n  %s\nwant:\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func dataFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			files = append(files, p)
		}
		return nil
	})
	return files
}

func hints(t *testing.T, raw map[string]string) map[string]arrowschema.Type {
	t.Helper()
	h, err := arrowschema.ParseHints(raw)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
