// Package e2e holds process-level tests: the real exporter binary against
// a Kafka-protocol broker process and a MinIO server, killed at random.
package e2e

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/checkpoint"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/duckq"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/gen"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/kafkatest"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/miniotest"
	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
)

func build(t *testing.T, dir, pkg string) string {
	t.Helper()
	out := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = ".."
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// TestCrashLoopExactlyOnce produces a generated stream (several tables,
// DDL in the middle) to a three-partition topic, then starts the exporter
// against a broker process (kfake, and Apache Kafka when the tests have
// one) and MinIO and kill -9s it at random moments,
// twelve times, while it uploads and checkpoints every few hundred
// milliseconds. A last run with --once finishes the job. DuckDB then
// proves that every DML record is in the lake exactly once with its table,
// op and key, and that nothing is left that a crash half-wrote.
func TestCrashLoopExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level crash loop")
	}
	creds := miniotest.Shared(t)
	bin := t.TempDir()
	exporter := build(t, bin, "./cmd/exporter")
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Broker) {
		var tp kafkatest.Topic
		if b.Name == "kfake" {
			tp = kfakeProcess(t, build(t, bin, "./tools/kfake"), 3)
		} else {
			tp = b.Topic(t, 3)
		}
		crashLoop(t, exporter, creds, tp, nil)
	})
}

// TestCrashLoopExactlyOnceWithCatalog is the crash loop with the Iceberg
// tables published through a SQL catalog (its metadata on the local disk,
// the data files on MinIO): afterwards every table, read through the
// catalog, holds each DML record once, the same rows as the glob read,
// and names only files that are in the lake. Each broker runs it with one
// catalog, SQLite against kfake and PostgreSQL (when the tests have one)
// against Apache Kafka: every loop costs a minute or two, and the
// catalog's behaviour under kills does not depend on the broker.
func TestCrashLoopExactlyOnceWithCatalog(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level crash loop")
	}
	creds := miniotest.Shared(t)
	bin := t.TempDir()
	exporter := build(t, bin, "./cmd/exporter")
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Broker) {
		dir := t.TempDir()
		cfg := tables.Config{Kind: tables.SQL, URI: "sqlite://" + filepath.Join(dir, "catalog.db"), Warehouse: "file://" + filepath.Join(dir, "warehouse"),
			// The PostgreSQL database outlives the test.
			Namespace: "crash_" + strconv.FormatInt(time.Now().UnixNano(), 36)}
		var tp kafkatest.Topic
		if b.Name == "kfake" {
			tp = kfakeProcess(t, build(t, bin, "./tools/kfake"), 3)
		} else {
			tp = b.Topic(t, 3)
			if dsn := os.Getenv("EXPORTER_TEST_POSTGRES_DSN"); dsn != "" {
				cfg.URI = dsn
			}
		}
		crashLoop(t, exporter, creds, tp, &cfg)
	})
}

// kfakeProcess runs kfake in a process of its own with a topic "cdc".
func kfakeProcess(t *testing.T, kfake string, partitions int) kafkatest.Topic {
	broker := exec.Command(kfake, "-topic", "cdc", "-partitions", strconv.Itoa(partitions))
	stdout, _ := broker.StdoutPipe()
	if err := broker.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { broker.Process.Kill(); broker.Wait() })
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return kafkatest.Topic{Addrs: []string{strings.TrimSpace(addr)}, Name: "cdc"}
}

