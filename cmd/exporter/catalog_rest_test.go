package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/duckq"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/icebergtest"
	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
)

// restTableRead is what readRESTTables found of one table.
type restTableRead struct {
	snapshots       int
	rows, fileRows  int64           // through the catalog's scan; DuckDB's count over the table's files
	columns         map[string]bool // the current schema's
	filesWithoutIDs int             // data files of the current snapshot with a column that has no field ID
}

// TestRunPublishesToRESTCatalog: `exporter run --catalog rest` against
// Iceberg's REST catalog test server (scripts/restcatalog.sh) makes tables
// that iceberg-go reads through the server with the rows DuckDB counts in
// the files, the DDL's schema changes and field IDs in every file; the
// same input again adds no snapshot.
func TestRunPublishesToRESTCatalog(t *testing.T) {
	uri := os.Getenv("EXPORTER_TEST_REST_URI")
	if uri == "" {
		t.Skip("EXPORTER_TEST_REST_URI is not set (source scripts/restcatalog.sh and run restcatalog_start)")
	}
	// The server outlives the test and keeps its tables: a namespace of
	// this run's own. Two levels: the REST spec joins them with 0x1F in
	// paths, which Jetty (the test server's) refuses, so the client must
	// use the separator the server's /v1/config names instead.
	namespace := "exporter_test_" + strconv.FormatInt(time.Now().UnixNano(), 36) + ".sample"
	cfg := tables.Config{Kind: tables.REST, URI: uri, Namespace: namespace}
	sink := filepath.Join(t.TempDir(), "lake")
	args := []string{"run", "--source", "file:../../testdata/goldengate/sample.jsonl", "--sink", "file://" + sink, "--once",
		"--catalog", "rest", "--catalog-uri", uri, "--catalog-namespace", namespace}
	if code, _, stderr := runExporter(t, nil, args...); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	first := readRESTTables(t, cfg, sink)
	for _, tc := range []struct {
		table    string
		has, not string // a column the current schema has, and one the DDL dropped
	}{
		{"SALES.ORDERS", "CUSTOMER_TIER", ""},
		{"HR.EMPLOYEES", "SALARY", "ACTIVE"},
	} {
		got := first[tc.table]
		if got.snapshots == 0 {
			t.Fatalf("%s: no snapshot", tc.table)
		}
		// The sample holds 6 data records of each table.
		if got.rows != got.fileRows || got.rows != 6 {
			t.Errorf("%s: the Iceberg scan reads %d rows, the files hold %d; want 6 each", tc.table, got.rows, got.fileRows)
		}
		if !got.columns[tc.has] {
			t.Errorf("%s: the current schema lacks %s: %v", tc.table, tc.has, got.columns)
		}
		if tc.not != "" && got.columns[tc.not] {
			t.Errorf("%s: the current schema still has %s, dropped by the DDL: %v", tc.table, tc.not, got.columns)
		}
		if got.filesWithoutIDs > 0 {
			t.Errorf("%s: %d data files without Iceberg field IDs", tc.table, got.filesWithoutIDs)
		}
	}

	if code, _, stderr := runExporter(t, nil, args...); code != exitOK {
		t.Fatalf("the same input again: exit %d: %s", code, stderr)
	}
	for name, got := range readRESTTables(t, cfg, sink) {
		if got.snapshots != first[name].snapshots || got.rows != first[name].rows {
			t.Errorf("%s after the same input again: %d snapshots, %d rows; want %d and %d", name,
				got.snapshots, got.rows, first[name].snapshots, first[name].rows)
		}
	}
}

