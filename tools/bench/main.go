// Command bench measures the exporter end to end on a generated
// GoldenGate (or Qlik Replicate) stream: it runs the exporter binary as a child process (so
// that its peak RSS and CPU time are its own), runs DuckDB's one-pass
// conversion of the same input in the same run, prints both and their
// ratio, and checks the exporter's output row for row against DuckDB's
// reading of the input.
//
//	go run ./tools/bench -records 2000000 -columns 8 -max-columns 20
//
// scripts/bench.sh builds the exporter and calls it.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/duckq"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/gen"
)

type options struct {
	gen       gen.Options
	exporter  string
	work      string
	budget    int64
	runs      int
	duckdb    bool
	check     bool
	profile   string
	extraArgs []string
	// compareTables, when set, also runs the exporter on the same stream
	// spread over this many tables, alternating with the first so that
	// both see the same phases of a noisy machine.
	compareTables int
	stdout        io.Writer // the report
}

func main() {
	var o options
	flag.IntVar(&o.gen.Records, "records", 2_000_000, "DML records in the stream")
	flag.IntVar(&o.gen.Tables, "tables", 4, "tables")
	flag.IntVar(&o.gen.Columns, "columns", 8, "columns per table (at least 6)")
	flag.IntVar(&o.gen.MaxColumns, "max-columns", 20, "each table gets between -columns and this many columns")
	flag.Float64Var(&o.gen.UpdateRatio, "update-ratio", 0.3, "share of updates")
	flag.Float64Var(&o.gen.DeleteRatio, "delete-ratio", 0.1, "share of deletes")
	flag.Float64Var(&o.gen.NullRatio, "null-ratio", 0.1, "share of nullable values that are null")
	flag.Uint64Var(&o.gen.Seed, "seed", 1, "random seed; the same flags give the same stream")
	flag.StringVar(&o.gen.Format, "format", gen.FormatGoldenGate, "the stream's format: goldengate or qlik (bare Qlik Replicate messages, values as strings)")
	flag.StringVar(&o.exporter, "exporter", "", "exporter binary (default: go build ./cmd/exporter into -work)")
	flag.StringVar(&o.work, "work", filepath.Join(os.TempDir(), "lakehouse-bench"), "folder for the stream (kept and reused) and the outputs")
	flag.Int64Var(&o.budget, "max-buffer-bytes", 256<<20, "the exporter's buffer budget (--max-buffer-bytes)")
	flag.IntVar(&o.runs, "runs", 1, "runs of each converter; the best is reported")
	flag.BoolVar(&o.duckdb, "duckdb", true, "also run DuckDB's conversion and print the ratio")
	flag.BoolVar(&o.check, "check", true, "check the exporter's output row for row against the input")
	flag.StringVar(&o.profile, "cpu-profile", "", "write the exporter's CPU profile of the last run here")
	flag.IntVar(&o.compareTables, "compare-tables", 0, "also export the same stream spread over this many tables, each run right after the first stream's, and print the throughput ratio")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: bench [flags] [-- exporter run flags]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	o.extraArgs, o.stdout = flag.Args(), os.Stdout
	if err := run(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := os.MkdirAll(o.work, 0o755); err != nil {
		return err
	}
	unlock, err := lockWork(o.work)
	if err != nil {
		return err
	}
	defer unlock()
	in, st, err := stream(o, log)
	if err != nil {
		return err
	}
	if o.exporter == "" {
		o.exporter = filepath.Join(o.work, "exporter")
		log.Info("building the exporter", "out", o.exporter)
		build := exec.CommandContext(ctx, "go", "build", "-o", o.exporter, "./cmd/exporter")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("go build ./cmd/exporter (run bench from the repository root): %w", err)
		}
	}
	fmt.Fprintf(o.stdout, "stream: %d DML records, %d tables, %d bytes (%.0f bytes/record), %s\n",
		st.DML, len(st.TableNames), st.Bytes, float64(st.Bytes)/float64(st.DML), in)

	var cmpIn, cmpOut string
	var cmpSt gen.Stats
	if o.compareTables > 0 {
		oc := o
		oc.gen.Tables = o.compareTables
		if cmpIn, cmpSt, err = stream(oc, log); err != nil {
			return err
		}
		cmpOut = filepath.Join(o.work, fmt.Sprintf("lake-t%d", o.compareTables))
		fmt.Fprintf(o.stdout, "compared stream: %d DML records, %d tables, %d bytes (%.0f bytes/record), %s\n",
			cmpSt.DML, len(cmpSt.TableNames), cmpSt.Bytes, float64(cmpSt.Bytes)/float64(cmpSt.DML), cmpIn)
	}

	out := filepath.Join(o.work, "lake")
	var best, cmpBest *exportRun
	for i := range o.runs {
		profile := ""
		if i == o.runs-1 {
			profile = o.profile
		}
		r, err := timedExport(ctx, o, in, out, profile, log)
		if err != nil {
			return err
		}
		log.Info("exporter run", "n", i+1, "seconds", r.wall.Seconds(), "peak_rss_mib", r.peakRSS>>20)
		if best == nil || r.wall < best.wall {
			best = r
		}
		if cmpIn != "" {
			r, err := timedExport(ctx, o, cmpIn, cmpOut, "", log)
			if err != nil {
				return err
			}
			log.Info("exporter run, compared stream", "n", i+1, "seconds", r.wall.Seconds(), "peak_rss_mib", r.peakRSS>>20)
			if cmpBest == nil || r.wall < cmpBest.wall {
				cmpBest = r
			}
		}
	}
	rate := func(st gen.Stats, d time.Duration) (float64, float64) {
		return float64(st.DML) / d.Seconds(), float64(st.Bytes) / d.Seconds() / 1e6
	}
	rps, mbps := rate(st, best.wall)
	report := func(name string, r *exportRun, rps, mbps float64) {
		fmt.Fprintf(o.stdout, "%s %.2fs  %.0f records/s  %.1f MB/s  out %d bytes  peak RSS %d MiB (budget %d MiB, %.2f of it)  cpu %.1fs user %.1fs sys  allocated %s\n",
			name, r.wall.Seconds(), rps, mbps, r.outBytes, r.peakRSS>>20, o.budget>>20, float64(r.peakRSS)/float64(o.budget),
			r.user.Seconds(), r.sys.Seconds(), r.allocated)
	}
	report("exporter:", best, rps, mbps)
	if cmpBest != nil {
		crps, cmbps := rate(cmpSt, cmpBest.wall)
		report(fmt.Sprintf("exporter, %d tables:", o.compareTables), cmpBest, crps, cmbps)
		fmt.Fprintf(o.stdout, "ratio %d tables / %d tables: %.2f in records/s, %.2f in MB/s (best run of each, run alternately)\n",
			o.compareTables, o.gen.Tables, crps/rps, cmbps/mbps)
	}

	var db *sql.DB
	if o.duckdb || o.check {
		if db, err = duckq.Open(); err != nil {
			return err
		}
		defer db.Close()
	}
	if o.duckdb {
		var dbest time.Duration
		var dout int64
		for range o.runs {
			dir := filepath.Join(o.work, "duckdb")
			os.RemoveAll(dir)
			if err := warm(in, log); err != nil {
				return err
			}
			start := time.Now()
			convert := duckq.ConvertSQL(in, dir)
			if o.gen.Format == gen.FormatQlik {
				convert = duckq.ConvertQlikSQL(in, dir)
			}
			if _, err := db.ExecContext(ctx, convert); err != nil {
				return fmt.Errorf("duckdb conversion: %w", err)
			}
			if d := time.Since(start); dbest == 0 || d < dbest {
				dbest = d
			}
			dout = dirSize(dir)
			os.RemoveAll(dir)
		}
		drps, dmbps := rate(st, dbest)
		fmt.Fprintf(o.stdout, "duckdb:   %.2fs  %.0f records/s  %.1f MB/s  out %d bytes\n", dbest.Seconds(), drps, dmbps, dout)
		fmt.Fprintf(o.stdout, "ratio exporter/duckdb: %.2f\n", rps/drps)
	}
	if o.check {
		if err := check(ctx, db, o.stdout, o.gen.Format, in, out); err != nil {
			return err
		}
		if cmpIn != "" {
			if err := check(ctx, db, o.stdout, o.gen.Format, cmpIn, cmpOut); err != nil {
				return err
			}
		}
	}
	return nil
}

