package pipeline_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/lakehouse-exporter/lakehouse-exporter/checkpoint"
	"github.com/lakehouse-exporter/lakehouse-exporter/commit"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/catalogfail"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/gen"
	"github.com/lakehouse-exporter/lakehouse-exporter/pipeline"
	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
)

// errDied is what every write returns once the injected crash happened.
var errDied = errors.New("injected: the process died here")

// dyingStore lets writes through until die says the process died at
// one (that write fails too), and fails every write after it; reads keep
// working, as they do for the next process.
type dyingStore struct {
	pipeline.Store
	mu   sync.Mutex
	dead bool
	// die is asked before each write; after reports a write that went
	// through, so that a crash can follow a given write.
	die   func(op, key string) bool
	after func(op, key string)
}

func (s *dyingStore) write(op, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.dead && s.die != nil && s.die(op, key) {
		s.dead = true
	}
	if s.dead {
		return fmt.Errorf("%s %s: %w", op, key, errDied)
	}
	return nil
}

func (s *dyingStore) done(op, key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.after != nil {
		s.after(op, key)
	}
}

func (s *dyingStore) Put(ctx context.Context, key string, data []byte) error {
	if err := s.write("put", key); err != nil {
		return err
	}
	err := s.Store.Put(ctx, key, data)
	if err == nil {
		s.done("put", key)
	}
	return err
}

func (s *dyingStore) Delete(ctx context.Context, key string) error {
	if err := s.write("delete", key); err != nil {
		return err
	}
	return s.Store.Delete(ctx, key)
}

func (s *dyingStore) PutIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	if err := s.write("put-if-absent", key); err != nil {
		return "", err
	}
	etag, err := s.Store.PutIfAbsent(ctx, key, data)
	if err == nil {
		s.done("put-if-absent", key)
	}
	return etag, err
}

func (s *dyingStore) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	if err := s.write("put-if-match", key); err != nil {
		return "", err
	}
	etag, err := s.Store.PutIfMatch(ctx, key, data, etag)
	if err == nil {
		s.done("put-if-match", key)
	}
	return etag, err
}

// snapshotsAfter lets n snapshot commits through and fails the later
// ones, as a process dying there would.
func snapshotsAfter(n int) func() func(catalogfail.Call) error {
	return func() func(catalogfail.Call) error { return catalogfail.SnapshotsAfter(n, errDied) }
}

// isCheckpoint tells a partition checkpoint's key.
func isCheckpoint(key string) bool { return strings.HasPrefix(key, "_checkpoints/partitions/") }

// icebergCatalogs are the catalogs the crash tests run on: SQLite and
// hadoop here, PostgreSQL and the REST catalog when the tests have them.
func icebergCatalogs() map[string]func(dir string) tables.Config {
	cats := map[string]func(dir string) tables.Config{
		"sql-sqlite": func(dir string) tables.Config {
			return tables.Config{Kind: tables.SQL, URI: "sqlite://" + filepath.Join(dir, "catalog.db"), Warehouse: "file://" + filepath.Join(dir, "lake", "_iceberg")}
		},
		"hadoop": func(dir string) tables.Config {
			return tables.Config{Kind: tables.Hadoop, Warehouse: "file://" + filepath.Join(dir, "lake", "_iceberg")}
		},
	}
	if dsn := os.Getenv("EXPORTER_TEST_POSTGRES_DSN"); dsn != "" {
		cats["sql-postgres"] = func(dir string) tables.Config {
			// A catalog name of its own: the database outlives the test.
			return tables.Config{Kind: tables.SQL, Name: "k" + strconv.FormatInt(time.Now().UnixNano(), 36),
				URI: dsn, Warehouse: "file://" + filepath.Join(dir, "lake", "_iceberg")}
		}
	}
	if uri := os.Getenv("EXPORTER_TEST_REST_URI"); uri != "" {
		cats["rest"] = func(string) tables.Config { return restCatalog(uri) }
	}
	return cats
}

// genInput writes a generated stream (several tables, DDL in the middle)
// to a file and returns its path and what the lake must hold.
func genInput(t *testing.T, dir string) (string, gen.Stats) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "in.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := gen.Write(f, gen.Options{Records: 1200, Tables: 4, Seed: 5, DDLEvery: 400, Track: true})
	if err != nil {
		t.Fatal(err)
	}
	return f.Name(), st
}