// readRESTTables scans the sample's tables through the catalog cfg names
// and counts their rows in the sink's files with DuckDB.
func readRESTTables(t *testing.T, cfg tables.Config, sink string) map[string]restTableRead {
	t.Helper()
	ctx := context.Background()
	p, err := tables.Open(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	db := duckq.OpenTB(t)
	out := map[string]restTableRead{}
	for _, name := range []string{"SALES.ORDERS", "HR.EMPLOYEES"} {
		tbl, rows := icebergtest.Scan(t, p, name)
		r := restTableRead{snapshots: len(tbl.Metadata().Snapshots()), rows: rows, columns: map[string]bool{}}
		for _, f := range tbl.Schema().Fields() {
			r.columns[f.Name] = true
		}
		_, counted, err := duckq.Rows(db, `SELECT count(*) FROM read_parquet('`+sink+`/`+name+`/*/*/*.parquet', union_by_name=true)`)
		if err != nil {
			t.Fatal(err)
		}
		r.fileRows = counted[0][0].(int64)
		tasks, err := tbl.Scan().PlanFiles(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range tasks {
			path := strings.TrimPrefix(task.File.FilePath(), "file://")
			_, missing, err := duckq.Rows(db, `SELECT count(*) FROM parquet_schema('`+path+`') WHERE field_id IS NULL AND num_children IS NULL`)
			if err != nil {
				t.Fatal(err)
			}
			if missing[0][0].(int64) > 0 {
				r.filesWithoutIDs++
			}
		}
		out[name] = r
	}
	return out
}

// TestRESTCatalogAuthentication: the REST catalog's credential and token
// properties, given as Spark users give them, reach the server as its
// users expect: a credential is exchanged for a token at
// /v1/oauth/tokens (the OAuth2 client-credentials flow), and every
// catalog request then carries the token; neither secret is printed. A
// proxy in front of the test server records the requests (the server
// itself accepts any caller).
func TestRESTCatalogAuthentication(t *testing.T) {
	uri := os.Getenv("EXPORTER_TEST_REST_URI")
	if uri == "" {
		t.Skip("EXPORTER_TEST_REST_URI is not set (source scripts/restcatalog.sh and run restcatalog_start)")
	}
	target, err := url.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, property, secret string
		wantToken              string // the Authorization of the catalog requests
		wantExchange           bool
	}{
		// The test server's token for a client-credentials grant is
		// "client-credentials-token:sub=" and the client id.
		{"credential", "credential=exporter-client:not-a-real-secret-1", "not-a-real-secret-1",
			"Bearer client-credentials-token:sub=exporter-client", true},
		{"token", "token=not-a-real-token-2", "not-a-real-token-2", "Bearer not-a-real-token-2", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			var requests []string // "METHOD PATH AUTHORIZATION"
			proxy := httputil.NewSingleHostReverseProxy(target)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				requests = append(requests, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
				mu.Unlock()
				proxy.ServeHTTP(w, r)
			}))
			defer srv.Close()
			namespace := "exporter_test_" + strconv.FormatInt(time.Now().UnixNano(), 36)
			sink := filepath.Join(t.TempDir(), "lake")
			code, stdout, stderr := runExporter(t, nil, "run", "--source", "file:../../testdata/goldengate/sample.jsonl",
				"--sink", "file://"+sink, "--once", "--log-level", "debug",
				"--catalog", "rest", "--catalog-uri", srv.URL, "--catalog-namespace", namespace, "--catalog-property", c.property)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if strings.Contains(stdout+stderr, c.secret) {
				t.Errorf("the output shows the secret %q", c.secret)
			}
			mu.Lock()
			defer mu.Unlock()
			exchanged, catalogRequests := false, 0
			for _, r := range requests {
				method, rest, _ := strings.Cut(r, " ")
				path, auth, _ := strings.Cut(rest, " ")
				switch {
				case method == http.MethodPost && path == "/v1/oauth/tokens":
					exchanged = true
				case path == "/v1/config":
					// Fetched before any token, as the REST spec allows.
				default:
					catalogRequests++
					if auth != c.wantToken {
						t.Errorf("%s %s carries Authorization %q, want %q", method, path, auth, c.wantToken)
					}
				}
			}
			if exchanged != c.wantExchange {
				t.Errorf("token exchange at /v1/oauth/tokens: %v, want %v; requests: %q", exchanged, c.wantExchange, requests)
			}
			if catalogRequests == 0 {
				t.Errorf("no catalog request went through the proxy: %q", requests)
			}
		})
	}
}

// TestUnreachableRESTCatalogFailsTheRun: a REST catalog that does not
// answer fails the run (exit 1) before anything is read, with an error
// that names the endpoint without its password and says what to check.
func TestUnreachableRESTCatalogFailsTheRun(t *testing.T) {
	// Port 1 (tcpmux), which nothing serves here, like the PostgreSQL
	// catalog's test.
	addr := "127.0.0.1:1"
	code, out, stderr := runExporter(t, nil, "run", "--source", "file:../../testdata/goldengate/sample.jsonl",
		"--sink", "file://"+t.TempDir(), "--once", "--log-format", "json",
		"--catalog", "rest", "--catalog-uri", "http://alice:hunter2secret@"+addr)
	if code != exitFailure {
		t.Errorf("exit %d, want %d: %s", code, exitFailure, stderr)
	}
	if !strings.Contains(stderr, addr) || !strings.Contains(stderr, "is the server running") {
		t.Errorf("the error does not name the catalog endpoint and what to check:\n%s", stderr)
	}
	if strings.Contains(stderr+out, "hunter2secret") {
		t.Errorf("the catalog password is echoed:\n%s%s", out, stderr)
	}
}