// timedExport is export into an emptied out, with in read into the page
// cache first.
func timedExport(ctx context.Context, o options, in, out, profile string, log *slog.Logger) (*exportRun, error) {
	os.RemoveAll(out)
	if err := warm(in, log); err != nil {
		return nil, err
	}
	return export(ctx, o, in, out, profile)
}

// stream writes the generated input once per set of options and reuses it.
func stream(o options, log *slog.Logger) (string, gen.Stats, error) {
	g := o.gen
	name := fmt.Sprintf("stream-r%d-t%d-c%d-%d-u%g-d%g-n%g-s%d.jsonl", g.Records, g.Tables, g.Columns, g.MaxColumns,
		g.UpdateRatio, g.DeleteRatio, g.NullRatio, g.Seed)
	if g.Format == gen.FormatQlik {
		name = "qlik-" + name
	}
	path := filepath.Join(o.work, name)
	statsPath := path + ".stats"
	if b, err := os.ReadFile(statsPath); err == nil {
		var st gen.Stats
		var tables int
		info, serr := os.Stat(path)
		if _, err := fmt.Sscan(string(b), &st.DML, &st.Bytes, &tables); err == nil && serr == nil && info.Size() == st.Bytes {
			st.TableNames = make([]string, tables)
			return path, st, nil
		}
	}
	log.Info("generating the stream", "path", path)
	f, err := os.Create(path)
	if err != nil {
		return "", gen.Stats{}, err
	}
	st, err := gen.Write(f, g)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", st, err
	}
	return path, st, os.WriteFile(statsPath, fmt.Appendf(nil, "%d %d %d\n", st.DML, st.Bytes, len(st.TableNames)), 0o644)
}