// TestIcebergCrashPointsExactlyOnce kills a run with a catalog at each
// step of its commit round, then runs again: every table must then hold
// every change of the input exactly once, read through the catalog, and
// name no file that is not in the lake or that a pending intent holds.
func TestIcebergCrashPointsExactlyOnce(t *testing.T) {
	points := []struct {
		name    string
		store   func(s *dyingStore)
		newCat  func() func(catalogfail.Call) error // a fresh one per run; nil: the catalog works
		wantErr error                               // default errDied
	}{
		{name: "uploads half done", store: func(s *dyingStore) {
			n := 0
			s.die = func(op, key string) bool {
				if strings.HasSuffix(key, ".parquet") {
					n++
				}
				return n > 3
			}
		}},
		{name: "all uploaded, no table committed", newCat: snapshotsAfter(0)},
		{name: "some tables committed", newCat: snapshotsAfter(2)},
		{name: "catalog down after one table committed", wantErr: catalogfail.ErrDown, newCat: func() func(catalogfail.Call) error {
			down := false // from the second snapshot commit on, every call fails
			return func(c catalogfail.Call) error {
				down = down || c.Op == catalogfail.Commit && c.Snapshot && c.Seq > 1
				if down {
					return catalogfail.ErrDown
				}
				return nil
			}
		}},
		{name: "all committed, checkpoint not written", store: func(s *dyingStore) {
			// The claim's first checkpoint (put-if-absent) goes through.
			s.die = func(op, key string) bool { return isCheckpoint(key) && op == "put-if-match" }
		}},
		{name: "checkpoint written, not settled", store: func(s *dyingStore) {
			written := false
			s.after = func(op, key string) { written = written || (op == "put-if-match" && isCheckpoint(key)) }
			s.die = func(op, key string) bool { return written }
		}},
	}
	for catName, mk := range icebergCatalogs() {
		t.Run(catName, func(t *testing.T) {
			for _, pt := range points {
				t.Run(strings.ReplaceAll(pt.name, " ", "_"), func(t *testing.T) {
					dir := t.TempDir()
					lake := filepath.Join(dir, "lake")
					in, want := genInput(t, dir)
					cfg := mk(dir)
					crashing := cfg
					fc := catalogfail.New(nil)
					if pt.newCat != nil {
						fc.SetFail(pt.newCat())
					}
					crashing.WrapCatalog = fc.Wrap
					_, err := export(t, lake, func(c *pipeline.Config) {
						c.Catalog = &crashing
						c.Writer.MaxRows = 100
						if pt.store != nil {
							ds := &dyingStore{Store: c.Store}
							pt.store(ds)
							c.Store = ds
						}
					}, in)
					if pt.name == "checkpoint written, not settled" {
						// Nothing after the checkpoint needs a write to
						// succeed: settling intents is best effort.
						if err != nil {
							t.Fatalf("the run failed after its checkpoint: %v", err)
						}
					} else if pt.wantErr != nil {
						// The run fails naming a table and what to check.
						if !errors.Is(err, pt.wantErr) || !strings.Contains(err.Error(), "APP.T") || !strings.Contains(err.Error(), "check that the catalog is reachable") {
							t.Fatalf("the run with its catalog down ended with %v", err)
						}
					} else if !errors.Is(err, errDied) {
						t.Fatalf("the run did not die at its injected crash: %v", err)
					}
					if pt.name == "some tables committed" && fc.SnapshotsCommitted() != 2 {
						t.Fatalf("%d tables committed before the crash, want 2", fc.SnapshotsCommitted())
					}
					checkTablesNameLakeFiles(t, cfg, lake, want.TableNames, false)

					if _, err := export(t, lake, func(c *pipeline.Config) { c.Catalog = &cfg; c.Writer.MaxRows = 100 }, in); err != nil {
						t.Fatalf("the run after the crash: %v", err)
					}
					checkTablesExactlyOnce(t, cfg, lake, want)
					checkTablesNameLakeFiles(t, cfg, lake, want.TableNames, true)
				})
			}
		})
	}
}

