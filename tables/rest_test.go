package tables

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
)

// restURI is the REST catalog the tests run against (scripts/restcatalog.sh
// starts Iceberg's REST catalog test server); the test is skipped without
// one.
func restURI(t *testing.T) string {
	t.Helper()
	uri := os.Getenv("EXPORTER_TEST_REST_URI")
	if uri == "" {
		t.Skip("EXPORTER_TEST_REST_URI is not set (source scripts/restcatalog.sh and run restcatalog_start)")
	}
	return uri
}

func TestPublishREST(t *testing.T) {
	cfg := Config{Kind: REST, URI: restURI(t)}
	// testPublish names its table SALES.ORDERS in namespace SALES; the
	// server outlives the test, so an earlier run's table goes first.
	ctx := context.Background()
	p, err := Open(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Catalog().DropTable(ctx, []string{"SALES", "ORDERS"}); err != nil && !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Fatalf("drop an earlier run's SALES.ORDERS: %v", err)
	}
	p.Close()
	testPublish(t, cfg, t.TempDir())
}

// statusRecorder keeps the status a handler answered.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// TestRESTCommitConflictIsRetried: another writer commits to the table
// between a publisher's load and its commit; the server refuses the
// stale commit (409, its snapshot requirement fails) and the publisher
// commits again on the table as it is then, so the table holds both
// rounds. A proxy in front of the server lets the other writer in at the
// moment the first commit arrives.
func TestRESTCommitConflictIsRetried(t *testing.T) {
	uri := restURI(t)
	target, err := url.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dir := t.TempDir()
	// The server outlives the test: a namespace of this run's own.
	namespace := "exporter_test_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	direct, err := Open(ctx, Config{Kind: REST, URI: uri, Namespace: namespace}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	v1, err := direct.PrepareVersion(ctx, TableVersion{Table: "SALES.ORDERS", Version: 1, Schema: sourceSchema(1)})
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	theirs := writeFile(t, dir, "data/SALES.ORDERS/schema_version=1/dt=2026-03-01/part-b.parquet", v1.Schema, 1,
		[]int64{10, 11}, []time.Time{day, day}, 10)
	ours := writeFile(t, dir, "data/SALES.ORDERS/schema_version=1/dt=2026-03-01/part-a.parquet", v1.Schema, 1,
		[]int64{1, 2, 3}, []time.Time{day, day, day}, 0)

	commitPath := "/v1/namespaces/" + namespace + "/tables/SALES_ORDERS"
	var (
		interleaved atomic.Bool
		otherErr    error
		mu          sync.Mutex
		statuses    []int // of our commits
	)
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != commitPath {
			proxy.ServeHTTP(w, r)
			return
		}
		if interleaved.CompareAndSwap(false, true) {
			_, err := direct.Publish(ctx, Round{RunID: "run-b", RoundID: "1", Files: []DataFile{theirs}})
			mu.Lock()
			otherErr = err
			mu.Unlock()
		}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		proxy.ServeHTTP(rec, r)
		mu.Lock()
		statuses = append(statuses, rec.status)
		mu.Unlock()
	}))
	defer srv.Close()

	p, err := Open(ctx, Config{Kind: REST, URI: srv.URL, Namespace: namespace}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	res, err := p.Publish(ctx, Round{RunID: "run-a", RoundID: "1", Files: []DataFile{ours}})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got, theirErr := statuses, otherErr
	mu.Unlock()
	if theirErr != nil {
		t.Fatalf("the other writer's commit: %v", theirErr)
	}
	if len(got) != 2 || got[0] != http.StatusConflict || got[1] != http.StatusOK {
		t.Fatalf("our commits answered %v, want [409 200]: the stale one refused, the retry accepted", got)
	}
	if len(res) != 1 || res[0].Already {
		t.Fatalf("publish: %+v", res)
	}

	tbl, err := direct.Catalog().LoadTable(ctx, v1.Identifier)
	if err != nil {
		t.Fatal(err)
	}
	var rounds []string
	for _, s := range tbl.Metadata().Snapshots() {
		rounds = append(rounds, s.Summary.Properties[SummaryRunID]+"/"+s.Summary.Properties[SummaryRoundID])
	}
	if strings.Join(rounds, " ") != "run-b/1 run-a/1" {
		t.Errorf("snapshots of rounds %v, want run-b/1 then run-a/1", rounds)
	}
	if rows, _, _ := scan(t, tbl, 0); rows != 5 {
		t.Errorf("%d rows, want 5 (3 ours, 2 theirs)", rows)
	}
}

// TestPercentInRESTTableNameIsABadName: a table name with % cannot be
// sent to a REST catalog (see Identifier), so it is a bad name there, and
// only there.
func TestPercentInRESTTableNameIsABadName(t *testing.T) {
	for _, c := range []struct {
		kind      Kind
		namespace string
		table     string
		bad       bool
	}{
		{REST, "", "SALES.ORD%41ERS", true},
		{REST, "LAKE", "S%A.ORDERS", true}, // the schema is part of the table name then
		{REST, "", "SALES.ORDERS", false},
		{SQL, "", "SALES.ORD%41ERS", false},
		{Hadoop, "LAKE", "S%A.ORDERS", false},
	} {
		p := &Publisher{cfg: Config{Kind: c.kind, Namespace: c.namespace}.withDefaults()}
		_, err := p.Identifier(c.table)
		if got := errors.Is(err, ErrBadName); got != c.bad {
			t.Errorf("%s catalog, namespace %q, table %s: bad name %v (%v), want %v", c.kind, c.namespace, c.table, got, err, c.bad)
		}
	}
}