// warm reads the input once before a timed run, so that every run reads
// it from the page cache. Otherwise whichever ran first after the file
// left the cache paid for the disk: a cold 1.6 GB Qlik stream cost the
// exporter 3.5 s in read(2), and DuckDB, run after it, nothing.
func warm(path string, log *slog.Logger) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	start := time.Now()
	buf, n := make([]byte, 1<<20), 0
	for {
		k, err := f.Read(buf)
		n += k
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("read %s into the page cache: %w", path, err)
		}
	}
	log.Debug("input read into the page cache", "bytes", n, "seconds", time.Since(start).Seconds())
	return nil
}

type exportRun struct {
	wall, user, sys time.Duration
	peakRSS         int64
	outBytes        int64
	allocated       string
}

var allocatedLine = regexp.MustCompile(`(?m)^allocated:\s+(.*)$`)

func export(ctx context.Context, o options, in, out, profile string) (*exportRun, error) {
	format := o.gen.Format
	if format == "" {
		format = gen.FormatGoldenGate
	}
	args := []string{"run", "--source", "file:" + in, "--sink", "file://" + out, "--format", format,
		"--max-buffer-bytes", strconv.FormatInt(o.budget, 10), "--log-level", "warn"}
	if profile != "" {
		args = append(args, "--cpu-profile", profile)
	}
	args = append(args, o.extraArgs...)
	cmd := exec.CommandContext(ctx, o.exporter, args...)
	var stdout strings.Builder
	cmd.Stdout = &stdout
	cmd.Stderr = os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w\n%s", o.exporter, strings.Join(args, " "), err, stdout.String())
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	r := &exportRun{wall: wall, user: cmd.ProcessState.UserTime(), sys: cmd.ProcessState.SystemTime(), outBytes: dirSize(out)}
	if ru != nil {
		r.peakRSS = ru.Maxrss << 10 // KiB on Linux
	}
	if m := allocatedLine.FindStringSubmatch(stdout.String()); m != nil {
		r.allocated = m[1]
	}
	return r, nil
}