// checkTablesExactlyOnce reads every table of the stream through the
// catalog: each DML record of the input must be there once (by pos), and
// no source position twice.
func checkTablesExactlyOnce(t *testing.T, cfg tables.Config, lake string, want gen.Stats) {
	t.Helper()
	ctx := context.Background()
	p, err := tables.Open(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	seen := map[string]int{}
	for _, name := range want.TableNames {
		at, err := p.Read(ctx, name, []string{"pos", "op_type", "src_partition", "src_offset"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		positions := map[string]int{}
		tr := array.NewTableReader(at, -1)
		for tr.Next() {
			rec := tr.RecordBatch()
			pos, part := column[*array.String](t, rec, "pos"), column[*array.String](t, rec, "src_partition")
			off := column[*array.Int64](t, rec, "src_offset")
			for i := 0; i < int(rec.NumRows()); i++ {
				seen[pos.Value(i)]++
				if w, ok := want.Expected[pos.Value(i)]; !ok || w.Table != name {
					t.Errorf("%s: row at pos %s is not one of its records (%+v)", name, pos.Value(i), w)
				}
				positions[part.Value(i)+"@"+strconv.FormatInt(off.Value(i), 10)]++
			}
		}
		tr.Release()
		at.Release()
		for k, n := range positions {
			if n != 1 {
				t.Errorf("%s: source position %s read %d times through the catalog", name, k, n)
			}
		}
	}
	missing, doubled := 0, 0
	for pos := range want.Expected {
		switch seen[pos] {
		case 1:
		case 0:
			missing++
		default:
			doubled++
		}
	}
	if missing+doubled > 0 || len(seen) != len(want.Expected) {
		t.Errorf("through the catalog: %d of %d DML records missing, %d read more than once, %d distinct read", missing, len(want.Expected), doubled, len(seen))
	}
}

func column[T arrow.Array](t *testing.T, rec arrow.RecordBatch, name string) T {
	t.Helper()
	idx := rec.Schema().FieldIndices(name)
	if len(idx) != 1 {
		t.Fatalf("no column %s in %s", name, rec.Schema())
	}
	c, ok := rec.Column(idx[0]).(T)
	if !ok {
		t.Fatalf("column %s is %s", name, rec.Column(idx[0]).DataType())
	}
	return c
}

// checkTablesNameLakeFiles: every data file the tables' current snapshots
// name is in the lake. After a finished run (settled) no intent is
// pending, and the tables name exactly the lake's data files, each once.
func checkTablesNameLakeFiles(t *testing.T, cfg tables.Config, lake string, names []string, settled bool) {
	t.Helper()
	ctx := context.Background()
	p, err := tables.Open(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var named []string
	for _, name := range names {
		ident, err := p.Identifier(name)
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := p.Catalog().LoadTable(ctx, ident)
		if err != nil {
			if !settled {
				continue // the crash came before the table was created
			}
			t.Fatal(err)
		}
		tasks, err := tbl.Scan().PlanFiles(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range tasks {
			path := strings.TrimPrefix(task.File.FilePath(), "file://")
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s names data file %s, which is not in the lake: %v", name, path, err)
			}
			named = append(named, path)
		}
	}
	if !settled {
		return
	}
	if intents := dataFiles(t, filepath.Join(lake, "_checkpoints", "intents")); len(intents) > 0 {
		t.Errorf("intents pending after a finished run: %v", intents)
	}
	if pending, _ := filepath.Glob(filepath.Join(lake, "_checkpoints", "intents", "*", "*")); len(pending) > 0 {
		t.Errorf("intents pending after a finished run: %v", pending)
	}
	var inLake []string
	for _, f := range dataFiles(t, lake) {
		if !strings.HasPrefix(f, filepath.Join(lake, "_iceberg")+string(filepath.Separator)) {
			inLake = append(inLake, f)
		}
	}
	sort.Strings(named)
	sort.Strings(inLake)
	if strings.Join(named, "\n") != strings.Join(inLake, "\n") {
		t.Errorf("the tables name %d data files, the lake holds %d:\ntables: %v\nlake: %v", len(named), len(inLake), named, inLake)
	}
}

// TestFencedRunNeverPublishes: another instance claims the input's
// partition while a run uploads its round. The run finds, before it
// publishes, that it lost the partition: it commits nothing to the
// tables, deletes its files and fails fenced; the new owner's export then
// leaves every change once in every table.
func TestFencedRunNeverPublishes(t *testing.T) {
	for catName, mk := range icebergCatalogs() {
		t.Run(catName, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			lake := filepath.Join(dir, "lake")
			in, want := genInput(t, dir)
			cfg := mk(dir)
			fenced := cfg
			fc := catalogfail.New(nil)
			fenced.WrapCatalog = fc.Wrap
			claimed := false
			_, err := export(t, lake, func(c *pipeline.Config) {
				c.Catalog = &fenced
				c.Writer.MaxRows = 100
				inner := c.Store
				ds := &dyingStore{Store: inner}
				ds.after = func(op, key string) {
					if claimed || !strings.HasSuffix(key, ".parquet") {
						return
					}
					claimed = true
					// Another instance takes every partition over.
					keys, err := inner.List(ctx, "_checkpoints/partitions/")
					if err != nil || len(keys) == 0 {
						t.Errorf("no checkpoint to take over (%v)", err)
						return
					}
					other := commit.New(commit.Config{Store: inner, Run: "other"})
					for _, k := range keys {
						name := strings.TrimSuffix(strings.TrimPrefix(k, "_checkpoints/partitions/"), ".json")
						if _, err := other.Take(ctx, name, time.Now()); err != nil {
							t.Errorf("take %s over: %v", name, err)
						}
					}
				}
				c.Store = ds
			}, in)
			if !claimed || !errors.Is(err, checkpoint.ErrFenced) {
				t.Fatalf("the run whose partition was taken over ended with %v (taken over: %v)", err, claimed)
			}
			if n := fc.SnapshotsCommitted(); n != 0 {
				t.Errorf("the fenced run committed %d snapshots to the tables", n)
			}
			if _, err := export(t, lake, func(c *pipeline.Config) { c.Catalog = &cfg; c.Writer.MaxRows = 100 }, in); err != nil {
				t.Fatalf("the new owner's run: %v", err)
			}
			checkTablesExactlyOnce(t, cfg, lake, want)
			checkTablesNameLakeFiles(t, cfg, lake, want.TableNames, true)
		})
	}
}

// TestRESTCatalogOutageResumes: the REST catalog goes away (its address
// stops answering, as a stopped server's does) after the first table of
// a round committed. The run fails naming a table and what to check; when
// the catalog is back, the next run leaves every change once.
func TestRESTCatalogOutageResumes(t *testing.T) {
	uri := os.Getenv("EXPORTER_TEST_REST_URI")
	if uri == "" {
		t.Skip("EXPORTER_TEST_REST_URI is not set (source scripts/restcatalog.sh and run restcatalog_start)")
	}
	target, err := url.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	var down atomic.Bool
	var commits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			// A stopped server: the connection closes without an answer.
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		if r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/tables/") {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"add-snapshot"`)) && commits.Add(1) > 1 {
				down.Store(true)
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					conn.Close()
				}
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	defer srv.Close()

	dir := t.TempDir()
	lake := filepath.Join(dir, "lake")
	in, want := genInput(t, dir)
	cfg := restCatalog(srv.URL)
	_, err = export(t, lake, func(c *pipeline.Config) { c.Catalog = &cfg; c.Writer.MaxRows = 100 }, in)
	if err == nil || !down.Load() || !strings.Contains(err.Error(), "APP.T") || !strings.Contains(err.Error(), "check that the catalog is reachable") {
		t.Fatalf("the run whose catalog went away ended with %v (down: %v)", err, down.Load())
	}
	down.Store(false)
	commits.Store(-1 << 30) // back for good
	if _, err := export(t, lake, func(c *pipeline.Config) { c.Catalog = &cfg; c.Writer.MaxRows = 100 }, in); err != nil {
		t.Fatalf("the run after the catalog came back: %v", err)
	}
	checkTablesExactlyOnce(t, cfg, lake, want)
	checkTablesNameLakeFiles(t, cfg, lake, want.TableNames, true)
}
