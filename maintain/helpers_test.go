package maintain_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/iceberg-go/table"
	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/gen"
	"github.com/lakehouse-exporter/lakehouse-exporter/maintain"
	"github.com/lakehouse-exporter/lakehouse-exporter/parquetenc"
	"github.com/lakehouse-exporter/lakehouse-exporter/partition"
	"github.com/lakehouse-exporter/lakehouse-exporter/pipeline"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
	"github.com/lakehouse-exporter/lakehouse-exporter/store"
	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
	"github.com/lakehouse-exporter/lakehouse-exporter/writer"
)

const samplePath = "../testdata/goldengate/sample.jsonl"

// lake is a sink with an Iceberg catalog that tests export into and
// maintain.
type lake struct {
	dir string // the sink's folder
	cat tables.Config
	st  *store.Local
}

func newLake(t testing.TB) *lake {
	t.Helper()
	dir := t.TempDir()
	sink := filepath.Join(dir, "lake")
	st, err := store.NewLocal(sink)
	if err != nil {
		t.Fatal(err)
	}
	return &lake{dir: sink, st: st, cat: tables.Config{Kind: tables.SQL, URI: "sqlite://" + filepath.Join(dir, "catalog.db"),
		Warehouse: "file://" + filepath.Join(sink, "_iceberg")}}
}

// export runs the exporter over paths into the lake, maxRows rows per
// file at most, publishing to the catalog.
func (l *lake) export(t testing.TB, maxRows int, paths ...string) {
	t.Helper()
	l.exportWith(t, writer.Config{MaxRows: maxRows}, paths...)
}

// exportWith runs the exporter over paths into the lake with the writer
// settings w, publishing to the catalog.
func (l *lake) exportWith(t testing.TB, w writer.Config, paths ...string) {
	t.Helper()
	src, err := source.NewFiles(paths, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dec, err := cdc.NewGoldenGate(cdc.GoldenGateNames{})
	if err != nil {
		t.Fatal(err)
	}
	cat := l.cat
	_, err = pipeline.Run(context.Background(), pipeline.Config{
		Source: src, Store: l.st, Decoder: dec, MaxRejects: -1, DecodeWorkers: -1,
		Schema:  arrowschema.Options{BeforeImage: true},
		Writer:  w,
		Catalog: &cat,
	})
	if err != nil {
		t.Fatalf("export %v: %v", paths, err)
	}
}

// genStream writes a generated stream with DDL, updates and deletes.
func genStream(t *testing.T, records int, seed uint64, start time.Time) string {
	t.Helper()
	var b bytes.Buffer
	if _, err := gen.Write(&b, gen.Options{Records: records, Tables: 2, Columns: 6, Seed: seed, DDLEvery: records / 3,
		UpdateRatio: 0.3, DeleteRatio: 0.2, NullRatio: 0.2, Start: start}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "gen.jsonl")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func (l *lake) open(t testing.TB) *tables.Publisher {
	t.Helper()
	p, err := tables.Open(context.Background(), l.cat, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// config is a maintenance pass over the lake with defaults the tests
// change.
func (l *lake) config(t testing.TB, p *tables.Publisher) maintain.Config {
	t.Helper()
	enc, err := parquetenc.New(parquetenc.Options{Compression: compress.Codecs.Zstd})
	if err != nil {
		t.Fatal(err)
	}
	return maintain.Config{Store: l.st, Publisher: p, Encoder: enc, OrphanAge: -1,
		Allocator: memory.NewCheckedAllocator(memory.NewGoAllocator())}
}

// rows reads a table through the catalog (iceberg-go's scan) as one
// sorted line per row, every column.
func rows(t *testing.T, p *tables.Publisher, name string) []string {
	t.Helper()
	at, err := p.Read(context.Background(), name, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	return tableLines(at)
}

func tableLines(at arrow.Table) []string {
	var out []string
	tr := array.NewTableReader(at, -1)
	defer tr.Release()
	for tr.Next() {
		rec := tr.RecordBatch()
		for i := range int(rec.NumRows()) {
			var parts []string
			for c := range int(rec.NumCols()) {
				parts = append(parts, rec.Schema().Field(c).Name+"="+rec.Column(c).ValueStr(i))
			}
			out = append(out, strings.Join(parts, "|"))
		}
	}
	slices.Sort(out)
	return out
}

// liveFiles lists the table's current data files by folder.
func liveFiles(t *testing.T, p *tables.Publisher, name string) (map[string][]string, *table.Table) {
	t.Helper()
	tbl, err := p.LoadTable(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	live, err := tables.LiveFiles(context.Background(), tbl)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, f := range live {
		dir := f.File.FilePath()[:strings.LastIndexByte(f.File.FilePath(), '/')] // path.Dir would make file:/// file:/
		out[dir] = append(out[dir], f.File.FilePath())
	}
	return out, tbl
}

// names lists the lake's source tables by their _schemas/ folders.
func (l *lake) names(t *testing.T) []string {
	t.Helper()
	keys, err := l.st.List(context.Background(), "_schemas/")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var out []string
	for _, k := range keys {
		parts := strings.Split(k, "/")
		if len(parts) == 3 && !seen[parts[1]] {
			seen[parts[1]] = true
			name, err := partition.ParseTableSegment(parts[1])
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, name)
		}
	}
	return out
}