func crashLoop(t *testing.T, exporter string, creds miniotest.Creds, tp kafkatest.Topic, cat *tables.Config) {
	bin := t.TempDir()
	var lines [][]byte
	st, err := gen.Write(io.Discard, gen.Options{Records: 24000, Tables: 5, Seed: 99, DDLEvery: 8000, Track: true, Lines: &lines})
	if err != nil {
		t.Fatal(err)
	}
	kafkatest.Produce(t, tp.Addrs, tp.Name, lines, kafkatest.TableKey)

	s3, cfg := miniotest.NewBucket(t, creds, "", nil)
	args := []string{"run", "--source", "kafka://" + tp.Addrs[0] + "/" + tp.Name + "?group=" + tp.Group("crash"), "--sink", "s3://" + cfg.Bucket + "/lake",
		"--s3-endpoint", creds.Endpoint, "--file-max-age", "300ms", "--file-max-rows", "1500",
		"--kafka-session-timeout", "6s", "--kafka-rebalance-timeout", "4s", "--log-format", "json", "--max-rejects", "0"}
	if cat != nil {
		args = append(args, "--catalog", string(cat.Kind), "--catalog-uri", cat.URI, "--catalog-warehouse", cat.Warehouse,
			"--catalog-namespace", cat.Namespace)
	}
	env := append(os.Environ(), "EXPORTER_S3_ACCESS_KEY_ID="+creds.AccessKey, "EXPORTER_S3_SECRET_ACCESS_KEY="+creds.SecretKey)
	logs, _ := os.Create(filepath.Join(bin, "exporter.log"))
	defer logs.Close()
	rng := rand.New(rand.NewPCG(42, 7))
	for i := 0; i < 12; i++ {
		cmd := exec.Command(exporter, args...)
		cmd.Env, cmd.Stdout, cmd.Stderr = env, logs, logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// A restarted instance waits for the group to drop the killed one
		// (session timeout) before it gets partitions; kill it a random
		// moment after that, while it reads, uploads and checkpoints.
		time.Sleep(time.Duration(6500+rng.IntN(3500)) * time.Millisecond)
		cmd.Process.Kill() // SIGKILL: no shutdown of any kind
		cmd.Wait()
	}
	final := exec.Command(exporter, append(args, "--once")...)
	final.Env, final.Stdout, final.Stderr = env, logs, logs
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- final.Run() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("final --once run: %v; log tail:\n%s", err, tail(filepath.Join(bin, "exporter.log"), 15))
		}
	case <-ctx.Done():
		final.Process.Kill()
		t.Fatalf("final --once run did not finish; log tail:\n%s", tail(filepath.Join(bin, "exporter.log"), 15))
	}

	// The kills must have hit working instances, not ones still joining.
	logText, _ := os.ReadFile(filepath.Join(bin, "exporter.log"))
	if n := strings.Count(string(logText), `"msg":"kafka partitions assigned"`); n < 10 {
		t.Errorf("only %d runs were assigned partitions before they were killed", n)
	}
	if n := strings.Count(string(logText), `"msg":"file written"`); n < 20 {
		t.Errorf("only %d files were written across the runs", n)
	}

	dir := t.TempDir()
	miniotest.Download(t, s3, dir)
	lake := filepath.Join(dir, "lake")

	// Every intent is settled: nothing a crash left half-done remains.
	if intents, _ := filepath.Glob(filepath.Join(lake, "_checkpoints", "intents", "*", "*")); len(intents) != 0 {
		t.Errorf("%d unsettled intents remain", len(intents))
	}
	// Every data file starts at or before its partition's checkpoint.
	nameRE := regexp.MustCompile(`part-(` + regexp.QuoteMeta(tp.Name) + `-\d+)-(\d+)-[0-9a-f]{8}\.parquet$`)
	files, _ := filepath.Glob(filepath.Join(lake, "*", "*", "*", "*.parquet"))
	for _, f := range files {
		m := nameRE.FindStringSubmatch(f)
		if m == nil {
			t.Fatalf("unexpected file %s", f)
		}
		data, err := os.ReadFile(filepath.Join(lake, filepath.FromSlash(checkpoint.Key(m[1]))))
		if err != nil {
			t.Fatal(err)
		}
		cp, err := checkpoint.Decode(data)
		first, _ := strconv.ParseInt(m[2], 10, 64)
		if err != nil || first > cp.Offset {
			t.Errorf("file %s starts past its partition's checkpoint %d (%v)", filepath.Base(f), cp.Offset, err)
		}
	}

	db := duckq.OpenTB(t)
	seen := 0
	for _, table := range st.TableNames {
		_, rows, err := duckq.Rows(db, fmt.Sprintf(`SELECT pos, op_type, ID::BIGINT, count(*) OVER (PARTITION BY pos)
			FROM read_parquet('%s/%s/*/*/*.parquet', hive_partitioning=true, union_by_name=true)`, lake, table))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			pos := r[0].(string)
			want, ok := st.Expected[pos]
			switch {
			case !ok:
				t.Fatalf("%s: row with unknown pos %s", table, pos)
			case r[3].(int64) != 1:
				t.Fatalf("pos %s is in the lake %d times", pos, r[3])
			case want.Table != table || want.Op != r[1].(string) || want.ID != r[2].(int64):
				t.Fatalf("pos %s: %s %s ID %v, want %+v", pos, table, r[1], r[2], want)
			}
			seen++
		}
	}
	if seen != st.DML {
		t.Fatalf("the lake holds %d of %d DML records", seen, st.DML)
	}
	if cat != nil {
		checkCatalog(t, db, *cat, "s3://"+cfg.Bucket+"/lake", lake, st)
	}
	_, versions, _ := duckq.Rows(db, fmt.Sprintf(`SELECT max(schema_version) FROM read_parquet('%s/*/*/*/*.parquet', hive_partitioning=true, union_by_name=true)`, lake))
	if fmt.Sprint(versions[0][0]) == "1" {
		t.Errorf("the DDL in the stream opened no schema version")
	}
}

// checkCatalog reads every table of the stream through the catalog: the
// data files its current snapshot names (under sink, downloaded to lake)
// must all be in the lake, and hold each DML record of the stream once.
func checkCatalog(t *testing.T, db *sql.DB, cfg tables.Config, sink, lake string, st gen.Stats) {
	t.Helper()
	ctx := context.Background()
	p, err := tables.Open(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	seen := 0
	for _, name := range st.TableNames {
		ident, err := p.Identifier(name)
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := p.Catalog().LoadTable(ctx, ident)
		if err != nil {
			t.Fatalf("load the table of %s: %v", name, err)
		}
		tasks, err := tbl.Scan().PlanFiles(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var files []string
		for _, task := range tasks {
			rel, ok := strings.CutPrefix(task.File.FilePath(), sink+"/")
			if !ok {
				t.Fatalf("%s names %s, outside the sink %s", name, task.File.FilePath(), sink)
			}
			local := filepath.Join(lake, filepath.FromSlash(rel))
			if _, err := os.Stat(local); err != nil {
				t.Errorf("%s names %s, which is not in the lake", name, task.File.FilePath())
			}
			files = append(files, "'"+local+"'")
		}
		glob, _ := filepath.Glob(filepath.Join(lake, name, "*", "*", "*.parquet"))
		if len(glob) != len(files) {
			t.Errorf("%s: the table names %d data files, the lake holds %d", name, len(files), len(glob))
		}
		_, rows, err := duckq.Rows(db, fmt.Sprintf(`SELECT pos, count(*) FROM read_parquet([%s], union_by_name=true) GROUP BY pos`, strings.Join(files, ",")))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if want, ok := st.Expected[r[0].(string)]; !ok || want.Table != name || r[1].(int64) != 1 {
				t.Fatalf("%s through the catalog: pos %s %d times (want once, in %+v)", name, r[0], r[1], want)
			}
			seen++
		}
	}
	if seen != st.DML {
		t.Fatalf("the tables hold %d of %d DML records", seen, st.DML)
	}
}

func tail(path string, n int) string {
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