// check compares, as multisets, (table, pos, op, key, one value column)
// of every DML record DuckDB reads from the input with every row the
// exporter wrote: each change exactly once, in the right table, with its
// values.
func check(ctx context.Context, db *sql.DB, w io.Writer, format, in, lake string) error {
	src := fmt.Sprintf(`
  SELECT qual_table AS tbl, pos, op_type AS op,
         CAST(coalesce(after->>'ID', before->>'ID') AS BIGINT) AS id,
         CASE WHEN op_type = 'DELETE' THEN NULL ELSE after->>'C1_s' END AS c1
  FROM read_json('%s', format='newline_delimited', maximum_object_size=16777216,
       columns={qual_table: 'VARCHAR', op_type: 'VARCHAR', pos: 'VARCHAR', before: 'JSON', after: 'JSON'})
  WHERE op_type IN ('INSERT','UPDATE','DELETE','UPSERT')`, in)
	if format == gen.FormatQlik {
		// The row is data (the deleted row for a DELETE, as gen writes it).
		src = fmt.Sprintf(`
  SELECT "schema" || '.' || "table" AS tbl, headers->>'streamPosition' AS pos, headers->>'operation' AS op,
         CAST(data->>'ID' AS BIGINT) AS id,
         CASE WHEN headers->>'operation' = 'DELETE' THEN NULL ELSE data->>'C1_s' END AS c1
  FROM read_json('%s', format='newline_delimited', maximum_object_size=16777216,
       columns={"schema": 'VARCHAR', "table": 'VARCHAR', headers: 'JSON', data: 'JSON'})
  WHERE headers IS NOT NULL`, in)
	}
	q := fmt.Sprintf(`
WITH src AS (%s),
lake AS (
  SELECT regexp_extract(filename, '([^/]+)/schema_version=', 1) AS tbl, pos, op_type AS op,
         CAST(ID AS BIGINT) AS id,
         CASE WHEN op_type = 'DELETE' THEN NULL ELSE C1_s END AS c1
  FROM read_parquet('%s/*/schema_version=*/**/*.parquet', union_by_name=true, filename=true, hive_partitioning=false))
SELECT (SELECT count(*) FROM src), (SELECT count(*) FROM lake),
       (SELECT count(*) FROM (SELECT * FROM src EXCEPT ALL SELECT * FROM lake)),
       (SELECT count(*) FROM (SELECT * FROM lake EXCEPT ALL SELECT * FROM src))`, src, lake)
	var nsrc, nlake, missing, extra int64
	if err := db.QueryRowContext(ctx, q).Scan(&nsrc, &nlake, &missing, &extra); err != nil {
		return fmt.Errorf("row-for-row check: %w", err)
	}
	fmt.Fprintf(w, "check: input %d DML records, lake %d rows, %d missing or different, %d extra\n", nsrc, nlake, missing, extra)
	if nsrc == 0 || missing != 0 || extra != 0 {
		return fmt.Errorf("the lake in %s does not hold exactly the input's changes", lake)
	}
	return nil
}

func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(d.Name(), ".parquet") {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// lockWork holds the work folder for one run: two runs in one folder
// would delete and rewrite each other's outputs (lake/, duckdb/) while the
// other measures or checks them.
func lockWork(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("another bench run is using %s (%v): wait for it, or give this one its own -work folder", dir, err)
	}
	return func() { f.Close() }, nil
}
